"""The host lock that lets `pytest -n 2` overlap only the tests that may overlap."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from tests.hostshare import host_share


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
