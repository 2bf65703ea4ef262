"""Fixtures: the mock in-process on an ephemeral loopback port, or as a real process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from plimsoll.api.upstream import Upstream
from plimsoll_mock.server import Running, start


@pytest.fixture
async def mock_server() -> AsyncIterator[Callable[..., Any]]:
    """`await mock_server(config_dict)` -> a running in-process mock; stopped at teardown."""
    started: list[Running] = []

    async def run(config: dict[str, Any], seed: int | None = 7) -> Running:
        running = await start(Upstream.model_validate(config), "127.0.0.1", 0, seed=seed)
        started.append(running)
        return running

    yield run
    for running in started:
        await running.shutdown(grace=0.5)
        await running.server.wait_closed()


def base_url(running: Running) -> str:
    return f"http://127.0.0.1:{running.port}"


class MockProcess:
    """`python -m plimsoll_mock` as the runner starts it."""

    def __init__(
        self, config: dict[str, Any], tmp: Path, *extra: str, env: dict[str, str] | None = None
    ) -> None:
        path = tmp / "mock.json"
        path.write_text(json.dumps(config))
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        args = [
            sys.executable,
            "-m",
            "plimsoll_mock",
            "--config",
            str(path),
            "--port",
            str(self.port),
            "--host",
            "127.0.0.1",
            *extra,
        ]
        self.proc = subprocess.Popen(
            args, stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})}
        )

    def wait_healthy(self, scheme: str = "http", verify: Any = True) -> None:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(
                    f"mock exited: {self.proc.stderr.read() if self.proc.stderr else ''}"
                )
            try:
                url = f"{scheme}://127.0.0.1:{self.port}/healthz"
                if httpx.get(url, verify=verify, timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.05)
        raise AssertionError("mock did not become healthy within 10 s")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(5)
        if self.proc.stderr:
            self.proc.stderr.close()


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def mock_process(tmp_path: Path) -> Iterator[Callable[..., MockProcess]]:
    procs: list[MockProcess] = []

    def run(config: dict[str, Any], *extra: str, env: dict[str, str] | None = None) -> MockProcess:
        proc = MockProcess(config, tmp_path, *extra, env=env)
        procs.append(proc)
        return proc

    yield run
    for proc in procs:
        proc.stop()
