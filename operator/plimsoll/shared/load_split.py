"""Splitting one trial's load into parts that add up exactly: the one rule for both hops.

The runner splits a step's level across the generators (`plimsoll.run.trial_client`)
and each generator splits its share across its worker processes
(`plimsoll_generator.workers`); both call `split_request`, so the two hops cannot
disagree. The rule:

- rates split into equal floats, the last part taking the float remainder, so the
  parts sum to the level;
- users split into whole numbers that differ by at most one (the first parts take
  the extra ones) and sum exactly; each part numbers its users from its own
  `first_user`, so user ids, and the client addresses and bots they pick, never
  repeat and do not depend on how many parts there are;
- part `i` of a request seeded `s` is seeded `s * SEED_STRIDE + i`; for rates (whose
  client addresses count requests, not users) it starts its addresses at
  `offset * SEED_STRIDE + i * ADDRESS_STRIDE`. Both are injective over the two hops
  (fewer than `SEED_STRIDE` parts each), so no two processes of a trial share a
  random stream or start their addresses at the same place, and parts next to each
  other start a million addresses apart.
"""

from __future__ import annotations

from dataclasses import dataclass

from plimsoll.api.trial import TrialRequest
from plimsoll.api.workload import LoadModel

SEED_STRIDE = 65_537  # prime, larger than any count of parts
ADDRESS_STRIDE = 1_000_003  # prime: neighbouring parts' addresses start far apart


@dataclass(frozen=True)
class Share:
    """One part's load: its level, its first user id, its seed and its first address."""

    level: float
    first_user: int
    seed: int
    client_ip_offset: int


def user_count(level: float) -> int:
    """A users level must be a whole number: 10.0 is fine, 10.5 is a mistake."""
    count = round(level)
    if abs(count - level) > 1e-9:
        raise ValueError(f"level {level} is not a whole number of users")
    if count < 0:
        raise ValueError("a number of users cannot be negative")
    return count


def split_load(
    level: float,
    parts: int,
    model: LoadModel,
    *,
    first_user: int = 0,
    seed: int = 0,
    client_ip_offset: int = 0,
) -> list[Share]:
    """`level` in `parts` shares by the module's rule."""
    if parts < 1:
        raise ValueError("at least one part is needed")
    seeds = [seed * SEED_STRIDE + index for index in range(parts)]
    if model is LoadModel.RATE:
        share = level / parts
        rates = [share] * (parts - 1) + [level - share * (parts - 1)]
        return [
            Share(
                level=rate,
                first_user=first_user,
                seed=seeds[index],
                client_ip_offset=client_ip_offset * SEED_STRIDE + index * ADDRESS_STRIDE,
            )
            for index, rate in enumerate(rates)
        ]
    base, extra = divmod(user_count(level), parts)
    shares: list[Share] = []
    first = first_user
    for index in range(parts):
        users = base + (1 if index < extra else 0)
        # A user's address follows its id, which is unique already: the offset stays.
        shares.append(Share(float(users), first, seeds[index], client_ip_offset))
        first += users
    return shares


def split_request(request: TrialRequest, parts: int) -> list[TrialRequest]:
    """One `TrialRequest` per part, their levels summing to the request's. A replay is
    not split by level: every part replays at the full speed, its own share of the
    log's clients (part `p` of `n` becomes parts `p * parts + i` of `n * parts`)."""
    if parts < 1:
        raise ValueError("at least one part is needed")
    if request.workload.model is LoadModel.REPLAY:
        return [
            request.model_copy(
                update={
                    "replay_part": request.replay_part * parts + index,
                    "replay_parts": request.replay_parts * parts,
                    "seed": request.seed * SEED_STRIDE + index,
                }
            )
            for index in range(parts)
        ]
    shares = split_load(
        request.level,
        parts,
        request.workload.model,
        first_user=request.first_user,
        seed=request.seed,
        client_ip_offset=request.client_ip_offset,
    )
    return [
        request.model_copy(
            update={
                "level": share.level,
                "first_user": share.first_user,
                "seed": share.seed,
                "client_ip_offset": share.client_ip_offset,
            }
        )
        for share in shares
    ]
