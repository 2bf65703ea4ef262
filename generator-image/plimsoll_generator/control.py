"""The control API the runner drives: one trial at a time over plain HTTP.

    POST   /trials        TrialRequest JSON -> 202 TrialAccepted | 409 busy | 422 invalid
    GET    /trials/{id}   TrialResult (state running until the trial ends)
    DELETE /trials/{id}   abort; answers with the partial result
    POST   /streams       StreamsHold JSON -> 200 StreamsHeld: hold streams across trials
    GET    /streams       StreamsHeld (how many are open now)
    DELETE /streams       close them all (also POST /streams/release: the operator
                          reaches generators through a pod proxy it may only GET and POST)
    GET    /healthz       200
    GET    /metrics       Prometheus text

Given a token (`PLIMSOLL_CONTROL_TOKEN`), every /trials and /streams call must carry it in the
`X-Plimsoll-Control-Token` header, compared in constant time; others get 401.
/healthz and /metrics stay open for probes and scrapers: they start nothing.

A hand-written asyncio server on httptools: the API carries a handful of calls
per trial, so a web framework would only add weight to the image.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import uuid
from typing import Any

import httptools
from pydantic import ValidationError

from plimsoll.api.streams import StreamsHold
from plimsoll.api.trial import (
    CONTROL_TOKEN_HEADER,
    TrialAccepted,
    TrialRequest,
    TrialResult,
    TrialState,
)
from plimsoll_generator.holding import HeldStreams
from plimsoll_generator.metrics import Metrics
from plimsoll_generator.workers import InProcess, ProcessPool

_REASONS = {
    200: "OK",
    202: "Accepted",
    401: "Unauthorized",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    422: "Unprocessable Entity",
    500: "Internal Server Error",
}


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

    def get(self, trial_id: str) -> TrialResult | None:
        if trial_id in self.results:
            return self.results[trial_id]
        if self.current is not None and self.current[0] == trial_id:
            return TrialResult(id=trial_id, state=TrialState.RUNNING, level=self.current[1].level)
        return None

    async def abort(self, trial_id: str) -> TrialResult | None:
        if self.current is not None and self.current[0] == trial_id:
            task = self.current[2]
            self.runner.abort()
            await asyncio.shield(task)
        return self.results.get(trial_id)


def _validation_body(exc: ValidationError, what: str = "trial request") -> dict[str, Any]:
    errors = [
        {"field": ".".join(str(p) for p in err["loc"]), "message": err["msg"]}
        for err in exc.errors(include_url=False)
    ]
    fields = ", ".join(e["field"] or "(body)" for e in errors)
    return {"error": f"invalid {what}: {fields}", "fields": errors}


_TOKEN_HEADER = CONTROL_TOKEN_HEADER.lower().encode()


class ControlProtocol(asyncio.Protocol):
    def __init__(self, trials: Trials, token: str | None = None) -> None:
        self.trials = trials
        self.token = token.encode() if token else None
        self.parser = httptools.HttpRequestParser(self)
        self.transport: asyncio.Transport | None = None
        self.url = b""
        self.body: list[bytes] = []
        self.presented = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            self._respond(400, {"error": "malformed HTTP request"}, keep=False)

    def on_url(self, url: bytes) -> None:
        self.url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        if name.lower() == _TOKEN_HEADER:
            self.presented = value

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_complete(self) -> None:
        method = self.parser.get_method().decode()
        path = httptools.parse_url(self.url).path.decode()
        body = b"".join(self.body)
        presented, self.presented = self.presented, b""
        self.url, self.body = b"", []
        keep = self.parser.should_keep_alive()
        guarded = path.startswith(("/trials", "/streams"))  # both start load
        if guarded and not self._authorized(presented):
            self._respond(401, {"error": f"missing or wrong {CONTROL_TOKEN_HEADER}"}, keep)
            return
        asyncio.get_running_loop().create_task(self._handle(method, path, body, keep))

    def _authorized(self, presented: bytes) -> bool:
        return self.token is None or hmac.compare_digest(self.token, presented)

    async def _handle(self, method: str, path: str, body: bytes, keep: bool) -> None:
        try:
            status, payload = await self._route(method, path, body)
        except Exception as exc:
            status, payload = 500, {"error": f"{type(exc).__name__}: {exc}"}
        self._respond(status, payload, keep)

    async def _route(self, method: str, path: str, body: bytes) -> tuple[int, Any]:
        trials = self.trials
        if path == "/healthz":
            return 200, {"ok": True}
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
        if path == "/streams":
            return self._streams(method, body)
        if path == "/streams/release":
            if method != "POST":
                return 405, {"error": "use POST /streams/release"}
            return 200, trials.held.release().to_wire()
        if path.startswith("/trials/"):
            trial_id = path.removeprefix("/trials/")
            if method == "GET":
                result = trials.get(trial_id)
            elif method == "DELETE":
                result = await trials.abort(trial_id)
            else:
                return 405, {"error": "use GET or DELETE on /trials/{id}"}
            if result is None:
                return 404, {"error": f"no trial {trial_id!r}"}
            return 200, result.to_wire()
        return 404, {"error": f"no route {method} {path}"}

    def _streams(self, method: str, body: bytes) -> tuple[int, Any]:
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
            return 200, held.hold(request).to_wire()
        except ValueError as exc:
            return 422, {"error": str(exc)}

    def _respond(self, status: int, payload: Any, keep: bool) -> None:
        if self.transport is None or self.transport.is_closing():
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
        if not keep:
            self.transport.close()


async def serve(host: str, port: int, processes: int, token: str | None = None) -> None:
    runner: InProcess | ProcessPool = InProcess() if processes <= 1 else ProcessPool(processes)
    trials = Trials(runner, Metrics(max(processes, 1)))
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: ControlProtocol(trials, token), host, port)
    try:
        async with server:
            await server.serve_forever()
    finally:
        trials.held.release()
        runner.close()
