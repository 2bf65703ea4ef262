"""The operator's queue: creation order, slots, locks that do not block the line."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from plimsoll.decide.run_queue import (
    Hold,
    QueueDecision,
    Running,
    Waiting,
    decide_queue,
    queue_message,
)


def _waiting(uid: str, second: int, lock: str | None = None) -> Waiting:
    return Waiting(uid, f"2026-12-02T10:00:{second:02d}Z", f"team/{uid}", lock)


def test_the_earliest_created_take_the_free_slots_and_the_rest_know_their_place() -> None:
    waiting = [_waiting("c", 3), _waiting("a", 1), _waiting("b", 2), _waiting("d", 4)]
    decisions = decide_queue(waiting, [Running("x")], limit=3)
    assert decisions == {
        "a": QueueDecision(True, 1),
        "b": QueueDecision(True, 2),
        "c": QueueDecision(False, 3, Hold.SLOT),
        "d": QueueDecision(False, 4, Hold.SLOT),
    }


def test_equal_timestamps_go_by_name_so_a_restarted_operator_keeps_the_order() -> None:
    # kubectl apply -f dir/ creates many tests within one second
    waiting = [_waiting("zeta", 1), _waiting("alpha", 1)]
    decisions = decide_queue(waiting, [], limit=1)
    assert decisions["alpha"].start
    assert not decisions["zeta"].start
    assert decisions["zeta"].position == 2


def test_a_held_lock_keeps_its_test_waiting_without_blocking_the_ones_behind() -> None:
    waiting = [_waiting("a", 1, lock="shop:1"), _waiting("b", 2), _waiting("c", 3)]
    decisions = decide_queue(waiting, [Running("x", "shop:1")], limit=3)
    assert decisions["a"] == QueueDecision(False, 1, Hold.LOCK, "shop:1")
    assert decisions["b"].start
    assert decisions["c"].start


def test_two_waiting_tests_with_one_lock_start_one_at_a_time() -> None:
    waiting = [_waiting("a", 1, lock="k"), _waiting("b", 2, lock="k"), _waiting("c", 3)]
    decisions = decide_queue(waiting, [], limit=0)
    assert [uid for uid, d in decisions.items() if d.start] == ["a", "c"]
    assert decisions["b"].hold is Hold.LOCK


def test_no_limit_starts_every_test_without_a_held_lock() -> None:
    decisions = decide_queue([_waiting(str(i), i) for i in range(20)], [], limit=0)
    assert all(d.start for d in decisions.values())


def test_a_resumed_run_goes_before_tests_that_never_started() -> None:
    resumed = Waiting("late", "2026-12-02T10:00:09Z", "team/late", resuming=True)
    decisions = decide_queue([_waiting("early", 1), resumed], [], limit=1)
    assert decisions["late"].start
    assert not decisions["early"].start


def test_the_message_names_the_lock_or_the_limit() -> None:
    assert "'shop:1'" in queue_message(QueueDecision(False, 1, Hold.LOCK, "shop:1"), 5)
    assert "at most 5 at once" in queue_message(QueueDecision(False, 2, Hold.SLOT), 5)


_queues = st.lists(st.tuples(st.integers(0, 59), st.sampled_from([None, "k1", "k2"])), max_size=12)


@given(
    _queues,
    st.lists(st.sampled_from(["k1", "k2"]), unique=True),
    st.integers(0, 3),
    st.integers(0, 6),
)
def test_never_more_than_the_limit_and_never_two_holders_of_one_lock(
    queue: list[tuple[int, str | None]], held: list[str], unlocked: int, limit: int
) -> None:
    waiting = [_waiting(f"w{i}", second, lock) for i, (second, lock) in enumerate(queue)]
    running = [Running(f"r{i}", lock) for i, lock in enumerate([*held, *[None] * unlocked])]
    decisions = decide_queue(waiting, running, limit)
    started = [w for w in waiting if decisions[w.uid].start]
    if limit:
        assert len(started) <= max(0, limit - len(running))
    holders = [*held, *(w.lock_key for w in started if w.lock_key)]
    assert len(holders) == len(set(holders))
    assert sorted(d.position for d in decisions.values()) == list(range(1, len(waiting) + 1))
    # Nobody behind a test held back for a slot started in its place.
    for w in waiting:
        if decisions[w.uid].hold is Hold.SLOT:
            position = decisions[w.uid].position
            assert all(decisions[v.uid].position < position for v in started)


def test_a_lock_key_is_its_namespaces_own() -> None:
    """Issue 52: a tenant naming another team's lockKey held that team's tests back for as
    long as it liked. The key is scoped to the CR's namespace (`Target.lock`); the lock
    derived from a shared target (exclusive, no key) stays cluster-wide."""
    from plimsoll.api.target import Target

    keyed = Target.model_validate(
        {"command": ["./s"], "resources": {"cpu": "1", "memory": "64Mi"}, "lockKey": "shop"}
    )
    assert keyed.lock("team-a") == "team-a/shop"
    running = [Running("tenant", keyed.lock("intruder"))]
    mine = Waiting("a", "2026-12-02T10:00:01Z", "team-a/a", keyed.lock("team-a"))
    same = Waiting("b", "2026-12-02T10:00:02Z", "team-a/b", keyed.lock("team-a"))
    decisions = decide_queue([mine, same], running, limit=0)
    assert decisions["a"].start  # the intruder's same-named key does not hold it back
    assert decisions["b"] == QueueDecision(False, 2, Hold.LOCK, "team-a/shop")
    shared = Target.model_validate({"url": "http://shop.example:80", "exclusive": True})
    assert shared.lock("team-a") == shared.lock("team-b") == "http://shop.example:80"


def test_a_namespace_runs_at_most_its_limit_without_blocking_the_others() -> None:
    """The admin's limits.runsPerNamespace: one tenant cannot take every slot."""
    waiting = [
        Waiting("a2", "2026-12-02T10:00:01Z", "team-a/a2"),
        Waiting("a3", "2026-12-02T10:00:02Z", "team-a/a3"),
        Waiting("b1", "2026-12-02T10:00:03Z", "team-b/b1"),
    ]
    running = [Running("a1", None, "team-a")]
    decisions = decide_queue(waiting, running, limit=0, per_namespace=2)
    assert decisions["a2"].start
    assert decisions["a3"] == QueueDecision(False, 2, Hold.NAMESPACE, "team-a")
    assert decisions["b1"].start  # behind a3, but not held by team-a's limit
    message = queue_message(decisions["a3"], 0, 2)
    assert "namespace team-a already runs 2" in message
    assert "limits.runsPerNamespace = 2" in message
    assert decide_queue(waiting, running, limit=0)["a3"].start  # no limit set
