"""The regression gate's `changepoint` method: what changed in a variant's history, and
whether the latest run brought a new drop.

Pure: the operator hands in `status.history` with the latest run already remembered
(`plimsoll.controller.gate`); the splits come from `plimsoll.decide.changepoint`.

- Each significant split becomes a `Changepoint`: the run that starts it, the image or
  generation that run measured, the mean of the runs since the previous change against
  the mean up to the next one, and the change with a 95% interval (Welch's t over the
  two pieces, relative to the mean before: "ceiling −12% ± 3% at run 1a2b, image api:2.7").
- `Regressed` is set when the last change is downward and new with this run: the
  history without the latest run does not have it, and no earlier verdict named it.
  That covers the latest run starting the change and a drop a few runs old that the
  latest run made significant (a permutation test cannot call a single run significant:
  a drop shows with the run that confirms it); a drop already reported is not reported
  again by every later run, nor when it dips under the threshold for a run and returns.
- Only the ceilings are judged: the history keeps no per-unit costs.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from statistics import fmean, variance

from plimsoll.api.gate import (
    Changepoint,
    HistoryEntry,
    Regression,
    RegressionMethod,
    RegressionStatus,
)
from plimsoll.decide.changepoint import Split, e_divisive

# Student's t, two-sided 95%, by degrees of freedom; between rows the lower row's value
# (more degrees of freedom than that row, so a slightly wider interval: conservative).
_T95 = {
    1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
    9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120,
    17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086, 21: 2.080, 22: 2.074, 23: 2.069, 24: 2.064,
    25: 2.060, 26: 2.056, 27: 2.052, 28: 2.048, 29: 2.045, 30: 2.042, 40: 2.021, 60: 2.000,
    120: 1.980,
}  # fmt: skip


def _t95(df: float) -> float:
    rows = [d for d in _T95 if d <= df]
    return _T95[max(rows)] if rows else _T95[1]


def series_of(history: Sequence[HistoryEntry], variant: str) -> list[HistoryEntry]:
    """The variant's complete runs with a level, oldest first: the series the method reads."""
    runs = [e for e in history if e.variant == variant and e.complete and e.level is not None]
    return sorted(runs, key=lambda e: e.finished_at)


def margin_of(before: Sequence[float], after: Sequence[float]) -> float | None:
    """Half the 95% interval of mean(after) / mean(before) - 1, by Welch's t. A side with one
    run borrows the other side's variance; None when neither side has two."""
    if len(before) < 2 and len(after) < 2:
        return None
    var_b = variance(before) if len(before) > 1 else variance(after)
    var_a = variance(after) if len(after) > 1 else variance(before)
    sb, sa = var_b / len(before), var_a / len(after)
    se = math.sqrt(sb + sa)
    if se == 0:
        return 0.0
    dof_parts = (sb**2 / max(len(before) - 1, 1)) + (sa**2 / max(len(after) - 1, 1))
    df = (sb + sa) ** 2 / dof_parts
    mean_b = fmean(before)
    return _t95(df) * se / abs(mean_b) if mean_b else None


def _percent(share: float) -> str:
    return f"{round(share * 100):+d}%".replace("-", "−")  # round first: no "−0%"


def sentence_of(point: Changepoint) -> str:
    """'ceiling −12% ± 3% at run 1a2b (15 of 20), image api:2.7.0'."""
    margin = f" ± {point.margin * 100:.0f}%" if point.margin is not None else " (no interval)"
    where = f"at run {point.run_id} ({point.index + 1} of {point.runs})"
    if point.image:
        where += f", image {point.image}"
    elif point.generation is not None:
        where += f", generation {point.generation}"
    return f"{point.metric} {_percent(point.change)}{margin} {where}"


def _splits(levels: Sequence[float], policy: Regression) -> list[Split]:
    return e_divisive(levels, significance=policy.significance, permutations=policy.permutations)


def changepoints_of(runs: Sequence[HistoryEntry], policy: Regression) -> list[Changepoint]:
    """Every significant change in `runs` (one variant's series), oldest first."""
    levels = [float(e.level or 0) for e in runs]
    splits = _splits(levels, policy)
    edges = [0, *(s.index for s in splits), len(levels)]
    points = []
    for k, split in enumerate(splits):
        before, after = levels[edges[k] : split.index], levels[split.index : edges[k + 2]]
        mean_b, mean_a = fmean(before), fmean(after)
        entry = runs[split.index]
        point = Changepoint(
            variant=entry.variant,
            run_id=entry.run_id,
            index=split.index,
            runs=len(levels),
            image=entry.image,
            generation=entry.generation,
            before=round(mean_b, 2),
            after=round(mean_a, 2),
            change=round(mean_a / mean_b - 1, 4) if mean_b else 0.0,
            margin=None if (m := margin_of(before, after)) is None else round(m, 4),
            pvalue=round(split.pvalue, 4),
        )
        points.append(point.model_copy(update={"sentence": sentence_of(point)}))
    return points


def judge_changepoints(
    history: Sequence[HistoryEntry],
    variant: str,
    run_id: str,
    policy: Regression,
    reported: Collection[str] = (),
) -> RegressionStatus:
    """The verdict on `run_id` of `variant`, from the history that already holds it.
    `reported`: the runs earlier verdicts named as starting a change (a change near the
    threshold may drop out for a run and come back: it is not new then)."""
    runs = series_of(history, variant)
    points = changepoints_of(runs, policy)
    method = RegressionMethod.CHANGEPOINT
    latest = runs[-1] if runs else None
    if latest is None or latest.run_id != run_id:
        return RegressionStatus(
            variant=variant,
            method=method,
            changepoints=points,
            message=f"{variant}: the latest run has no complete ceiling: no changepoint verdict",
        )
    current = latest.level
    if len(runs) < 2:
        return RegressionStatus(
            variant=variant,
            method=method,
            current=current,
            changepoints=points,
            message=f"{variant}: no earlier complete run to compare with yet",
        )
    earlier = {s.index for s in _splits([float(e.level or 0) for e in runs[:-1]], policy)}
    last = points[-1] if points else None
    if last is None:
        mean = fmean(float(e.level or 0) for e in runs[:-1])
        change = (current or 0) / mean - 1 if mean else 0.0
        return RegressionStatus(
            variant=variant,
            method=method,
            baseline=round(mean),
            current=current,
            change=round(change, 4),
            message=f"{variant}: no significant change in the last {len(runs)} runs "
            f"(p > {policy.significance:g}); {current} against a mean of {mean:,.0f} before "
            f"({_percent(change)})",
        )
    new = last.index not in earlier and last.run_id not in reported
    regressed = new and last.change < 0
    verdict = (
        "regressed: a new significant drop"
        if regressed
        else "a new rise"
        if new
        else "no new change with this run"
    )
    return RegressionStatus(
        variant=variant,
        method=method,
        regressed=regressed,
        baseline=round(last.before),
        current=current,
        change=last.change,
        changepoints=points,
        message=f"{variant}: latest change {last.sentence} (p = {last.pvalue:.3f}): {verdict}",
    )
