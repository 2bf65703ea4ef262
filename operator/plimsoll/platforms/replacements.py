"""How many dead generators and mocks a variant may replace before the run stops.

A generator or mock that dies mid-trial (evicted, OOM-killed, deleted by hand) makes
that trial invalid; both platforms start it again before the retry
(`StartedRun.replace_lost`). A piece that keeps dying is not a passing fault but a
broken setup (a node that evicts everything, a generator too small for its share):
past `MAX_REPLACEMENTS` the run stops with the range found, saying what died.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from plimsoll.platforms.base import PlatformError

MAX_REPLACEMENTS = 3  # per variant: enough for an eviction or two, not for a crash loop


@dataclass
class ReplacementBudget:
    limit: int = MAX_REPLACEMENTS
    spent: list[str] = field(default_factory=list)  # what was replaced, and why

    def spend(self, piece: str, why: str) -> str:
        """Count one replacement of `piece`; the line to tell the user, or `PlatformError`
        when the budget is used up (nothing is replaced then)."""
        if len(self.spent) >= self.limit:
            earlier = "; ".join(self.spent)
            raise PlatformError(
                f"{piece} {why}, and {self.limit} generators or mocks were already replaced "
                f"in this variant ({earlier}): stopping instead of replacing more; look for "
                "what keeps killing them (evictions, OOM kills: `kubectl get events` in the "
                "run namespace, or the logs folder of a local run)"
            )
        self.spent.append(f"{piece} {why}")
        return (
            f"{piece} {why}: started again ({len(self.spent)} of {self.limit} "
            "replacements); the step is retried"
        )
