"""Did this run lower what one pod holds? The gate's rule, and the history it keeps.

Pure: the operator hands in the run's ceilings and the history from the status,
and writes back what comes out. The rule, stated once:

- The baseline is the last complete run of the same variant (`previous`), the
  highest complete one in the history (`best`), or a fixed level.
- A ceiling *regressed* when it is lower than the baseline by more than the
  threshold (a share of the baseline) **and** beyond the measured noise: the
  new run failed at a level the baseline passed every time it was tried. For a
  history entry that is the lowest of its ceiling and its repeats (its spread);
  for a fixed level, the level itself. A lower ceiling whose first failure lies
  above that (the two ranges overlap) is within noise: it is reported with its
  change but does not gate.
- A run that passed no level at all regressed against any baseline whose
  reliable level is at or above the level it failed at.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from plimsoll.api.gate import HistoryEntry, Regression, RegressionStatus
from plimsoll.api.status import Ceiling

PREVIOUS, BEST = "previous", "best"


@dataclass(frozen=True)
class Baseline:
    level: int  # the ceiling the new run is compared with
    reliable: int  # the level the baseline passed every time it was tried
    source: str  # "previous run 1a2b3c4d", "best run ...", "fixed level"


def _reliable(entry: HistoryEntry) -> int:
    assert entry.level is not None
    return min([entry.level, *entry.spread])


def baseline_of(
    history: Sequence[HistoryEntry], variant: str, policy: Regression
) -> Baseline | None:
    """The baseline for `variant` from the runs before this one; None when there is none."""
    if policy.baseline not in (PREVIOUS, BEST):
        fixed = int(policy.baseline)
        return Baseline(fixed, fixed, "fixed level")
    runs = [e for e in history if e.variant == variant and e.complete and e.level is not None]
    if not runs:
        return None
    if policy.baseline == PREVIOUS:
        chosen = max(runs, key=lambda e: e.finished_at)
        source = f"previous run {chosen.run_id}"
    else:
        chosen = max(runs, key=lambda e: (e.level or 0, e.finished_at))
        source = f"best run {chosen.run_id}"
    assert chosen.level is not None
    return Baseline(chosen.level, _reliable(chosen), source)


def _percent(change: float) -> str:
    return f"{change * 100:+.0f}%"


def judge(ceiling: Ceiling, baseline: Baseline | None, policy: Regression) -> RegressionStatus:
    """The gate's verdict on one variant's ceiling against its baseline."""
    variant, unit = ceiling.variant, ceiling.unit
    if baseline is None:
        return RegressionStatus(
            variant=variant,
            current=ceiling.level,
            message=f"{variant}: no earlier complete run to compare with yet",
        )
    first_fail = ceiling.high
    current = ceiling.level if ceiling.level is not None else 0
    change = (current - baseline.level) / baseline.level if baseline.level else 0.0
    beyond_noise = first_fail is not None and first_fail <= baseline.reliable
    dropped = change < -policy.threshold
    regressed = dropped and beyond_noise
    shown = "no level" if ceiling.level is None else f"{ceiling.level} {unit}"
    verdict = "regressed" if regressed else "within noise" if dropped else "no regression"
    message = (
        f"{variant}: {shown} vs {baseline.level} {unit} ({baseline.source}), "
        f"{_percent(change)}: {verdict}"
    )
    if dropped and not beyond_noise:
        message += (
            f" (it failed first at {first_fail}, above the {baseline.reliable} "
            "the baseline always passed)"
            if first_fail is not None
            else " (no failing level was found)"
        )
    elif regressed:
        message += (
            f" (more than {policy.threshold * 100:g}% lower, and it failed at {first_fail}, "
            f"which the baseline passed every time)"
        )
    return RegressionStatus(
        variant=variant,
        regressed=regressed,
        baseline=baseline.level,
        current=ceiling.level,
        change=round(change, 4),
        message=message,
    )


def entry_of(
    ceiling: Ceiling,
    run_id: str,
    finished_at: datetime,
    *,
    image: str | None = None,
    generation: int | None = None,
) -> HistoryEntry:
    return HistoryEntry(
        run_id=run_id,
        variant=ceiling.variant,
        finished_at=finished_at,
        level=ceiling.level,
        low=ceiling.low,
        high=ceiling.high,
        spread=list(ceiling.spread),
        limited_by=ceiling.limited_by,
        complete=ceiling.complete,
        image=image,
        generation=generation,
    )


def remember(
    history: Sequence[HistoryEntry], entries: Sequence[HistoryEntry], limit: int
) -> list[HistoryEntry]:
    """The history with `entries` added, keeping the newest `limit` runs per variant; a run
    already remembered (the same run id and variant) is replaced, not added twice."""
    added = {(e.run_id, e.variant) for e in entries}
    kept = [e for e in history if (e.run_id, e.variant) not in added] + list(entries)
    result: list[HistoryEntry] = []
    for variant in dict.fromkeys(e.variant for e in kept):
        runs = sorted((e for e in kept if e.variant == variant), key=lambda e: e.finished_at)
        result.extend(runs[-limit:] if limit > 0 else [])
    return result


def change_column(verdicts: Sequence[RegressionStatus]) -> str:
    """What `kubectl get` shows in the Change column: the first variant's change."""
    if not verdicts or verdicts[0].change is None:
        return ""
    first = verdicts[0]
    return _percent(first.change or 0.0) + (" REGRESSED" if first.regressed else "")
