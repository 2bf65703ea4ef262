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
- Beside the ceiling, the target's CPU and memory per unit of load (`HistoryEntry.
  cpu_per_unit`, `memory_per_unit`: the report's slopes, `plimsoll.decide.unit_costs`)
  are series of their own (`METRICS`): a release that costs 15% more CPU per request
  while a faster node keeps the ceiling is a change too. For a cost the worse way is
  up; `Regressed` is set when any series' last change is new and the worse way.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Metric:
    """One series the method watches: its name, how a run gives its value, and which way
    is worse (-1: down, for the ceiling; +1: up, for a cost)."""

    name: str
    value: Callable[[HistoryEntry], float | None]
    worse: int


CEILING = Metric("ceiling", lambda e: float(e.level) if e.level is not None else None, -1)
METRICS = (
    CEILING,
    Metric("CPU per unit", lambda e: e.cpu_per_unit, +1),
    Metric("memory per unit", lambda e: e.memory_per_unit, +1),
)


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


def changepoints_of(
    runs: Sequence[HistoryEntry], policy: Regression, metric: Metric = CEILING
) -> list[Changepoint]:
    """Every significant change of `metric` in `runs` (one variant's series, the runs
    that measured it), oldest first."""
    levels = [metric.value(e) or 0.0 for e in runs]
    splits = _splits(levels, policy)
    edges = [0, *(s.index for s in splits), len(levels)]
    points = []
    for k, split in enumerate(splits):
        before, after = levels[edges[k] : split.index], levels[split.index : edges[k + 2]]
        mean_b, mean_a = fmean(before), fmean(after)
        entry = runs[split.index]
        point = Changepoint(
            variant=entry.variant,
            metric=metric.name,
            run_id=entry.run_id,
            index=split.index,
            runs=len(levels),
            image=entry.image,
            generation=entry.generation,
            before=_rounded(mean_b),
            after=_rounded(mean_a),
            change=round(mean_a / mean_b - 1, 4) if mean_b else 0.0,
            margin=None if (m := margin_of(before, after)) is None else round(m, 4),
            pvalue=round(split.pvalue, 4),
        )
        points.append(point.model_copy(update={"sentence": sentence_of(point)}))
    return points


def _rounded(mean: float) -> float:
    """Two decimals for a ceiling; four significant digits for a cost (cores per request
    are thousandths)."""
    return round(mean, 2) if abs(mean) >= 1 else float(f"{mean:.4g}")


@dataclass(frozen=True)
class _Latest:
    """One metric's last change, and whether the latest run made it new and worse."""

    point: Changepoint
    new: bool
    worse: bool


def _latest_change(
    runs: Sequence[HistoryEntry],
    metric: Metric,
    run_id: str,
    policy: Regression,
    reported: Collection[tuple[str, str]],
) -> tuple[list[Changepoint], _Latest | None]:
    """`metric`'s changes over the runs that measured it, and its last one when the
    latest run (`run_id`) is among them."""
    measured = [e for e in runs if metric.value(e) is not None]
    points = changepoints_of(measured, policy, metric)
    if not points or len(measured) < 2 or measured[-1].run_id != run_id:
        return points, None
    values = [metric.value(e) or 0.0 for e in measured[:-1]]
    earlier = {s.index for s in _splits(values, policy)}
    last = points[-1]
    new = last.index not in earlier and (metric.name, last.run_id) not in reported
    worse = new and last.change * metric.worse > 0
    return points, _Latest(last, new, worse)


def _verdict(latest: _Latest) -> str:
    up = latest.point.change > 0
    if latest.worse:
        return (
            "regressed: a new significant rise in cost"
            if up
            else ("regressed: a new significant drop")
        )
    if not latest.new:
        return "no new change with this run"
    return "a new rise" if up else "a new drop"


def _without_verdict(
    variant: str, runs: Sequence[HistoryEntry], run_id: str, points: list[Changepoint]
) -> RegressionStatus | None:
    """The status when there is nothing to judge: the latest run has no complete ceiling,
    or no earlier one to compare with; None when there is."""
    method = RegressionMethod.CHANGEPOINT
    latest = runs[-1] if runs else None
    if latest is None or latest.run_id != run_id:
        return RegressionStatus(
            variant=variant,
            method=method,
            changepoints=points,
            message=f"{variant}: the latest run has no complete ceiling: no changepoint verdict",
        )
    if len(runs) < 2:
        return RegressionStatus(
            variant=variant,
            method=method,
            current=latest.level,
            changepoints=points,
            message=f"{variant}: no earlier complete run to compare with yet",
        )
    return None


def judge_changepoints(
    history: Sequence[HistoryEntry],
    variant: str,
    run_id: str,
    policy: Regression,
    reported: Collection[tuple[str, str]] = (),
) -> RegressionStatus:
    """The verdict on `run_id` of `variant`, from the history that already holds it.
    `reported`: the (metric, run) changes earlier verdicts named (a change near the
    threshold may drop out for a run and come back: it is not new then)."""
    runs = series_of(history, variant)
    found = [_latest_change(runs, m, run_id, policy, reported) for m in METRICS]
    points = [p for series, _ in found for p in series]
    early = _without_verdict(variant, runs, run_id, points)
    if early is not None:
        return early
    current = runs[-1].level
    costs = [
        f"latest change {c.point.sentence} (p = {c.point.pvalue:.3f}): {_verdict(c)}"
        for _, c in found[1:]
        if c is not None
    ]
    ceiling = found[0][1]
    regressed = any(c is not None and c.worse for _, c in found)
    if ceiling is None:
        mean = fmean(float(e.level or 0) for e in runs[:-1])
        change = (current or 0) / mean - 1 if mean else 0.0
        baseline = round(mean)
        message = (
            f"{variant}: no significant change in the last {len(runs)} runs "
            f"(p > {policy.significance:g}); {current} against a mean of {mean:,.0f} before "
            f"({_percent(change)})"
        )
    else:
        last = ceiling.point
        baseline, change = round(last.before), last.change
        message = (
            f"{variant}: latest change {last.sentence} (p = {last.pvalue:.3f}): {_verdict(ceiling)}"
        )
    return RegressionStatus(
        variant=variant,
        method=RegressionMethod.CHANGEPOINT,
        regressed=regressed,
        baseline=baseline,
        current=current,
        change=round(change, 4),
        changepoints=points,
        message="; ".join([message, *costs]),
    )
