"""`spec.notify` against the real API server and a receiver this test starts on loopback:
the URL read from a labelled Secret, the CloudEvent and the Slack text delivered (after a
503, retried), and each refusal a warning that names the Secret key, never the URL."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from plimsoll.api.env_source import CONSENT_LABEL
from plimsoll.api.notify import NotifyOn, Webhook
from plimsoll.api.status import CapacityTestStatus, Ceiling, Phase
from plimsoll.controller.notify import Policy, notify
from plimsoll.decide.notifications import CLOUDEVENTS_CONTENT_TYPE, Verdicts, notices
from plimsoll.kube.client import KubeClient
from plimsoll.kube.session import configuration
from tests.controller.apiserver_fixtures import ApiServer

pytestmark = pytest.mark.slow
TOKEN = "T000/B000/s3cr3t-token"  # the part of a webhook URL that is the credential


class Receiver:
    """An HTTP receiver on 127.0.0.1: answers 503 to the first `failures` POSTs, then 200."""

    def __init__(self, failures: int = 0) -> None:
        self.failures = failures
        self.received: list[tuple[str, str, Any]] = []  # path, content type, JSON body
        self.attempts = 0
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                receiver.attempts += 1
                if receiver.attempts <= receiver.failures:
                    self.send_response(503)
                else:
                    receiver.received.append(
                        (self.path, self.headers["content-type"], json.loads(body))
                    )
                    self.send_response(200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/{TOKEN}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    started = Receiver(failures=1)
    try:
        yield started
    finally:
        started.close()


async def _secret(apiserver: ApiServer, name: str, url: str, labelled: bool = True) -> None:
    labels = {CONSENT_LABEL: "true"} if labelled else {}
    body = {
        "metadata": {"name": name, "labels": labels},
        "data": {"url": base64.b64encode(url.encode()).decode()},
    }
    await apiserver.api.create(f"/api/v1/namespaces/{apiserver.namespace}/secrets", body)


def _client(apiserver: ApiServer) -> KubeClient:
    ca, cert, key = apiserver.plane.credentials()
    return KubeClient(
        configuration(
            apiserver.plane.server, ca_file=str(ca), cert_file=str(cert), key_file=str(key)
        )
    )


def _ended() -> CapacityTestStatus:
    return CapacityTestStatus(
        phase=Phase.SUCCEEDED,
        run_id="1a2b3c4d",
        message="ceiling 900 rps",
        ceiling=Ceiling(level=900, unit="rps", complete=True),
    )


def _hook(secret: str, fmt: str = "cloudevents") -> Webhook:
    return Webhook.model_validate({"urlFrom": {"name": secret, "key": "url"}, "format": fmt})


async def _send(apiserver: ApiServer, webhooks: list[Webhook], policy: Policy) -> list[str]:
    warnings: list[str] = []

    async def warn(message: str) -> None:
        warnings.append(message)

    found = notices(Verdicts(phase=Phase.RUNNING), _ended(), apiserver.namespace, "api")
    client = _client(apiserver)
    try:
        await notify(client, apiserver.namespace, webhooks, found, policy, warn)
    finally:
        await client.aclose()
    return warnings


async def test_the_cloud_event_and_the_slack_text_reach_the_receiver(
    apiserver: ApiServer, receiver: Receiver
) -> None:
    await _secret(apiserver, "hooks", receiver.url)
    policy = Policy(allowed_hosts={"127.0.0.1"}, backoff=0.05)  # loopback, allow-listed
    warnings = await _send(apiserver, [_hook("hooks"), _hook("hooks", "slack")], policy)
    assert warnings == []
    assert receiver.attempts == 3  # the first answered 503 and was retried
    (path, kind, event), (_, slack_kind, slack) = receiver.received
    assert path == f"/hooks/{TOKEN}"
    assert kind == CLOUDEVENTS_CONTENT_TYPE
    assert event["type"] == "dev.plimsoll.capacitytest.succeeded"
    assert event["subject"] == f"{apiserver.namespace}/api"
    assert event["data"]["ceiling"] == 900
    assert slack_kind == "application/json"
    assert slack == {
        "text": f":white_check_mark: CapacityTest {apiserver.namespace}/api succeeded: "
        "ceiling 900 rps"
    }


async def test_loopback_is_refused_unless_the_admin_allows_it(
    apiserver: ApiServer, receiver: Receiver
) -> None:
    await _secret(apiserver, "hooks", receiver.url)
    [warning] = await _send(apiserver, [_hook("hooks")], Policy(backoff=0.05))
    assert "spec.notify[0].urlFrom" in warning
    assert "loopback" in warning
    assert TOKEN not in warning
    assert receiver.attempts == 0


async def test_an_unlabelled_or_missing_secret_is_named_and_nothing_is_sent(
    apiserver: ApiServer, receiver: Receiver
) -> None:
    await _secret(apiserver, "private", receiver.url, labelled=False)
    policy = Policy(allowed_hosts={"127.0.0.1"}, backoff=0.05)
    missing = _hook("absent")
    only_failed = Webhook.model_validate(
        {"urlFrom": {"name": "absent", "key": "url"}, "on": [NotifyOn.FAILED]}
    )
    warnings = await _send(apiserver, [_hook("private"), missing, only_failed], policy)
    assert len(warnings) == 2  # the third wants Failed only: nothing to send, nothing read
    assert f"not labelled {CONSENT_LABEL}=true" in warnings[0]
    assert "Secret" in warnings[1]
    assert "does not exist" in warnings[1]
    assert all(TOKEN not in w for w in warnings)
    assert receiver.attempts == 0
