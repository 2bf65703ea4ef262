"""Which of several operator replicas is active: the priority each announces to kopf's peering.

kopf's peering keeps one operator active per peering object: each announces a
priority, and any operator that sees a live peer with a higher one pauses (its
daemons stop, its runs are detached, not failed), resuming once that peer's
keep-alive has expired. Peers of the *same* priority all pause, so every replica
needs its own. Seniority gives that: the earlier an operator started, the higher
its priority, so a replica that starts later (a restarted pod, the new pod of a
rolling update) joins as the standby instead of taking over from the active one in
the middle of its runs. A random tie-break keeps two replicas that start in the
same millisecond apart.
"""

from __future__ import annotations

_LAST_MS = 10**13  # epoch milliseconds of the year 2286: every start is before it
_TIE_BREAKS = 100
# JSON numbers are exact up to 2**53; the peering object stores the priority as one.
MAX_PRIORITY = (_LAST_MS + 1) * _TIE_BREAKS - 1


def seniority_priority(started_at: float, tie_break: int) -> int:
    """The peering priority of an operator started at `started_at` (epoch seconds): the
    earlier the start, the higher; `tie_break` (any int, used modulo 100) orders two
    starts in the same millisecond."""
    started_ms = min(max(int(started_at * 1000), 0), _LAST_MS - 1)
    return (_LAST_MS - started_ms) * _TIE_BREAKS + tie_break % _TIE_BREAKS
