"""What the Prometheus source refuses: redirects, answers past the cap, quoting what answered.

Real loopback HTTP servers play an allowed URL that redirects elsewhere (to a second
server that counts whether it is asked) and one that fails with a body holding
secrets. The source talks to them over real HTTP, as to Prometheus.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta

import pytest

from plimsoll.metrics.prometheus import PrometheusSource
from plimsoll.metrics.prometheus_http import MAX_ANSWER_BYTES, hardened_session
from plimsoll.metrics.promql import Selector
from plimsoll.metrics.source import Window

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
WINDOW = Window(T0, T0 + timedelta(seconds=10))
SECRET = "AKIAIOSFODNN7EXAMPLE aws_secret_access_key=wJalrXUtnFEMI/K7MDENG"
SUCCESS = {"status": "success", "data": {"resultType": "vector", "result": []}}


class Server:
    """Answers every request with `answer(path)`: status line, extra headers, body."""

    def __init__(self, answer: Callable[[str], tuple[str, str, bytes]]) -> None:
        self.answer, self.url = answer, ""
        self.paths: list[str] = []
        self.heads: list[str] = []

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).decode()
        path = head.split(" ", 2)[1]
        self.heads.append(head)
        self.paths.append(path)
        status, headers, body = self.answer(path)
        writer.write(
            f"HTTP/1.1 {status}\r\n{headers}Content-Length: {len(body)}\r\n"
            "Connection: close\r\n\r\n".encode()
            + body
        )
        await writer.drain()
        writer.close()


@asynccontextmanager
async def serving(answer: Callable[[str], tuple[str, str, bytes]]) -> AsyncIterator[Server]:
    server = Server(answer)
    listener = await asyncio.start_server(server.serve, "127.0.0.1", 0)
    server.url = f"http://127.0.0.1:{listener.sockets[0].getsockname()[1]}"
    try:
        yield server
    finally:
        listener.close()
        await listener.wait_closed()


async def no_sleep(_: float) -> None:
    return None


def source(url: str) -> PrometheusSource:
    return PrometheusSource(
        url,
        {"target": Selector("ns")},
        scrape_interval=1.0,
        attempts=2,
        clock=lambda: WINDOW.end.timestamp() + 60,
        sleep=no_sleep,
    )


async def first_refusal(url: str) -> str:
    """The target's first missing figure, as `usage` words it: every query meets the same
    answer, so the first one says what the source made of it. A refusal that may pass
    would be retried and end in "after 2 attempts"; one that may not is said as it is."""
    usage = (await source(url).usage(WINDOW))["target"]
    assert usage.missing
    return usage.missing[0]


def said_once(reason: str, refusal: str) -> bool:
    """`refusal` is `reason` for one query, not retried."""
    return refusal.startswith(f"{reason} (query: ") and "attempts" not in refusal


@pytest.mark.parametrize("status", ["301 Moved Permanently", "302 Found", "307 Temporary"])
async def test_a_redirect_is_an_error_naming_the_url_and_is_not_followed(status: str) -> None:
    async with serving(lambda _: ("200 OK", "", json.dumps(SUCCESS).encode())) as elsewhere:
        redirect = f"Location: {elsewhere.url}/api/v1/query?query=up\r\n"
        async with serving(lambda _: (status, redirect, b"")) as allowed:
            usage = (await source(allowed.url).usage(WINDOW))["target"]
    assert elsewhere.paths == []  # never asked: the redirect was not followed
    code = status.split()[0]
    assert usage.missing
    assert said_once(
        f"Prometheus at {allowed.url}/api/v1/query answered HTTP {code}, a redirect, "
        "which is not followed: configure the address it points to",
        usage.missing[0],
    )
    assert all(f"answered HTTP {code}, a redirect" in m for m in usage.missing)
    # Not retried: one ask per query, nothing after the refusal repeats it needlessly.
    assert len(allowed.paths) == len(usage.queries)


async def test_an_error_body_is_never_echoed_only_the_code_and_url() -> None:
    body = json.dumps(
        {"status": "error", "errorType": "internal", "error": SECRET, "data": SECRET}
    ).encode()
    async with serving(lambda _: ("500 Internal Server Error", "", body)) as failing:
        usage = (await source(failing.url).usage(WINDOW))["target"]
    assert usage.missing
    for reason in usage.missing:
        assert SECRET[:20] not in reason
        assert "wJalr" not in reason
        assert f"Prometheus at {failing.url}/api/v1/query answered HTTP 500 (internal)" in reason


async def test_a_non_prometheus_error_type_or_an_html_page_is_not_quoted() -> None:
    page = f"<html><body>login: {SECRET}</body></html>".encode()
    made_up = json.dumps({"status": "error", "errorType": SECRET}).encode()
    async with serving(lambda _: ("403 Forbidden", "", page)) as html:
        forbidden = await first_refusal(html.url)
    async with serving(lambda _: ("400 Bad Request", "", made_up)) as odd:
        bad = await first_refusal(odd.url)
    assert said_once(f"Prometheus at {html.url}/api/v1/query answered HTTP 403", forbidden)
    assert said_once(f"Prometheus at {odd.url}/api/v1/query answered HTTP 400", bad)


async def test_credentials_in_the_url_are_sent_but_never_shown() -> None:
    async with serving(lambda _: ("500 Internal Server Error", "", b"{}")) as failing:
        url = failing.url.replace("http://", "http://reader:s3cret-pass@")
        failed = await first_refusal(url)
    sent = base64.b64encode(b"reader:s3cret-pass").decode()
    assert f"\r\nAuthorization: Basic {sent}\r\n" in failing.heads[0]
    assert "s3cret" not in failed
    assert failed.startswith("Prometheus at http://***@127.0.0.1:")


async def test_an_answer_past_the_cap_is_refused_while_it_streams() -> None:
    # A 200 whose body never ends within the cap: valid JSON at first, then padding.
    huge = b'{"status": "success", "data": {"result": [' + b" " * (MAX_ANSWER_BYTES + 1) + b"]}}"
    async with serving(lambda _: ("200 OK", "", huge)) as flooding:
        refused = await first_refusal(flooding.url)
    assert said_once(
        f"Prometheus at {flooding.url}/api/v1/query answered more than 16 MiB", refused
    )


def test_the_session_follows_no_redirect_and_ignores_the_environment() -> None:
    session = hardened_session()
    assert session.max_redirects == 0
    assert not session.trust_env


async def test_an_answer_that_is_not_prometheus_is_named_not_quoted() -> None:
    page = f"<html>{SECRET}</html>".encode()
    async with serving(lambda _: ("200 OK", "", page)) as wrong:
        refused = await first_refusal(wrong.url)
    assert "wJalr" not in refused
    assert said_once(
        f"Prometheus at {wrong.url}/api/v1/query answered HTTP 200 with something that is "
        "not a Prometheus API answer: check the URL",
        refused,
    )
