"""Process groups, readiness and log tails of the local platform, with real processes."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from pathlib import Path

import pytest

from plimsoll.platforms.base import PlatformError
from plimsoll.platforms.local.processes import ManagedProcess, free_port, port_is_free, wait_ready

# A parent that forks a grandchild which ignores SIGTERM: the group must still go.
FORKER = """
import os, signal, sys, time
if os.fork() == 0:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    print("child", os.getpid(), flush=True)
    time.sleep(60)
    sys.exit(0)
print("parent up", flush=True)
time.sleep(60)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purpose; its parent reaps it.
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().split(")")[-1].split()[0] != "Z"


async def test_stop_leaves_no_process_of_the_group(tmp_path: Path) -> None:
    process = ManagedProcess(
        "forker", [sys.executable, "-c", FORKER], dict(os.environ), tmp_path / "f.log"
    )
    await process.start()
    for _ in range(50):
        if any(line.startswith("child") for line in process.tail()):
            break
        await asyncio.sleep(0.1)
    child = int(next(line for line in process.tail() if line.startswith("child")).split()[1])
    parent = process.pid
    assert parent is not None
    assert _alive(child)
    await process.stop()
    await asyncio.sleep(0.2)
    assert not _alive(parent)
    assert not _alive(child)


async def test_early_exit_shows_the_last_log_lines(tmp_path: Path) -> None:
    script = "import sys; print('loading config'); print('fatal: no database'); sys.exit(3)"
    process = ManagedProcess(
        "target", [sys.executable, "-c", script], dict(os.environ), tmp_path / "t.log"
    )
    await process.start()
    with pytest.raises(PlatformError) as caught:
        await wait_ready(process, url=f"http://127.0.0.1:{free_port()}/healthz", within=10)
    message = str(caught.value)
    assert "exited before it was ready" in message
    assert "exit code 3" in message
    assert "fatal: no database" in message


async def test_a_missing_command_is_a_clear_error(tmp_path: Path) -> None:
    process = ManagedProcess("target", ["/nonexistent/server"], {}, tmp_path / "t.log")
    with pytest.raises(PlatformError, match="cannot run"):
        await process.start()


def test_port_in_use_is_seen() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        assert not port_is_free(port)
    assert port_is_free(port)
