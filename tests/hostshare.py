"""Two tests at once where that changes nothing they judge (`make test` runs `pytest -n 2`).

Much of the suite's wall time is waiting: a real API server admitting objects, an
operator polling, a Prometheus scraping every 15 s. Two such tests can share the
machine. A test that judges CPU, latency or a ceiling measured on this host cannot:
a second test beside it is exactly the busy host that makes its steps noisy. So every
test runs alone unless it is marked `overlaps`, and under pytest-xdist the workers
agree through two file locks in the session's shared temporary folder:

- `host.lock`: a test that overlaps holds it shared, any other test exclusively;
- `host.gate`: taken in turn before `host.lock`, so a test waiting to run alone is
  not starved by a stream of overlapping tests on the other worker.

Without xdist (`pytest tests/...` by hand) there is one test at a time anyway and no
lock is taken.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

OVERLAPS = "overlaps"


def under_xdist() -> bool:
    return "PYTEST_XDIST_WORKER" in os.environ


def shared_folder(factory: pytest.TempPathFactory) -> Path:
    """The folder all workers of this session share: each worker's base temp is a child."""
    return factory.getbasetemp().parent


@contextmanager
def host_share(folder: Path, *, alone: bool) -> Iterator[None]:
    with open(folder / "host.gate", "a") as gate, open(folder / "host.lock", "a") as lock:
        fcntl.flock(gate, fcntl.LOCK_EX)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        finally:
            fcntl.flock(gate, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


@contextmanager
def alone_on_host(factory: pytest.TempPathFactory) -> Iterator[None]:
    """For heavy set-up outside any test (a control plane's start, an image build)."""
    if not under_xdist():
        yield
        return
    with host_share(shared_folder(factory), alone=True):
        yield
