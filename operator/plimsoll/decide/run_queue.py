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
    namespace: str = ""


def _namespace(waiting: Waiting) -> str:
    return waiting.name.split("/", 1)[0]


class Hold(Enum):
    """Why a waiting test does not start yet."""

    SLOT = "slot"  # every slot is taken, or taken by the tests ahead of it
    LOCK = "lock"  # a running test, or one ahead of it, holds its lock key
    NAMESPACE = "namespace"  # its namespace runs as many tests as the admin allows


@dataclass(frozen=True)
class QueueDecision:
    start: bool
    position: int  # 1 for the first in the queue
    hold: Hold | None = None  # None when it starts
    holder: str | None = None  # with Hold.LOCK: the key that is held


def decide_queue(
    waiting: Iterable[Waiting], running: Sequence[Running], limit: int, per_namespace: int = 0
) -> dict[str, QueueDecision]:
    """`limit` 0 means no limit on the number of tests at once; `per_namespace` 0 no
    limit on those of one namespace (the admin's `limits.runsPerNamespace`), which keeps
    one tenant from taking every slot. A test held by its namespace's limit does not
    block the line, as one held by a lock does not."""
    ordered = sorted(waiting, key=lambda w: (not w.resuming, w.created, w.name, w.uid))
    free = limit - len(running) if limit else len(ordered)
    held = {r.lock_key for r in running if r.lock_key}
    per: dict[str, int] = {}
    for run in running:
        per[run.namespace] = per.get(run.namespace, 0) + 1
    decisions: dict[str, QueueDecision] = {}
    for position, test in enumerate(ordered, start=1):
        namespace = _namespace(test)
        if test.lock_key and test.lock_key in held:
            decisions[test.uid] = QueueDecision(False, position, Hold.LOCK, test.lock_key)
        elif per_namespace and per.get(namespace, 0) >= per_namespace:
            decisions[test.uid] = QueueDecision(False, position, Hold.NAMESPACE, namespace)
        elif free > 0:
            decisions[test.uid] = QueueDecision(True, position)
            free -= 1
            per[namespace] = per.get(namespace, 0) + 1
            if test.lock_key:
                held.add(test.lock_key)
        else:
            decisions[test.uid] = QueueDecision(False, position, Hold.SLOT)
    return decisions


def queue_message(decision: QueueDecision, limit: int, per_namespace: int = 0) -> str:
    """What a Queued test's status says while it waits (its place is in queuePosition)."""
    if decision.hold is Hold.NAMESPACE:
        return (
            f"waiting: namespace {decision.holder} already runs {per_namespace} "
            f"CapacityTests, the most at once (limits.runsPerNamespace = {per_namespace})"
        )
    if decision.hold is Hold.LOCK:
        return (
            f"waiting for the lock {decision.holder!r}: another CapacityTest holding it "
            "runs or is ahead in the queue (spec.target.lockKey / exclusive)"
        )
    return f"waiting for a free slot: at most {limit} at once"
