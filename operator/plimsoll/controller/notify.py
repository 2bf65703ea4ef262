"""Sending `spec.notify` webhooks when a run's end changed a verdict.

Called by the status sink (`OperatorSink.finished`) after the final status write, with
the changes `plimsoll.decide.notifications.notices` found. For each webhook that asked
for a change: its URL is read from the Secret key it names (in the CapacityTest's
namespace, labelled `plimsoll.dev/runs-may-read=true` as `valueFrom` Secrets are),
checked with the rules `target.url` obeys (no cloud metadata, no API server, no
loopback unless the admin allow-lists the host: `PLIMSOLL_ALLOWED_TARGET_HOSTS`), and
POSTed with retries (connection errors, 429 and 5xx; a bounded backoff), no redirects
followed. A failure is a Warning Event naming the Secret key, never the URL (a webhook
URL is a credential); it never fails the run.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import logging
import uuid
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urlsplit

import httpx

from plimsoll.api.notify import Webhook, WebhookFormat
from plimsoll.api.urls import redact_urls_in
from plimsoll.controller.events import Event, EventType
from plimsoll.controller.status import StatusWriter
from plimsoll.decide.notifications import (
    CLOUDEVENTS_CONTENT_TYPE,
    Notice,
    cloud_event,
    slack_body,
)
from plimsoll.decide.target_policy import target_host, target_url_problem
from plimsoll.kube.client import SECRETS, KubeClient, KubeError
from plimsoll.kube.consented import UnreadableSourceError, read_consented
from plimsoll.kube.grants import OperatorIdentity, bind_references_role
from plimsoll.platforms.kubernetes.admission import api_server_hosts, resolve_host

log = logging.getLogger(__name__)

ATTEMPTS = 4
NOTIFY_FAILED = "NotifyFailed"  # the Warning Event's reason
TIMEOUT = 10.0  # seconds per attempt


class NotifyError(Exception):
    """A webhook that could not be told; the message names the field, never the URL."""


@dataclass(frozen=True)
class Policy:
    """The operator's side: the API server's hosts and the hosts the admin allowed."""

    api_server_hosts: Collection[str] = ()
    allowed_hosts: Collection[str] = ()
    backoff: float = 1.0  # seconds before the second attempt, doubled after each


async def webhook_url(client: KubeClient, namespace: str, webhook: Webhook, field: str) -> str:
    ref = webhook.url_from
    what = f"{field}.urlFrom: Secret {namespace}/{ref.name}"
    try:
        found = await read_consented(client, SECRETS, namespace, ref.name, what)
    except UnreadableSourceError as exc:
        raise NotifyError(str(exc)) from exc
    encoded = (found.get("data") or {}).get(ref.key)
    if encoded is None:
        raise NotifyError(f"{what} has no key {ref.key!r}")
    try:
        return base64.b64decode(str(encoded), validate=True).decode().strip()
    except (binascii.Error, UnicodeDecodeError) as exc:
        raise NotifyError(f"{what}: the value of key {ref.key!r} is not text") from exc


async def url_problem(url: str, field: str, policy: Policy) -> str | None:
    """Why this webhook URL may not be called (the rules of target.url); None if fine."""
    shown = f"{field}.urlFrom (its value)"
    if urlsplit(url).scheme not in ("http", "https"):
        return f"{shown} is not an http(s) URL"
    host = target_host(url)
    resolved = await resolve_host(host) if host else []
    return target_url_problem(
        url, policy.api_server_hosts, policy.allowed_hosts, resolved, field=shown, shown="it"
    )


def body_of(notice: Notice, webhook: Webhook) -> tuple[bytes, str]:
    if webhook.format is WebhookFormat.SLACK:
        return json.dumps(slack_body(notice)).encode(), "application/json"
    event = cloud_event(notice, str(uuid.uuid4()), datetime.now(UTC))
    return json.dumps(event).encode(), CLOUDEVENTS_CONTENT_TYPE


async def post(url: str, body: bytes, content_type: str, field: str, policy: Policy) -> int:
    """POST with retries; the final status code, or NotifyError after the last attempt."""
    delay, last = policy.backoff, ""
    async with httpx.AsyncClient(follow_redirects=False, timeout=TIMEOUT) as http:
        for attempt in range(1, ATTEMPTS + 1):
            try:
                response = await http.post(
                    url, content=body, headers={"content-type": content_type}
                )
            except httpx.HTTPError as exc:
                last = f"{type(exc).__name__}"  # the exception's text may quote the URL
            else:
                code = response.status_code
                if code < 300:
                    return code
                if code != 429 and code < 500:
                    raise NotifyError(f"{field}: the receiver answered {code}; not retried")
                last = f"HTTP {code}"
            if attempt < ATTEMPTS:
                await asyncio.sleep(delay)
                delay *= 2
    raise NotifyError(f"{field}: not delivered after {ATTEMPTS} attempts (last: {last})")


async def notify(
    client: KubeClient,
    namespace: str,
    webhooks: Sequence[Webhook],
    found: Sequence[Notice],
    policy: Policy,
    warn: Callable[[str], Awaitable[None]],
) -> None:
    """Tell every webhook the changes it asked for; `warn` gets each failure."""
    for index, webhook in enumerate(webhooks):
        field = f"spec.notify[{index}]"
        wanted = [n for n in found if n.kind in webhook.on]
        if not wanted:
            continue
        try:
            url = await webhook_url(client, namespace, webhook, field)
            problem = await url_problem(url, field, policy)
            if problem is not None:
                raise NotifyError(problem)
            for notice in wanted:
                body, content_type = body_of(notice, webhook)
                await post(url, body, content_type, f"{field} ({notice.kind.value})", policy)
        except NotifyError as exc:
            await warn(redact_urls_in(str(exc)))
        except Exception as exc:  # a webhook never fails the run; say what, not the URL
            log.warning("%s: notification failed: %s", field, type(exc).__name__)
            await warn(f"{field}: notification failed ({type(exc).__name__})")


async def notify_test(
    writer: StatusWriter,
    webhooks: Sequence[Webhook],
    found: Sequence[Notice],
    identity: OperatorIdentity | None,
    allowed_hosts: Collection[str],
) -> None:
    """The supervisor's hook: bind the references role where the test lives (as `valueFrom`
    does), then `notify`, each failure a Warning Event on the CapacityTest."""
    if not webhooks:
        return
    client, namespace = writer.client, writer.namespace

    async def warn(message: str) -> None:
        log.warning("%s/%s: %s", namespace, writer.name, message)
        if writer.events is not None:
            await writer.events.post(Event(EventType.WARNING, NOTIFY_FAILED, message))

    try:
        await bind_references_role(client, identity, namespace)
    except KubeError as exc:
        await warn(f"spec.notify: the Secrets of {namespace} cannot be read: {exc.message}")
        return
    hosts = api_server_hosts(client.server)
    policy = Policy(api_server_hosts=hosts, allowed_hosts=allowed_hosts)
    await notify(client, namespace, webhooks, found, policy, warn)
