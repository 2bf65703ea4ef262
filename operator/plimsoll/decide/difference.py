"""Is one ceiling really different from another? The noise rule and the regression rule.

A ceiling is never one number: the search stops with a range (the last pass and
the first fail, within `precision`) and repeats may disagree. Each ceiling is
therefore read as a *band* of where it may truly lie:

- its lower end is the ceiling, or any lower level that failed a full-length
  trial (a repeat that disagreed);
- its upper end is the first failing level above it, or any higher level that
  once passed a full-length trial, whichever is higher; with no failure above
  the ceiling, the band is open upwards.

**Noise rule**: two ceilings differ (*higher* or *lower*) only when their bands
do not touch; when they touch or overlap the difference is *within noise*.

**A baseline measured more than once** is read as one band spanning all its runs
(`spanning`): on a target whose ceiling moves between back-to-back runs of the same
workload, that spread is the noise a contender is judged against.

**Regression rule**: a candidate regressed against a baseline when its ceiling
dropped by more than `threshold` (a fraction: 0.1 = 10%) *and* the drop is
outside noise. `plimsoll compare --fail-on-regression` and `plimsoll run
--baseline` use it; the operator can reuse it for a regression condition.

Pure: data in, answer out.
"""

from __future__ import annotations

from collections.abc import Sequence

from plimsoll.api.comparison import Band, Difference
from plimsoll.api.status import Ceiling
from plimsoll.api.step import StepRecord, TrialKind, Verdict

NOISE_RULE = (
    "each ceiling is a band from its lowest credible level (the ceiling, or a lower level a "
    "repeat failed) to its highest (the first failing level, or a higher level that once "
    "passed; open when nothing above failed); two ceilings differ only when their bands do "
    "not touch, otherwise the difference is within noise"
)


def band_of(ceiling: Ceiling, records: Sequence[StepRecord] = ()) -> Band | None:
    """The band of `ceiling`, widened by its own full-length steps in `records`; None when
    it passed no level and failed none (there is nothing to place)."""
    full = [r for r in records if r.kind is TrialKind.FULL]
    if ceiling.level is None:
        # Nothing passed: the ceiling lies below the lowest level that failed.
        return Band(low=0, high=ceiling.high) if ceiling.high is not None else None
    low = min([ceiling.level, ceiling.low or ceiling.level, *ceiling.spread])
    low = min([low, *(r.level for r in full if r.verdict is Verdict.FAIL and r.level <= low)])
    if ceiling.high is None:
        return Band(low=low, high=None)
    passed_above = [r.level for r in full if r.verdict is Verdict.PASS and r.level > ceiling.high]
    return Band(low=low, high=max([ceiling.high, *passed_above]))


def spanning(bands: Sequence[Band | None]) -> Band | None:
    """One band over several runs of the same test: from the lowest low to the highest
    high (open when any is open); None when a run has nothing to place."""
    if not bands or any(b is None for b in bands):
        return None
    placed = [b for b in bands if b is not None]
    highs = [b.high for b in placed]
    high = None if any(h is None for h in highs) else max(h for h in highs if h is not None)
    return Band(low=min(b.low for b in placed), high=high)


def _touch(a: Band, b: Band) -> bool:
    a_reaches_b = a.high is None or a.high >= b.low
    b_reaches_a = b.high is None or b.high >= a.low
    return a_reaches_b and b_reaches_a


def delta_percent(baseline: int | None, level: int | None) -> float | None:
    """The change of `level` against `baseline`, in percent; None when either is missing
    or the baseline passed nothing (no base to divide by)."""
    if baseline is None or level is None or baseline == 0:
        return None
    return (level - baseline) / baseline * 100.0


def difference(baseline_band: Band | None, other_band: Band | None) -> Difference:
    """Higher, lower or within noise (the noise rule above)."""
    if baseline_band is None or other_band is None:
        return Difference.UNKNOWN
    if _touch(baseline_band, other_band):
        return Difference.WITHIN_NOISE
    return Difference.HIGHER if other_band.low > baseline_band.low else Difference.LOWER


def regressed(
    baseline: int | None,
    baseline_band: Band | None,
    level: int | None,
    band: Band | None,
    threshold: float,
) -> bool:
    """True when the ceiling `level` dropped by more than `threshold` (0.1 = 10%) below the
    `baseline` ceiling *and* outside noise (`band` against `baseline_band`). A candidate
    that passed nothing, against a baseline that passed something, dropped by 100%."""
    if baseline is None or baseline == 0:
        return False  # no base to fall from
    drop = (baseline - (level or 0)) / baseline
    outside = difference(baseline_band, band) is Difference.LOWER
    return drop > threshold and outside
