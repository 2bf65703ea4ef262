"""bench/operator_scale.py's queue-order check: pure, so tested without a cluster."""

from __future__ import annotations

from bench.operator_scale import queue_order_kept


def _at(seconds: float, queued: bool = True) -> tuple[str, bool]:
    return f"2026-12-04T01:56:{seconds:09.6f}Z", queued


def test_two_entitled_at_once_may_start_in_either_order_within_a_poll() -> None:
    # Measured: two slots freed together, and the later test's event came 25 ms first.
    assert queue_order_kept([_at(11.42), _at(13.565), _at(13.539)])


def test_a_later_test_starting_a_poll_before_an_earlier_one_breaks_the_order() -> None:
    assert not queue_order_kept([_at(11.42), _at(14.6), _at(13.5)])


def test_tests_that_never_queued_are_not_held_to_the_order() -> None:
    # The first slots go to tests that started at once: their order is the watch's.
    assert queue_order_kept([_at(13.9, queued=False), _at(12.0, queued=False), _at(20.0)])
