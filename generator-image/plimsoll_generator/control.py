"""The control API the runner drives: one trial at a time over plain HTTP.

    POST   /trials        TrialRequest JSON -> 202 TrialAccepted | 409 busy | 422 invalid
    GET    /trials/{id}   TrialResult (state running until the trial ends)
    GET    /trials/{id}/since/{seconds}
                          the same; while running, with the timeline slices cut so far
                          that start at `seconds` or later (the live view's figures)
    DELETE /trials/{id}   abort; answers with the partial result
    POST   /streams       StreamsHold JSON -> 200 StreamsHeld: hold streams across trials
    GET    /streams       StreamsHeld (how many are open now)
    DELETE /streams       close them all (also POST /streams/release: the operator
                          reaches generators through a pod proxy it may only GET and POST)
    POST   /client-ips    ClientIpCheck JSON -> 200 ClientIpVerdict: does the target honour
                          the client-address header (asked once, before the first trial)
    GET    /clock         ClockReading: this host's wall clock, for the offset check
    GET    /healthz       200
    GET    /metrics       Prometheus text

Every /trials, /streams and /client-ips call must carry the token (`PLIMSOLL_CONTROL_TOKEN`) in the
`X-Plimsoll-Control-Token` header, compared in constant time; others get 401. Without a
token configured every such call is refused (issue 52: an open generator takes load
orders from anyone who reaches it); both platforms always set one.
/clock, /healthz and /metrics stay open for probes and scrapers: they start nothing.

Whatever reaches the port is read only so far: the request line (target) is at most
`MAX_URL_BYTES`, the headers `MAX_HEADER_BYTES` and `MAX_HEADERS` in all, the body
`MAX_BODY_BYTES` (431/413/414 and the connection closed). The token is checked as soon
as the headers are in, before a byte of the body is read, so a caller without it
cannot make the generator buffer anything. A 500 names no exception: its text may
hold paths or values the caller has no business seeing.

A hand-written asyncio server on httptools: the API carries a handful of calls
per trial, so a web framework would only add weight to the image.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import signal
import time
import uuid
from typing import Any

import httptools
from pydantic import ValidationError

from plimsoll.api.streams import StreamsHold
from plimsoll.api.trial import (
    CONTROL_TOKEN_ENV,
    CONTROL_TOKEN_HEADER,
    ClientIpCheck,
    ClockReading,
    TrialAccepted,
    TrialRequest,
    TrialResult,
    TrialState,
)
from plimsoll.api.validation_errors import field_problems
from plimsoll_generator.client_ips import check as check_client_ips
from plimsoll_generator.holding import HeldStreams
from plimsoll_generator.metrics import Metrics
from plimsoll_generator.workers import InProcess, ProcessPool

_REASONS = {
    200: "OK",
    202: "Accepted",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    413: "Content Too Large",
    414: "URI Too Long",
    422: "Unprocessable Entity",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
}

# The runner's calls are a short path, two or three headers and a TrialRequest of a few
# KiB (a workload with scripted conversations or bodies: tens of KiB); these leave room.
MAX_URL_BYTES = 2048
MAX_HEADER_BYTES = 16 * 1024
MAX_HEADERS = 64
MAX_BODY_BYTES = 4 * 2**20
# The paths that start load, hold streams or send a probe: each needs the token.
GUARDED = ("/trials", "/streams", "/client-ips")
_LINGER_SECONDS = 2.0  # how long a refused caller may go on sending before we close

_log = logging.getLogger(__name__)


class _RefusedError(Exception):
    """Raised from a parser callback to stop reading a request that is answered already."""


class Trials:
    """The one trial slot: start, look up, abort."""

    def __init__(self, runner: InProcess | ProcessPool, metrics: Metrics) -> None:
        self.runner = runner
        self.metrics = metrics
        self.held = HeldStreams()
        self.results: dict[str, TrialResult] = {}
        self.current: tuple[str, TrialRequest, asyncio.Task[None]] | None = None

    def start(self, request: TrialRequest) -> str | None:
        if self.current is not None:
            return None
        trial_id = uuid.uuid4().hex[:12]
        task = asyncio.get_running_loop().create_task(self._run(request, trial_id))
        self.current = (trial_id, request, task)
        self.metrics.running = 1
        return trial_id

    async def _run(self, request: TrialRequest, trial_id: str) -> None:
        try:
            result = await self.runner.run(request, trial_id)
        except Exception as exc:  # a dead worker must not take the API down
            result = TrialResult(
                id=trial_id,
                state=TrialState.FAILED,
                level=request.level,
                errors=[f"{type(exc).__name__}: {exc}"],
            )
        self.results[trial_id] = result
        self.metrics.finished(result)
        self.current = None

    def get(self, trial_id: str, since: float | None = None) -> TrialResult | None:
        """The result; while running, a stub, with the slices from `since` on when asked
        (what the trial measured so far; none in the warm-up)."""
        if trial_id in self.results:
            return self.results[trial_id]
        if self.current is not None and self.current[0] == trial_id:
            slices = (
                [s for s in self.runner.progress() if s.start >= since] if since is not None else []
            )
            return TrialResult(
                id=trial_id, state=TrialState.RUNNING, level=self.current[1].level, timeline=slices
            )
        return None

    async def abort(self, trial_id: str) -> TrialResult | None:
        if self.current is not None and self.current[0] == trial_id:
            task = self.current[2]
            self.runner.abort()
            await asyncio.shield(task)
        return self.results.get(trial_id)


def _validation_body(exc: ValidationError, what: str = "trial request") -> dict[str, Any]:
    problems = field_problems(exc)
    fields = ", ".join(p.field or "(body)" for p in problems)
    errors = [{"field": p.field, "message": p.message} for p in problems]
    return {"error": f"invalid {what}: {fields}", "fields": errors}


_TOKEN_HEADER = CONTROL_TOKEN_HEADER.lower().encode()


class ControlProtocol(asyncio.Protocol):
    def __init__(self, trials: Trials, token: str | None = None) -> None:
        self.trials = trials
        self.token = token.encode() if token else None
        self.parser = httptools.HttpRequestParser(self)
        self.transport: asyncio.Transport | None = None
        self.refused = False
        self._reset()

    def _reset(self) -> None:
        self.url = b""
        self.body: list[bytes] = []
        self.body_bytes = 0
        self.header_bytes = 0
        self.headers = 0
        self.declared_length = 0
        self.presented = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        if self.refused or self.transport is None or self.transport.is_closing():
            return  # refused already: what follows is dropped unread
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserCallbackError as exc:
            if not isinstance(exc.__context__, _RefusedError):
                raise
        except httptools.HttpParserError:
            self._respond(400, {"error": "malformed HTTP request"}, keep=False)

    def _refuse(self, status: int, error: str) -> None:
        """Answer, then close gently: the caller may still be sending what we will not
        read, and a plain close would reset the connection before it reads the answer."""
        self._respond(status, {"error": error}, keep=False, linger=True)
        self.refused = True
        if self.transport is not None:
            if self.transport.can_write_eof():
                self.transport.write_eof()
            asyncio.get_running_loop().call_later(_LINGER_SECONDS, self.transport.close)
        raise _RefusedError(error)

    def eof_received(self) -> bool:
        return False  # the caller is done: close

    def on_url(self, url: bytes) -> None:
        self.url += url
        if len(self.url) > MAX_URL_BYTES:
            self._refuse(414, f"the request target is longer than {MAX_URL_BYTES} bytes")

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers += 1
        self.header_bytes += len(name) + len(value)
        if self.headers > MAX_HEADERS or self.header_bytes > MAX_HEADER_BYTES:
            self._refuse(431, f"at most {MAX_HEADERS} headers of {MAX_HEADER_BYTES} bytes in all")
        lowered = name.lower()
        if lowered == _TOKEN_HEADER:
            self.presented = value
        elif lowered == b"content-length" and value.strip().isdigit():
            self.declared_length = int(value)

    def on_headers_complete(self) -> None:
        # Before the body: a caller without the token gets nothing buffered for it.
        path = httptools.parse_url(self.url).path.decode(errors="replace")
        if path.startswith(GUARDED) and not self._authorized(self.presented):
            if self.token is None:
                self._refuse(401, f"no {CONTROL_TOKEN_ENV} configured: trial calls are refused")
            self._refuse(401, f"missing or wrong {CONTROL_TOKEN_HEADER}")
        if self.declared_length > MAX_BODY_BYTES:
            self._refuse(413, f"the body is longer than {MAX_BODY_BYTES} bytes")

    def on_body(self, body: bytes) -> None:
        self.body_bytes += len(body)
        if self.body_bytes > MAX_BODY_BYTES:  # chunked bodies declare no length
            self._refuse(413, f"the body is longer than {MAX_BODY_BYTES} bytes")
        self.body.append(body)

    def on_message_complete(self) -> None:
        method = self.parser.get_method().decode()
        path = httptools.parse_url(self.url).path.decode(errors="replace")
        body = b"".join(self.body)
        self._reset()
        keep = self.parser.should_keep_alive()
        asyncio.get_running_loop().create_task(self._handle(method, path, body, keep))

    def _authorized(self, presented: bytes) -> bool:
        # No token configured: nothing is authorized (never an open API).
        return self.token is not None and hmac.compare_digest(self.token, presented)

    async def _handle(self, method: str, path: str, body: bytes, keep: bool) -> None:
        try:
            status, payload = await self._route(method, path, body)
        except Exception:
            # Logged here, where the operator of the pod reads it; the caller gets no text.
            _log.exception("control API: %s %s failed", method, path)
            status, payload = 500, {"error": f"internal error handling {method} {path}"}
        self._respond(status, payload, keep)

    async def _route(self, method: str, path: str, body: bytes) -> tuple[int, Any]:
        trials = self.trials
        if path == "/healthz":
            return 200, {"ok": True}
        if path == "/clock":  # the runner's offset check before a synchronised start
            return 200, ClockReading(unix=time.time()).to_wire()
        if path == "/metrics":
            return 200, trials.metrics.render()
        if path == "/trials":
            if method != "POST":
                return 405, {"error": "use POST /trials"}
            try:
                request = TrialRequest.model_validate_json(body)
            except ValidationError as exc:
                return 422, _validation_body(exc)
            trial_id = trials.start(request)
            if trial_id is None:
                return 409, {"error": "a trial is already running; one at a time"}
            return 202, TrialAccepted(id=trial_id).to_wire()
        if path == "/client-ips":
            if method != "POST":
                return 405, {"error": "use POST /client-ips"}
            try:
                check_request = ClientIpCheck.model_validate_json(body)
            except ValidationError as exc:
                return 422, _validation_body(exc, "client-IP check")
            return 200, (await check_client_ips(check_request)).to_wire()
        if path == "/streams":
            return await self._streams(method, body)
        if path == "/streams/release":
            if method != "POST":
                return 405, {"error": "use POST /streams/release"}
            return 200, trials.held.release().to_wire()
        if path.startswith("/trials/"):
            trial_id, asks_since, since = path.removeprefix("/trials/").partition("/since/")
            if asks_since:
                if method != "GET":
                    return 405, {"error": "use GET on /trials/{id}/since/{seconds}"}
                try:
                    start = float(since)
                except ValueError:
                    return 400, {"error": f"{since!r} is not a number of seconds"}
                result = trials.get(trial_id, since=start)
            elif method == "GET":
                result = trials.get(trial_id)
            elif method == "DELETE":
                result = await trials.abort(trial_id)
            else:
                return 405, {"error": "use GET or DELETE on /trials/{id}"}
            if result is None:
                return 404, {"error": f"no trial {trial_id!r}"}
            return 200, result.to_wire()
        return 404, {"error": f"no route {method} {path}"}

    async def _streams(self, method: str, body: bytes) -> tuple[int, Any]:
        held = self.trials.held
        if method == "GET":
            return 200, held.status().to_wire()
        if method == "DELETE":
            return 200, held.release().to_wire()
        if method != "POST":
            return 405, {"error": "use POST, GET or DELETE on /streams"}
        try:
            request = StreamsHold.model_validate_json(body)
        except ValidationError as exc:
            return 422, _validation_body(exc, "streams hold")
        try:
            return 200, (await held.hold(request)).to_wire()
        except ValueError as exc:
            return 422, {"error": str(exc)}

    def _respond(self, status: int, payload: Any, keep: bool, linger: bool = False) -> None:
        if self.refused or self.transport is None or self.transport.is_closing():
            return
        if isinstance(payload, str):
            data, kind = payload.encode(), "text/plain; version=0.0.4"
        else:
            data, kind = json.dumps(payload).encode(), "application/json"
        head = (
            f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}\r\n"
            f"Content-Type: {kind}\r\nContent-Length: {len(data)}\r\n"
            f"Connection: {'keep-alive' if keep else 'close'}\r\n\r\n"
        )
        self.transport.write(head.encode() + data)
        if not keep and not linger:
            self.transport.close()


async def serve(host: str, port: int, processes: int, token: str | None = None) -> None:
    runner: InProcess | ProcessPool = InProcess() if processes <= 1 else ProcessPool(processes)
    await runner.start()
    trials = Trials(runner, Metrics(max(processes, 1)))
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: ControlProtocol(trials, token), host, port)
    # A container's first process ignores SIGTERM unless it handles it, and the kubelet
    # then waits out the pod's grace period (30 s) before a SIGKILL: on a real node every
    # run namespace's deletion waited that long for the generator pods.
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        async with server:
            await stop.wait()
    finally:
        trials.held.release()
        await runner.close()
