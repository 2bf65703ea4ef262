"""One GET to Prometheus's HTTP API, with nothing of a failed answer echoed.

`PrometheusSource` asks through here. The URL is one the operator allows, but what
answers there is not trusted:

- A redirect is refused, not followed. Following it would let whatever answers at an
  allowed URL aim the operator at any address it can reach (cloud metadata, the API
  server), which is what the URL allow-list exists to prevent.
- A failed answer's body is never quoted. A proxy, a login page or a wrong server puts
  whatever it likes there (tokens, internal pages), and the message lands in
  `status.steps[].reasons`, Events and the report. A failure names the URL (its
  credentials redacted), the status code and, at most, Prometheus's own `errorType`
  when it is one of the words its API defines.
- An answer is read at most `MAX_ANSWER_BYTES` far.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import httpx

from plimsoll.api.urls import redact_url

# The errorType values of Prometheus's HTTP API: only these words are ever shown.
PROMETHEUS_ERROR_TYPES = frozenset(
    {"bad_data", "timeout", "canceled", "execution", "internal", "unavailable", "not_found"}
)
# A query answer for one series is a few hundred bytes; this is generous for the
# spacing probe's range vectors and still stops a hostile endpoint from filling memory.
MAX_ANSWER_BYTES = 16 << 20


class PrometheusHTTPError(Exception):
    """An answer that is not a Prometheus result; `temporary` when asking again may help."""

    def __init__(self, reason: str, *, temporary: bool) -> None:
        super().__init__(reason)
        self.reason, self.temporary = reason, temporary


async def get_data(
    client: httpx.AsyncClient, base_url: str, path: str, params: Mapping[str, str]
) -> Any:
    """The `data` member of a successful answer from `base_url + path`."""
    where = redact_url(base_url) + path
    try:
        async with client.stream("GET", base_url + path, params=params) as response:
            code = response.status_code
            if 300 <= code < 400:
                raise PrometheusHTTPError(
                    f"Prometheus at {where} answered HTTP {code}, a redirect, which is not "
                    "followed: configure the address it points to",
                    temporary=False,
                )
            body = await _read_bounded(response, where)
    except httpx.HTTPError as exc:  # connection refused, reset, timeouts
        raise PrometheusHTTPError(
            f"Prometheus at {redact_url(base_url)} unreachable: {type(exc).__name__}",
            temporary=True,
        ) from exc
    answer = _json_or_none(body)
    if code != 200:
        raise PrometheusHTTPError(
            f"Prometheus at {where} answered HTTP {code}{_error_type(answer)}",
            temporary=code >= 500 or code == 429,
        )
    if not isinstance(answer, dict) or answer.get("status") != "success" or "data" not in answer:
        raise PrometheusHTTPError(
            f"Prometheus at {where} answered HTTP 200 with something that is not a "
            "Prometheus API answer: check the URL",
            temporary=False,
        )
    return answer["data"]


async def _read_bounded(response: httpx.Response, where: str) -> bytes:
    chunks, size = [], 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            raise PrometheusHTTPError(
                f"Prometheus at {where} answered more than {MAX_ANSWER_BYTES >> 20} MiB",
                temporary=False,
            )
        chunks.append(chunk)
    return b"".join(chunks)


def _json_or_none(body: bytes) -> Any:
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


def _error_type(answer: Any) -> str:
    kind = answer.get("errorType") if isinstance(answer, dict) else None
    return f" ({kind})" if kind in PROMETHEUS_ERROR_TYPES else ""
