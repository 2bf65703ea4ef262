"""Splitting one generator's trial across its worker processes, exactly.

Called by `workers.py` before it hands each process its share. Rates split as
floats whose sum is the level; users split as integers that sum exactly, each
share with its own `first_user` so user ids (and their client IPs and bot
choices) never collide and do not depend on the number of processes.
"""

from __future__ import annotations

from plimsoll.api.trial import TrialRequest
from plimsoll.api.workload import LoadModel


def split_rate(level: float, parts: int) -> list[float]:
    """`parts` rates summing to `level`; the last absorbs the float remainder."""
    if parts < 1:
        raise ValueError("at least one part is needed")
    share = level / parts
    shares = [share] * (parts - 1)
    shares.append(level - share * (parts - 1))
    return shares


def split_users(users: int, parts: int, first_user: int = 0) -> list[tuple[int, int]]:
    """(count, first_user) per part: counts differ by at most one and sum to `users`."""
    if parts < 1:
        raise ValueError("at least one part is needed")
    if users < 0:
        raise ValueError("a number of users cannot be negative")
    base, extra = divmod(users, parts)
    out: list[tuple[int, int]] = []
    offset = first_user
    for index in range(parts):
        count = base + (1 if index < extra else 0)
        out.append((count, offset))
        offset += count
    return out


def user_count(level: float) -> int:
    """A users level must be a whole number: 10.0 is fine, 10.5 is a mistake."""
    count = round(level)
    if abs(count - level) > 1e-9:
        raise ValueError(f"level {level} is not a whole number of users")
    return count


def split_request(request: TrialRequest, parts: int) -> list[TrialRequest]:
    """One TrialRequest per worker process, their levels summing to the request's."""
    if request.workload.model is LoadModel.REPLAY:
        # Every process replays at the full speed, each its own part of the clients.
        return [
            request.model_copy(
                update={
                    "replay_part": request.replay_part * parts + index,
                    "replay_parts": request.replay_parts * parts,
                    "seed": request.seed * 65_537 + index,
                }
            )
            for index in range(parts)
        ]
    if request.workload.model is LoadModel.RATE:
        rates = split_rate(request.level, parts)
        return [
            request.model_copy(
                update={
                    "level": rate,
                    "seed": request.seed * 65_537 + index,
                    # Spread each process's client IPs over a separate stretch of the pool.
                    "client_ip_offset": request.client_ip_offset + index * 1_000_003,
                }
            )
            for index, rate in enumerate(rates)
        ]
    shares = split_users(user_count(request.level), parts, request.first_user)
    return [
        request.model_copy(
            update={"level": float(count), "first_user": first, "seed": request.seed * 65_537 + i}
        )
        for i, (count, first) in enumerate(shares)
    ]
