"""The host lock that lets `pytest -n 2` overlap only the tests that may overlap."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from tests import hostshare
from tests.hostshare import (
    HostTime,
    alone_on_host,
    hold_for_test,
    host_share,
    ledger_summary,
    read_ledger,
    record,
    shared_pairing,
)


def _holds(folder: Path, *, alone: bool, seconds: float, log: list[tuple[str, float]]) -> None:
    with host_share(folder, alone=alone):
        log.append(("in", time.monotonic()))
        time.sleep(seconds)
        log.append(("out", time.monotonic()))


def _run(folder: Path, first_alone: bool, second_alone: bool) -> tuple[float, float]:
    """When the first test left the host and when the second entered it."""
    first: list[tuple[str, float]] = []
    second: list[tuple[str, float]] = []
    a = threading.Thread(
        target=_holds, args=(folder,), kwargs={"alone": first_alone, "seconds": 0.4, "log": first}
    )
    b = threading.Thread(
        target=_holds, args=(folder,), kwargs={"alone": second_alone, "seconds": 0.4, "log": second}
    )
    a.start()
    time.sleep(0.1)  # the first holds the lock before the second asks
    b.start()
    a.join(5)
    b.join(5)
    return first[1][1], second[0][1]


def test_two_overlapping_tests_share_the_host(tmp_path: Path) -> None:
    first_out, second_in = _run(tmp_path, False, False)
    assert second_in < first_out  # the second started while the first still ran


def test_a_test_that_runs_alone_waits_for_the_other_and_is_waited_for(tmp_path: Path) -> None:
    first_out, second_in = _run(tmp_path, False, True)
    assert second_in >= first_out
    first_out, second_in = _run(tmp_path, True, False)
    assert second_in >= first_out


def test_heavy_set_up_in_an_overlapping_test_takes_the_host_alone_and_shares_again(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An overlapping test's heavy set-up waits for the other worker's test to leave,
    without waiting for its own shared hold (flock would make it wait for itself)."""
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    monkeypatch.setattr(hostshare, "_held", None)  # under xdist this test's own hold is there
    other: list[tuple[str, float]] = []
    with hold_for_test(tmp_path, alone=False) as hold:
        neighbour = threading.Thread(
            target=_holds, args=(tmp_path,), kwargs={"alone": False, "seconds": 0.4, "log": other}
        )
        neighbour.start()
        time.sleep(0.1)  # the neighbour shares the host now
        with alone_on_host(tmp_path_factory):
            entered_alone = time.monotonic()
        neighbour.join(5)
        assert hold.waited >= 0.2  # it waited for the neighbour, and that is counted
    assert entered_alone >= other[1][1]  # alone only once the neighbour had left


def test_the_summary_separates_time_held_from_time_waited() -> None:
    entries = [
        HostTime("tests/a.py::long", alone=True, waited_s=100.0, held_s=300.0),
        HostTime("tests/b.py::short", alone=False, waited_s=0.0, held_s=6.0),
        HostTime("tests/c.py::mid", alone=True, waited_s=2.0, held_s=60.0),
    ]
    lines = ledger_summary(entries, wall_s=420.0, largest=2)
    assert lines[0] == (
        "3 tests in 7.0 min of wall time; held the host 6.1 min (6.0 min of it alone), "
        "waited for it 1.7 min"
    )
    assert lines[1] == "the 2 largest by time held (set-up included):"
    assert "300.0 s held alone" in lines[2]
    assert lines[2].endswith("tests/a.py::long")
    assert "100.0 s waited" in lines[2]
    assert lines[3].endswith("tests/c.py::mid")
    assert len(lines) == 4


def test_the_summary_says_how_long_shared_tests_ran_paired_and_unpaired() -> None:
    # a and b share the host for 10 s; b goes on alone 20 s more; c runs alone after.
    entries = [
        HostTime("tests/a.py::x", alone=False, waited_s=0.0, held_s=10.0, asked_at=1000.0),
        HostTime("tests/b.py::y", alone=False, waited_s=0.0, held_s=30.0, asked_at=1000.0),
        HostTime("tests/c.py::z", alone=True, waited_s=25.0, held_s=5.0, asked_at=1010.0),
    ]
    assert shared_pairing(entries) == (10.0, 20.0)
    lines = ledger_summary(entries, wall_s=40.0, largest=1)
    assert lines[1] == (
        "shared tests ran paired 0.2 min, unpaired 0.3 min "
        "(unpaired: the other worker idle or waiting to run alone)"
    )
    # A ledger without the times asked says nothing of it.
    assert shared_pairing([HostTime("tests/a.py::x", False, 0.0, 1.0)]) is None


def test_the_ledger_reads_back_what_each_test_recorded(tmp_path: Path) -> None:
    record(tmp_path, HostTime("tests/a.py::x", alone=False, waited_s=1.5, held_s=2.25))
    record(tmp_path, HostTime("tests/b.py::y", alone=True, waited_s=0.0, held_s=9.0))
    assert read_ledger(tmp_path) == [
        HostTime("tests/a.py::x", alone=False, waited_s=1.5, held_s=2.25),
        HostTime("tests/b.py::y", alone=True, waited_s=0.0, held_s=9.0),
    ]
