"""Prometheus's HTTP API through prometheus-api-client, over a hardened requests.Session.

`PrometheusSource` asks through `PrometheusAPI`. The URL is one the operator allows,
but what answers there is not trusted, so the session the client is given:

- follows no redirect (`max_redirects = 0`, and a 3xx is refused before requests
  would look at it). Following one would let whatever answers at an allowed URL aim
  the operator at any address it can reach (cloud metadata, the API server), which is
  what the URL allow-list exists to prevent;
- never quotes a failed answer's body. A proxy, a login page or a wrong server puts
  whatever it likes there (tokens, internal pages), and the message lands in
  `status.steps[].reasons`, Events and the report. A failure names the URL (its
  credentials redacted), the status code and, at most, Prometheus's own `errorType`
  when it is one of the words its API defines. The refusal is raised from the
  session's response hook, so the library's own error (which quotes the body) is
  never built;
- reads an answer at most `MAX_ANSWER_BYTES` far, while it streams;
- ignores the environment (proxies, .netrc): the allow-listed URL is the one asked.

requests blocks, so every call runs in a worker thread (`asyncio.to_thread`, the
event loop's default executor). A `PrometheusSource` asks one query at a time, so
each source holds at most one of those threads. Retries are the source's own
(bounded by `metrics.retryFor`); the client's are off.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Mapping
from typing import Any

import requests
from prometheus_api_client import PrometheusConnect
from urllib3.util.retry import Retry

from plimsoll.api.urls import redact_url

# The errorType values of Prometheus's HTTP API: only these words are ever shown.
PROMETHEUS_ERROR_TYPES = frozenset(
    {"bad_data", "timeout", "canceled", "execution", "internal", "unavailable", "not_found"}
)
# A query answer for one series is a few hundred bytes; this is generous for the
# spacing probe's range vectors and still stops a hostile endpoint from filling memory.
MAX_ANSWER_BYTES = 16 << 20
_CHUNK = 64 << 10


class PrometheusHTTPError(Exception):
    """An answer that is not a Prometheus result; `temporary` when asking again may help.

    Not a RuntimeError: requests swallows those while it drains a redirect."""

    def __init__(self, reason: str, *, temporary: bool) -> None:
        super().__init__(reason)
        self.reason, self.temporary = reason, temporary


def _where(response: requests.Response) -> str:
    url = response.url.split("?", 1)[0]
    return redact_url(url)


class _BoundedRaw:
    """Stands in for urllib3's response under `Response.raw`: the same stream, cut off
    with a refusal once it has passed `limit` bytes."""

    def __init__(self, raw: Any, limit: int, where: str) -> None:
        self._raw, self._limit, self._where = raw, limit, where

    def stream(self, amount: int = _CHUNK, decode_content: bool | None = None) -> Iterator[bytes]:
        size = 0
        for chunk in self._raw.stream(amount, decode_content=decode_content):
            size += len(chunk)
            if size > self._limit:
                self._raw.close()
                raise PrometheusHTTPError(
                    f"Prometheus at {self._where} answered more than {self._limit >> 20} MiB",
                    temporary=False,
                )
            yield chunk

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


def _guard(response: requests.Response, *args: Any, **kwargs: Any) -> requests.Response:
    """The session's response hook: bound the body, refuse redirects and failures."""
    where = _where(response)
    response.raw = _BoundedRaw(response.raw, MAX_ANSWER_BYTES, where)
    code = response.status_code
    if 300 <= code < 400:
        response.close()
        raise PrometheusHTTPError(
            f"Prometheus at {where} answered HTTP {code}, a redirect, which is not "
            "followed: configure the address it points to",
            temporary=False,
        )
    if code != 200:
        kind = _error_type(_json_or_none(response.content))
        raise PrometheusHTTPError(
            f"Prometheus at {where} answered HTTP {code}{kind}",
            temporary=code >= 500 or code == 429,
        )
    return response


def hardened_session() -> requests.Session:
    """A session that follows no redirect, bounds every answer and quotes no body."""
    session = requests.Session()
    session.max_redirects = 0
    session.trust_env = False
    session.hooks["response"].append(_guard)
    return session


class PrometheusAPI:
    """One Prometheus server's query and config endpoints, off the event loop."""

    def __init__(self, url: str, *, timeout: float) -> None:
        self.url = url.rstrip("/")
        self._session = hardened_session()
        self._timeout = timeout
        # No retries in the transport: the source retries, bounded and visibly.
        no_retries = Retry(total=0, redirect=0, raise_on_redirect=False, raise_on_status=False)
        self._client = PrometheusConnect(
            self.url, session=self._session, retry=no_retries, timeout=timeout
        )

    async def instant(self, query: str, at: float | None = None) -> list[dict[str, Any]]:
        """The result list of an instant query at `at` (unix seconds; None: the server's now)."""
        where = redact_url(self.url) + "/api/v1/query"
        params = {} if at is None else {"time": f"{at:.3f}"}
        result = await self._off_loop(where, self._client.custom_query, query, params=params)
        if not isinstance(result, list):
            raise PrometheusHTTPError(
                f"Prometheus at {redact_url(self.url)} answered without a result list",
                temporary=False,
            )
        return result

    async def config_yaml(self) -> str:
        """The server's configuration file, as /api/v1/status/config returns it."""
        where = redact_url(self.url) + "/api/v1/status/config"
        data = await self._off_loop(where, self._get_data, "/api/v1/status/config")
        if not isinstance(data, dict) or not isinstance(data.get("yaml"), str):
            raise PrometheusHTTPError(f"Prometheus at {where} sent no config", temporary=False)
        return str(data["yaml"])

    def _get_data(self, path: str) -> Any:
        # The client has no call for this endpoint: the same hardened session asks.
        response = self._session.get(self.url + path, timeout=self._timeout)
        return response.json()["data"]

    async def _off_loop(self, where: str, call: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return await asyncio.to_thread(call, *args, **kwargs)
        except PrometheusHTTPError:
            raise
        except requests.TooManyRedirects as exc:  # the hook refuses first; this is the belt
            raise PrometheusHTTPError(
                f"Prometheus at {where} answered a redirect, which is not followed",
                temporary=False,
            ) from exc
        except (
            requests.ConnectionError,
            requests.Timeout,
            requests.exceptions.ChunkedEncodingError,
        ) as exc:
            raise PrometheusHTTPError(
                f"Prometheus at {redact_url(self.url)} unreachable: {type(exc).__name__}",
                temporary=True,
            ) from exc
        except (requests.RequestException, ValueError, KeyError, TypeError) as exc:
            # A 200 that is not a Prometheus answer (HTML, other JSON): named, not quoted.
            raise PrometheusHTTPError(
                f"Prometheus at {where} answered HTTP 200 with something that is not a "
                "Prometheus API answer: check the URL",
                temporary=False,
            ) from exc


def _json_or_none(body: bytes) -> Any:
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


def _error_type(answer: Mapping[str, Any] | Any) -> str:
    kind = answer.get("errorType") if isinstance(answer, dict) else None
    return f" ({kind})" if kind in PROMETHEUS_ERROR_TYPES else ""
