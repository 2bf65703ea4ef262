"""A program started as a container starts it: the first process of a PID namespace of
its own (`unshare --pid --fork`), so that SIGTERM reaches it as the kubelet's does.

The kernel delivers a signal to a namespace's first process only if that process
handles it (SIGKILL and SIGSTOP from outside aside): a Python program that sets no
SIGTERM handler, which dies of SIGTERM anywhere else, ignores it there, and the kubelet
waits out the pod's grace period (30 s by default) before it kills it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from tests.generator.mockproc import wait_port


def _child_of(pid: int, limit: float = 5.0) -> int:
    """The process `unshare --fork` started: in the new namespace, its PID 1."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        if children:
            return int(children[0])
        time.sleep(0.02)
    raise AssertionError(f"unshare ({pid}) started nothing in {limit:g} s")


def seconds_to_stop_on_sigterm(
    command: Sequence[str], env: Mapping[str, str], port: int, limit: float = 10.0
) -> float | None:
    """Start `command` as the first process of its own PID namespace, wait until it
    listens on 127.0.0.1:`port`, send it SIGTERM from outside, and return how long it
    took to exit; None if it was still running after `limit` seconds (then killed)."""
    outer = subprocess.Popen(
        ["unshare", "--pid", "--fork", "--kill-child", *command],
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        first = _child_of(outer.pid)
        wait_port(port)
        sent = time.monotonic()
        os.kill(first, signal.SIGTERM)
        try:
            outer.wait(limit)
        except subprocess.TimeoutExpired:
            return None
        return time.monotonic() - sent
    finally:
        if outer.poll() is None:
            outer.kill()  # --kill-child: its child goes with it
            outer.wait(10)
