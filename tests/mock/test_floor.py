"""The mock's direct-call floor process: it answers while the mock's own loop cannot, and
it never outlives the mock."""

from __future__ import annotations

import signal
import socket
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from plimsoll_mock import floor
from tests.mock.conftest import free_port

CONFIG = {"routes": [{"name": "a", "path": "/a"}]}


def gone(pid: int, within: float = 5.0) -> bool:
    """True once `pid` no longer exists (reaped, or a zombie of an exited parent)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


def floor_pid(parent: int) -> int:
    """The mock's one child process (started from a worker thread, so not listed in the
    main thread's /proc children)."""
    children = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == parent:
            children.append(int(entry.name))
    assert len(children) == 1, children
    return children[0]


def test_the_floor_answers_while_the_mock_is_stopped_and_dies_with_it(mock_process: Any) -> None:
    port = free_port()
    mock = mock_process(CONFIG, "--floor-port", str(port))
    mock.wait_healthy()
    url = f"http://127.0.0.1:{port}/floor"
    with httpx.Client(timeout=2) as client:  # one kept-alive connection, as the prober's
        assert [client.get(url).text for _ in range(3)] == ["ok\n"] * 3
        # The mock's own loop stands still (as a loop busy for 50 ms does, for longer):
        # its /healthz cannot answer, the floor still does, at once.
        mock.proc.send_signal(signal.SIGSTOP)
        try:
            with pytest.raises(httpx.TimeoutException):
                httpx.get(f"{mock.url}/healthz", timeout=0.5)
            assert client.get(url).status_code == 200
        finally:
            mock.proc.send_signal(signal.SIGCONT)
    child = floor_pid(mock.proc.pid)
    mock.proc.kill()  # however the mock ends, its floor process follows
    mock.proc.wait(5)
    assert gone(child)


def test_pipelined_requests_get_one_answer_each_in_order() -> None:
    port = free_port()
    process = floor.spawn("127.0.0.1", port)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
            sock.sendall(b"GET /floor HTTP/1.1\r\nHost: x\r\n\r\n" * 3)
            received = b""
            while received.count(b"ok\n") < 3:
                chunk = sock.recv(4096)
                assert chunk, "the floor closed the connection"
                received += chunk
        assert received == floor.RESPONSE * 3
    finally:
        floor.stop(process)
    assert process.returncode == 0


def test_a_taken_port_stops_the_mock_saying_so(mock_process: Any) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        mock = mock_process(CONFIG, "--floor-port", str(port))
        assert mock.proc.wait(10) == 1
        assert "the floor process" in (mock.proc.stderr.read() if mock.proc.stderr else "")
