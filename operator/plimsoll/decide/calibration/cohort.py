"""The bot cohort: which clients are scripts, and how fast each one calls.

Called by `traffic.TrafficFit` with each client's call count over the log.
Two rules. Given a stated share of traffic (`--bot-share`), the cohort is the
smallest set of clients that carries it (the busiest first). Without one, the
cohort is the clients above the largest jump in the sorted counts, when that
jump is at least `MIN_JUMP` times: scripts call at rates no person reaches,
so their counts stand apart. The smallest set carrying half of the traffic is
reported either way, as the figure a reader can compare across logs.
"""

from __future__ import annotations

from dataclasses import dataclass

MIN_JUMP = 5.0


@dataclass(frozen=True)
class CohortFit:
    bots: frozenset[str]
    clients: int
    bot_calls: int
    calls: int
    rule: str  # how the cohort was chosen, for the report
    half_traffic_clients: int  # the smallest number of clients carrying 50% of the calls

    @property
    def fraction(self) -> float:
        return len(self.bots) / self.clients if self.clients else 0.0

    @property
    def share(self) -> float:
        return self.bot_calls / self.calls if self.calls else 0.0


def _carrying(ranked: list[tuple[str, int]], share: float, calls: int) -> int:
    carried = 0
    for index, (_, count) in enumerate(ranked):
        carried += count
        if carried >= share * calls:
            return index + 1
    return len(ranked)


def fit_cohort(calls_by_client: dict[str, int], stated_share: float | None = None) -> CohortFit:
    ranked = sorted(calls_by_client.items(), key=lambda item: item[1], reverse=True)
    calls = sum(count for _, count in ranked)
    half = _carrying(ranked, 0.5, calls)
    if stated_share is not None:
        size = _carrying(ranked, stated_share, calls)
        rule = f"the fewest clients carrying {stated_share:.0%} of the calls"
    else:
        size, jump = 0, 1.0
        for index in range(max(len(ranked) // 2, 1)):
            if index + 1 >= len(ranked):
                break
            ratio = ranked[index][1] / max(ranked[index + 1][1], 1)
            if ratio > jump:
                size, jump = index + 1, ratio
        if jump < MIN_JUMP:
            size = 0
            rule = f"no client calls {MIN_JUMP:g}x more than the next: no bots"
        else:
            rule = f"clients above a {jump:.0f}x jump in calls per client"
    bots = ranked[:size]
    return CohortFit(
        bots=frozenset(client for client, _ in bots),
        clients=len(ranked),
        bot_calls=sum(count for _, count in bots),
        calls=calls,
        rule=rule,
        half_traffic_clients=half,
    )
