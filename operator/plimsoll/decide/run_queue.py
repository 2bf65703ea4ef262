"""Which waiting CapacityTests may start now, and where the others stand in the queue.

The operator runs at most `--max-concurrent` tests at once; the rest wait Queued.
Before this rule each waiting daemon polled for a free slot and whoever polled first
took it, so twenty tests applied together started in no order a user could predict.
Now every waiting test is placed by its creation: the API server's
`creationTimestamp`, then its namespace and name, because timestamps have one-second
resolution and `kubectl apply -f dir/` creates many tests in one second. Both are
stored in the object, so an operator that restarts puts the queue back in the same
order (the order a watch delivers events in would not survive a restart).

A test may also name a lock (`spec.target.lockKey`): two tests holding the same key
never run at once, so two teams benchmarking one shared target do not load it
together. A test held back only by its lock does not hold back the tests behind it:
it keeps its place and starts as soon as the key is free and a slot is. A run the
operator resumes after a restart goes before every test that has not started: its
pods are in place and its steps so far are in its status.

Pure: the waiting and running tests in, one decision per waiting test out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum


@dataclass(frozen=True)
class Waiting:
    uid: str
    created: str  # metadata.creationTimestamp, RFC 3339 in UTC: sorts as text
    name: str  # namespace/name: breaks ties between equal timestamps
    lock_key: str | None = None
    resuming: bool = False


@dataclass(frozen=True)
class Running:
    uid: str
    lock_key: str | None = None


class Hold(Enum):
    """Why a waiting test does not start yet."""

    SLOT = "slot"  # every slot is taken, or taken by the tests ahead of it
    LOCK = "lock"  # a running test, or one ahead of it, holds its lock key


@dataclass(frozen=True)
class QueueDecision:
    start: bool
    position: int  # 1 for the first in the queue
    hold: Hold | None = None  # None when it starts
    holder: str | None = None  # with Hold.LOCK: the key that is held


def decide_queue(
    waiting: Iterable[Waiting], running: Sequence[Running], limit: int
) -> dict[str, QueueDecision]:
    """`limit` 0 means no limit on the number of tests at once."""
    ordered = sorted(waiting, key=lambda w: (not w.resuming, w.created, w.name, w.uid))
    free = limit - len(running) if limit else len(ordered)
    held = {r.lock_key for r in running if r.lock_key}
    decisions: dict[str, QueueDecision] = {}
    for position, test in enumerate(ordered, start=1):
        if test.lock_key and test.lock_key in held:
            decisions[test.uid] = QueueDecision(False, position, Hold.LOCK, test.lock_key)
        elif free > 0:
            decisions[test.uid] = QueueDecision(True, position)
            free -= 1
            if test.lock_key:
                held.add(test.lock_key)
        else:
            decisions[test.uid] = QueueDecision(False, position, Hold.SLOT)
    return decisions


def queue_message(decision: QueueDecision, limit: int) -> str:
    """What a Queued test's status says while it waits (its place is in queuePosition)."""
    if decision.hold is Hold.LOCK:
        return (
            f"waiting for the lock {decision.holder!r}: another CapacityTest holding it "
            "runs or is ahead in the queue (spec.target.lockKey / exclusive)"
        )
    return f"waiting for a free slot: at most {limit} at once"
