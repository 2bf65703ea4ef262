"""The NetworkPolicy probe `helm test` runs (issue 52, item 5), on real sockets on
loopback: a listener on both ports reads as a policy not enforced, a denied port that
does not answer as one enforced, and a listener that never comes up as neither."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from plimsoll.cli.network_probe import (
    ENFORCED,
    INCONCLUSIVE,
    NOT_ENFORCED,
    check,
    listen,
    reachable,
)
from tests.localrun import ROOT


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def ports() -> tuple[int, int]:
    return _free_port(), _free_port()


@contextmanager
def listening(ports: list[int], seconds: float = 1.5) -> Iterator[None]:
    thread = threading.Thread(target=listen, args=(ports, seconds), daemon=True)
    thread.start()
    for port in ports:
        for _ in range(50):
            if reachable("127.0.0.1", port, timeout=0.2):
                break
    yield
    thread.join(timeout=seconds + 2)


def test_a_denied_port_that_answers_means_not_enforced(ports: tuple[int, int]) -> None:
    allowed, denied = ports
    with listening([allowed, denied]):
        code, sentence = check("127.0.0.1", allowed, denied, ready_wait=5)
    assert code == NOT_ENFORCED
    assert sentence.startswith("NetworkPolicy is NOT enforced on this cluster")


def test_a_denied_port_that_does_not_answer_means_enforced(ports: tuple[int, int]) -> None:
    allowed, denied = ports
    with listening([allowed]):
        code, sentence = check("127.0.0.1", allowed, denied, ready_wait=5)
    assert code == ENFORCED
    assert f"127.0.0.1:{denied} (denied by the same policy) did not" in sentence


def test_a_listener_that_never_answers_is_inconclusive(ports: tuple[int, int]) -> None:
    allowed, denied = ports
    code, sentence = check("127.0.0.1", allowed, denied, ready_wait=1.5)
    assert code == INCONCLUSIVE
    assert f"127.0.0.1:{allowed}, which its policy admits, did not answer" in sentence


def test_the_listener_starting_late_is_waited_for(ports: tuple[int, int]) -> None:
    """The listener's pod may start after the probe's: the probe asks again."""
    allowed, denied = ports
    answers = iter([False, False, True, False])
    code, _ = check(
        "127.0.0.1", allowed, denied, ready_wait=10, connect=lambda host, port: next(answers)
    )
    assert code == ENFORCED


def test_the_module_runs_as_the_hook_runs_it(ports: tuple[int, int]) -> None:
    allowed, denied = ports
    module = [sys.executable, "-m", "plimsoll.cli.network_probe"]
    env_path = {**os.environ, "PYTHONPATH": str(ROOT / "operator")}
    listener = subprocess.Popen(
        [*module, "listen", str(allowed), str(denied), "--seconds", "10"], env=env_path
    )
    try:
        probe = subprocess.run(
            [*module, "check", "127.0.0.1", str(allowed), str(denied), "--ready-wait", "8"],
            env=env_path,
            capture_output=True,
            text=True,
            timeout=30,
        )
    finally:
        listener.kill()
        listener.wait()
    assert probe.returncode == NOT_ENFORCED, probe.stderr
    assert "NetworkPolicy is NOT enforced" in probe.stdout
