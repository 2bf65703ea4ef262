"""Did this run lower what one pod holds? The gate's baseline, and the history it keeps.

Pure: the operator hands in the run's ceilings and the history from the status,
and writes back what comes out.

- The baseline is the last complete run of the same variant (`previous`), the
  highest complete one in the history (`best`), or a fixed level.
- Whether a ceiling *regressed* is the one rule `plimsoll compare` and
  `plimsoll run --baseline` use (`plimsoll.decide.difference`): lower than the
  baseline by more than the threshold **and** outside noise, where each ceiling is
  a band from its range and repeats and two bands that touch are within noise. A
  history entry's band comes from its ceiling, range and repeats; a fixed level
  is a band of one level.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from plimsoll.api.comparison import Band
from plimsoll.api.gate import HistoryEntry, Regression, RegressionStatus
from plimsoll.api.status import RANGE_FIELDS, Ceiling
from plimsoll.decide.difference import band_of, regressed
from plimsoll.decide.unit_costs import Slopes

PREVIOUS, BEST = "previous", "best"


@dataclass(frozen=True)
class Baseline:
    level: int  # the ceiling the new run is compared with
    band: Band  # where it may truly lie (the noise rule's band)
    source: str  # "previous run 1a2b3c4d", "best run ...", "fixed level"


def _ceiling_of(entry: HistoryEntry) -> Ceiling:
    return Ceiling(
        level=entry.level,
        unit="",
        variant=entry.variant,
        **entry.model_dump(include=set(RANGE_FIELDS)),
    )


def baseline_of(
    history: Sequence[HistoryEntry], variant: str, policy: Regression
) -> Baseline | None:
    """The baseline for `variant` from the runs before this one; None when there is none."""
    if policy.baseline not in (PREVIOUS, BEST):
        fixed = int(policy.baseline)
        return Baseline(fixed, Band(low=fixed, high=fixed), "fixed level")
    runs = [e for e in history if e.variant == variant and e.complete and e.level is not None]
    if not runs:
        return None
    if policy.baseline == PREVIOUS:
        chosen = max(runs, key=lambda e: e.finished_at)
        source = f"previous run {chosen.run_id}"
    else:
        chosen = max(runs, key=lambda e: (e.level or 0, e.finished_at))
        source = f"best run {chosen.run_id}"
    band = band_of(_ceiling_of(chosen))
    assert chosen.level is not None  # a complete run in the history passed a level
    assert band is not None
    return Baseline(chosen.level, band, source)


def _band_text(band: Band | None) -> str:
    if band is None:
        return "no band"
    return f"{band.low}..{band.high if band.high is not None else 'open'}"


def _percent(change: float) -> str:
    return f"{change * 100:+.0f}%"


def judge_regression(
    ceiling: Ceiling, baseline: Baseline | None, policy: Regression
) -> RegressionStatus:
    """The gate's verdict on one variant's ceiling against its baseline."""
    variant, unit = ceiling.variant, ceiling.unit
    if baseline is None:
        return RegressionStatus(
            variant=variant,
            current=ceiling.level,
            message=f"{variant}: no earlier complete run to compare with yet",
        )
    band = band_of(ceiling)
    current = ceiling.level if ceiling.level is not None else 0
    change = (current - baseline.level) / baseline.level if baseline.level else 0.0
    dropped = change < -policy.threshold
    gated = regressed(baseline.level, baseline.band, ceiling.level, band, policy.threshold)
    shown = "no level" if ceiling.level is None else f"{ceiling.level} {unit}"
    verdict = "regressed" if gated else "within noise" if dropped else "no regression"
    message = (
        f"{variant}: {shown} vs {baseline.level} {unit} ({baseline.source}), "
        f"{_percent(change)}: {verdict}"
    )
    if dropped and not gated:
        message += f" ({_band_text(band)} touches the baseline's {_band_text(baseline.band)})"
    elif gated:
        message += (
            f" (more than {policy.threshold * 100:g}% lower, and {_band_text(band)} lies "
            f"below the baseline's {_band_text(baseline.band)})"
        )
    return RegressionStatus(
        variant=variant,
        regressed=gated,
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
    costs: Slopes | None = None,
) -> HistoryEntry:
    return HistoryEntry(
        run_id=run_id,
        variant=ceiling.variant,
        finished_at=finished_at,
        level=ceiling.level,
        **ceiling.range_fields(),
        image=image,
        generation=generation,
        cpu_per_unit=costs.cpu_cores if costs is not None else None,
        memory_per_unit=costs.memory_bytes if costs is not None else None,
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
