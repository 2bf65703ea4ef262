"""When a scheduled CapacityTest is due again: pure arithmetic over a cron expression.

The operator asks, whenever a resource is idle (its last run finished): is there
a slot of `spec.schedule` after the last one it served (or after the last run
started, the first time) and not after now? Only the most recent such slot is
returned, so runs missed while the operator was down run once, not once per
missed slot. `now` is passed in: no clock here, so tests move time by hand.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from croniter import croniter

from plimsoll.api.gate import Schedule

# croniter's get_prev is strictly before its start: nudge so a slot exactly at `now` counts.
_EPSILON = timedelta(microseconds=1)


def due_slot(schedule: Schedule, after: datetime, now: datetime) -> datetime | None:
    """The latest slot in (after, now], in UTC; None when nothing is due."""
    zone = ZoneInfo(schedule.time_zone)
    if now <= after:
        return None
    # Walk back from now: the previous slot at or before now, in the schedule's zone
    # (so "0 3 * * *" means 03:00 local time, across daylight-saving changes).
    walker = croniter(schedule.cron, now.astimezone(zone) + _EPSILON)
    latest: datetime = walker.get_prev(datetime)
    latest = latest.astimezone(UTC)
    return latest if latest > after else None


def slot_token(slot: datetime) -> str:
    """How a served slot is written in the status: an ISO time in UTC, to the second."""
    return slot.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_token(token: str) -> datetime:
    return datetime.strptime(token, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
