"""When a scheduled test is due: cron slots with the clock passed in by hand."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from plimsoll.api.gate import Schedule
from plimsoll.decide.schedule import due_slot, parse_token, slot_token

NIGHTLY_BERLIN = Schedule(cron="0 3 * * *", time_zone="Europe/Berlin")


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def test_nothing_is_due_before_the_next_slot() -> None:
    assert due_slot(NIGHTLY_BERLIN, at("2026-11-30T02:30:00"), at("2026-11-30T12:00:00")) is None


def test_the_slot_is_in_the_schedules_time_zone() -> None:
    # 03:00 in Berlin is 02:00 UTC in winter and 01:00 UTC in summer.
    assert due_slot(NIGHTLY_BERLIN, at("2026-11-29T12:00"), at("2026-11-30T12:00")) == at(
        "2026-11-30T02:00"
    )
    assert due_slot(NIGHTLY_BERLIN, at("2026-07-01T12:00"), at("2026-07-02T12:00")) == at(
        "2026-07-02T01:00"
    )


def test_slots_missed_while_the_operator_was_down_run_once() -> None:
    # Down for three days: the latest missed slot is due, not three of them.
    last = at("2026-11-27T02:00")
    now = at("2026-11-30T09:00")
    slot = due_slot(NIGHTLY_BERLIN, last, now)
    assert slot == at("2026-11-30T02:00")
    assert slot is not None
    assert due_slot(NIGHTLY_BERLIN, slot, now) is None  # once served, nothing more is due


def test_a_slot_exactly_now_is_due() -> None:
    every_5 = Schedule(cron="*/5 * * * *")
    assert due_slot(every_5, at("2026-11-30T11:55"), at("2026-11-30T12:00")) == at(
        "2026-11-30T12:00"
    )


def test_walking_a_fake_clock_serves_each_slot_once() -> None:
    hourly = Schedule(cron="0 * * * *")
    served = at("2026-11-30T00:00")
    runs = []
    clock = served
    for _ in range(24 * 6):  # a day in ten-minute ticks
        clock += timedelta(minutes=10)
        slot = due_slot(hourly, served, clock)
        if slot is not None:
            runs.append(slot)
            served = slot
    assert len(runs) == 24
    assert len(set(runs)) == 24


def test_tokens_round_trip() -> None:
    slot = at("2026-11-30T02:00")
    assert slot_token(slot) == "2026-11-30T02:00:00Z"
    assert parse_token(slot_token(slot)) == slot


@pytest.mark.parametrize(
    ("fields", "needle"),
    [
        ({"cron": "0 3 * *"}, "five-field cron"),
        ({"cron": "61 3 * * *"}, "five-field cron"),
        ({"cron": "0 3 * * *", "timeZone": "Mars/Olympus"}, "IANA time zone"),
    ],
)
def test_bad_schedules_name_the_fix(fields: dict[str, str], needle: str) -> None:
    with pytest.raises(ValidationError, match=needle):
        Schedule.model_validate(fields)
