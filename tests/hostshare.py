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

The lock is taken around a test's whole protocol (tests/conftest.py,
`pytest_runtest_protocol`): its set-up, module and session fixtures included, which
pytest builds before any function fixture could take it. Heavy set-up inside an
overlapping test (a control plane's cold start, an image build) asks for the host
alone with `alone_on_host`: the shared hold is given up, the host taken alone for the
block, and the shared hold taken again after it. flock locks belong to an open file,
so this process must never ask for the lock on a second open file while it holds the
first: it would wait for itself. `_held` is this process's one hold.

Each test's time waiting for the lock and time holding the host go to a ledger in the
shared folder (one JSON line each, `HostTime`); the controller prints the largest at
the end of the session (`ledger_summary`), apart from each other: `--durations`
counts the wait as the test's own time.

Without xdist (`pytest tests/...` by hand, `make truth`) there is one test at a time
anyway and no lock is taken; the ledger still records the held times.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO

import pytest

OVERLAPS = "overlaps"
LEDGER = "host-time.jsonl"


def under_xdist() -> bool:
    return "PYTEST_XDIST_WORKER" in os.environ


def shared_folder(factory: pytest.TempPathFactory) -> Path:
    """The folder all workers of this session share: each worker's base temp is a child."""
    return factory.getbasetemp().parent


def ledger_folder(factory: pytest.TempPathFactory) -> Path:
    """Where this session's ledger lives: the folder the workers share, or without xdist
    the session's own base temp (its parent is shared by every session of this user)."""
    return shared_folder(factory) if under_xdist() else factory.getbasetemp()


@dataclass
class _Hold:
    folder: Path
    alone: bool
    lock: IO[str]
    waited: float = 0.0


_held: _Hold | None = None


def _acquire(folder: Path, *, alone: bool) -> tuple[IO[str], float]:
    """Take the lock through the gate; the open lock file and the seconds waited."""
    asked = time.monotonic()
    lock = open(folder / "host.lock", "a")  # noqa: SIM115 - held past this function
    with open(folder / "host.gate", "a") as gate:
        fcntl.flock(gate, fcntl.LOCK_EX)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        finally:
            fcntl.flock(gate, fcntl.LOCK_UN)
    return lock, time.monotonic() - asked


def _release(lock: IO[str]) -> None:
    fcntl.flock(lock, fcntl.LOCK_UN)
    lock.close()


@contextmanager
def host_share(folder: Path, *, alone: bool) -> Iterator[_Hold]:
    """Hold the host, alone or shared, for the block; the hold says how long it waited."""
    lock, waited = _acquire(folder, alone=alone)
    hold = _Hold(folder, alone, lock, waited)
    try:
        yield hold
    finally:
        _release(hold.lock)  # the lock file of now: alone_on_host may have swapped it


@contextmanager
def hold_for_test(folder: Path, *, alone: bool) -> Iterator[_Hold]:
    """A test's hold on the host, the one this process has (see `alone_on_host`)."""
    global _held
    assert _held is None, "this process already holds the host: use alone_on_host inside"
    with host_share(folder, alone=alone) as hold:
        _held = hold
        try:
            yield hold
        finally:
            _held = None


@contextmanager
def alone_on_host(factory: pytest.TempPathFactory) -> Iterator[None]:
    """For heavy set-up (a control plane's start, an image build, a capture): the host
    alone for the block, whatever the test around it holds."""
    if not under_xdist() or (_held is not None and _held.alone):
        yield
        return
    if _held is None:  # outside any test: a session fixture's own teardown
        with host_share(shared_folder(factory), alone=True):
            yield
        return
    hold = _held
    _release(hold.lock)  # shared -> alone: give the shared hold up first (see above)
    hold.lock, waited = _acquire(hold.folder, alone=True)
    hold.waited += waited
    try:
        yield
    finally:
        _release(hold.lock)
        hold.lock, waited = _acquire(hold.folder, alone=False)
        hold.waited += waited


@dataclass(frozen=True)
class HostTime:
    """One test's share of the host: what the ledger holds, a JSON line each."""

    nodeid: str
    alone: bool
    waited_s: float
    held_s: float
    # When it asked for the host (epoch seconds): with two workers' lines side by side,
    # where one ran a shared test while the other waited to run alone.
    asked_at: float = 0.0


def record(folder: Path, entry: HostTime) -> None:
    # One short append a test: whole lines from two workers do not interleave.
    with open(folder / LEDGER, "a") as ledger:
        ledger.write(json.dumps(asdict(entry)) + "\n")


def read_ledger(folder: Path) -> list[HostTime]:
    path = folder / LEDGER
    if not path.exists():
        return []
    return [HostTime(**json.loads(line)) for line in path.read_text().splitlines() if line]


def ledger_summary(entries: list[HostTime], *, wall_s: float, largest: int = 10) -> list[str]:
    """The lines printed at the end of a session: totals, then the largest holders."""
    if not entries:
        return []
    held = sum(e.held_s for e in entries)
    alone = sum(e.held_s for e in entries if e.alone)
    lines = [
        f"{len(entries)} tests in {wall_s / 60:.1f} min of wall time; held the host "
        f"{held / 60:.1f} min ({alone / 60:.1f} min of it alone), waited for it "
        f"{sum(e.waited_s for e in entries) / 60:.1f} min",
        f"the {min(largest, len(entries))} largest by time held (set-up included):",
    ]
    pairing = shared_pairing(entries)
    if pairing is not None:
        paired, unpaired = pairing
        lines.insert(
            1,
            f"shared tests ran paired {paired / 60:.1f} min, unpaired {unpaired / 60:.1f} min "
            "(unpaired: the other worker idle or waiting to run alone)",
        )
    for entry in sorted(entries, key=lambda e: e.held_s, reverse=True)[:largest]:
        how = "alone" if entry.alone else "shared"
        lines.append(
            f"  {entry.held_s:7.1f} s held {how:6} {entry.waited_s:6.1f} s waited  {entry.nodeid}"
        )
    return lines


def shared_pairing(entries: list[HostTime], step: float = 0.5) -> tuple[float, float] | None:
    """Seconds of wall time in which a shared test held the host beside another shared
    test (paired), and alone with nothing else held (unpaired); None when the entries do
    not say when they asked (an old ledger). Unpaired time is what ordering can win back."""
    if not entries or any(e.asked_at <= 0 for e in entries):
        return None
    origin = min(e.asked_at for e in entries)
    slots = int((max(e.asked_at + e.waited_s + e.held_s for e in entries) - origin) / step) + 1
    shared, alone = [0] * slots, [0] * slots
    for entry in entries:
        began = entry.asked_at + entry.waited_s - origin
        counts = alone if entry.alone else shared
        for slot in range(int(began / step), int((began + entry.held_s) / step)):
            counts[slot] += 1
    paired = sum(step for s, a in zip(shared, alone, strict=True) if s >= 2)
    unpaired = sum(step for s, a in zip(shared, alone, strict=True) if s == 1 and a == 0)
    return paired, unpaired
