"""Building trial requests and running them in-process for the generator's tests, and
the generator as a process of its own."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx

from plimsoll.api.trial import CONTROL_TOKEN_ENV, TrialRequest, TrialResult
from plimsoll.shared import histogram
from plimsoll_generator.floor import FloorProcess
from plimsoll_generator.trial import run_trial

TEST_TOKEN = "generator-test-token"  # what the tests' generators expect


def request(url: str, workload: dict[str, Any], **fields: Any) -> TrialRequest:
    body: dict[str, Any] = {"level": 100, "duration": 1, "targetUrl": url, "workload": workload}
    body.update(fields)
    return TrialRequest.model_validate(body)


async def run(
    req: TrialRequest, abort_after: float | None = None, floor: FloorProcess | None = None
) -> TrialResult:
    abort = asyncio.Event()
    if abort_after is not None:
        asyncio.get_running_loop().call_later(abort_after, abort.set)
    return await run_trial(req, "t", abort, floor=floor)


def p(result: TrialResult, op: str, quantile: float) -> float:
    value = histogram.quantile_ms(histogram.decode(result.operations[op].latency), quantile)
    assert value is not None
    return value


@contextlib.contextmanager
def generator_process(processes: int, env: dict[str, str] | None = None) -> Iterator[str]:
    """`python -m plimsoll_generator` on a free port of 127.0.0.1, as the platforms start
    it (with a control token, `TEST_TOKEN` unless `env` sets another); its URL once
    /healthz answers. Stopped on exit."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [sys.executable, "-m", "plimsoll_generator", "--host", "127.0.0.1"]
    command += ["--port", str(port), "--processes", str(processes)]
    base = {**os.environ, "PYTHONWARNINGS": "ignore", CONTROL_TOKEN_ENV: TEST_TOKEN}
    proc = subprocess.Popen(command, env={**base, **(env or {})})
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)
