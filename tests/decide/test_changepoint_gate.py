"""The gate's changepoint method run by run over synthetic histories: where it says
Regressed, what each change says (run, image, change ± interval), and that a slow drift a
10% threshold never flags is caught."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from plimsoll.api.gate import HistoryEntry, Regression, RegressionMethod, RegressionStatus
from plimsoll.api.status import Ceiling
from plimsoll.decide.changepoint_gate import judge_changepoints, margin_of, sentence_of
from plimsoll.decide.regression import baseline_of, judge_regression, remember

T0 = datetime(2026, 11, 1, tzinfo=UTC)
CHANGEPOINT = Regression(method=RegressionMethod.CHANGEPOINT)


def entry(run: int, level: int, image: str) -> HistoryEntry:
    return HistoryEntry(
        run_id=f"r{run}", finished_at=T0 + timedelta(days=run), level=level, image=image
    )


def run_by_run(
    levels: list[int], images: list[str], limit: int = 50
) -> list[tuple[int, RegressionStatus]]:
    """The verdict after each run, as the operator gives it: remember, then judge."""
    history: list[HistoryEntry] = []
    verdicts = []
    for run, (level, image) in enumerate(zip(levels, images, strict=True)):
        history = remember(history, [entry(run, level, image)], limit)
        verdicts.append((run, judge_changepoints(history, "default", f"r{run}", CHANGEPOINT)))
    return verdicts


def noisy(means: list[float], seed: int = 1, noise: float = 0.03) -> list[int]:
    rng = random.Random(seed)
    return [round(m * (1 + rng.uniform(-noise, noise))) for m in means]


def test_a_ten_percent_step_regresses_once_and_names_the_run_and_image() -> None:
    means = [1000.0] * 14 + [900.0] * 6
    images = ["api:2.6.0"] * 14 + ["api:2.7.0"] * 6
    verdicts = run_by_run(noisy(means), images)
    flagged = [run for run, v in verdicts if v.regressed]
    # One verdict says Regressed: the run that made the drop significant (a permutation
    # test over a history needs a few runs after a change), and none before the step.
    assert len(flagged) == 1
    assert 14 <= flagged[0] <= 17
    regressed = verdicts[flagged[0]][1]
    last = regressed.changepoints[-1]
    assert (last.run_id, last.index, last.image) == ("r14", 14, "api:2.7.0")
    assert -0.13 < last.change < -0.07
    assert last.margin is not None
    assert 0 < last.margin < 0.05
    assert last.sentence.startswith(f"ceiling −{abs(last.change) * 100:.0f}% ± ")
    assert "at run r14" in last.sentence
    assert "image api:2.7.0" in last.sentence
    assert regressed.baseline == round(last.before)
    assert "regressed: a new significant drop" in regressed.message
    # the runs after it still see the change, and do not flag it again
    assert all(v.changepoints and v.changepoints[-1].run_id == "r14" for _, v in verdicts[-2:])


def test_a_drop_in_the_latest_run_regresses_when_the_next_run_confirms_it() -> None:
    # A permutation test cannot call one run significant: the latest run far below forty
    # steady ones has p ~ 0.1. The run after it, as low, makes the change significant, and
    # the verdict names the run that started it.
    levels = [*noisy([1000.0] * 40), 600, 610]
    verdicts = run_by_run(levels, ["api:1"] * 40 + ["api:2"] * 2)
    (_, alone), (_, confirmed) = verdicts[-2], verdicts[-1]
    assert not alone.regressed
    assert alone.change is not None
    assert alone.change < -0.35  # the drop shows against the mean, without a verdict
    assert confirmed.regressed
    assert confirmed.changepoints[-1].run_id == "r40"
    assert confirmed.changepoints[-1].image == "api:2"
    assert confirmed.current == 610


def test_no_change_gives_no_false_regression_run_after_run() -> None:
    verdicts = run_by_run(noisy([1000.0] * 25, seed=7), ["api:1"] * 25)
    assert not any(v.regressed for _, v in verdicts)
    assert not verdicts[-1][1].changepoints
    assert "no significant change in the last 25 runs" in verdicts[-1][1].message


def test_a_rise_is_a_change_but_not_a_regression() -> None:
    verdicts = run_by_run(noisy([1000.0] * 12 + [1150.0] * 6), ["api:1"] * 18)
    assert not any(v.regressed for _, v in verdicts)
    assert verdicts[-1][1].changepoints[-1].change > 0.1


def test_a_slow_drift_a_threshold_misses_is_caught() -> None:
    # -2.5% a release: the threshold gate (previous, 10%) never fires; the history moved 30%.
    levels = noisy([1000.0 * 0.975**i for i in range(15)], seed=3, noise=0.01)
    threshold = Regression(baseline="previous", threshold=0.10)
    history: list[HistoryEntry] = []
    for run, level in enumerate(levels):
        ceiling = Ceiling(level=level, low=level, high=level + 10, unit="rps", complete=True)
        verdict = judge_regression(ceiling, baseline_of(history, "default", threshold), threshold)
        assert not verdict.regressed
        history = remember(history, [entry(run, level, "api:1")], 50)
    verdicts = run_by_run(levels, ["api:1"] * 15)
    assert any(v.regressed for _, v in verdicts)
    assert all(p.change < 0 for p in verdicts[-1][1].changepoints)


def test_too_short_or_incomplete_histories_say_so() -> None:
    one = remember([], [entry(0, 1000, "api:1")], 10)
    first = judge_changepoints(one, "default", "r0", CHANGEPOINT)
    assert first.baseline is None
    assert not first.regressed
    assert "no earlier complete run" in first.message
    partial = HistoryEntry(run_id="r1", finished_at=T0 + timedelta(days=1), complete=False)
    later = judge_changepoints(remember(one, [partial], 10), "default", "r1", CHANGEPOINT)
    assert not later.regressed
    assert "no complete ceiling" in later.message


def test_the_interval_is_welchs_and_needs_two_runs_on_a_side() -> None:
    assert margin_of([1000.0], [900.0]) is None
    # the same spread on both sides: a wider interval for fewer runs
    narrow = margin_of([990.0, 1010.0] * 5, [890.0, 910.0] * 5)
    wide = margin_of([990.0, 1010.0], [890.0, 910.0])
    assert narrow is not None
    assert wide is not None
    assert 0 < narrow < wide
    # one run after the change borrows the spread before it: an interval, a wide one
    single = margin_of([990.0, 1010.0] * 5, [900.0])
    assert single is not None
    assert single > narrow


def test_the_sentence_names_the_generation_without_an_image() -> None:
    verdicts = run_by_run(noisy([1000.0] * 10 + [800.0] * 5), ["api:1"] * 15)
    point = verdicts[-1][1].changepoints[-1].model_copy(update={"image": None, "generation": 7})
    assert sentence_of(point).endswith("at run r10 (11 of 15), generation 7")


def test_a_change_an_earlier_verdict_named_is_not_new_again() -> None:
    # A change near the threshold can drop out for a run and come back: the run that starts
    # it was named before, so it does not regress a second time.
    means = [1000.0] * 14 + [900.0] * 6
    verdicts = run_by_run(noisy(means), ["api:1"] * 20)
    run = next(run for run, v in verdicts if v.regressed)
    history = remember(
        [], [entry(i, level, "api:1") for i, level in enumerate(noisy(means)[: run + 1])], 50
    )
    again = judge_changepoints(
        history, "default", f"r{run}", CHANGEPOINT, reported={("ceiling", "r14")}
    )
    assert not again.regressed
    assert again.changepoints[-1].run_id == "r14"
    assert "no new change with this run" in again.message


def costly(run: int, level: int, cpu: float) -> HistoryEntry:
    return entry(run, level, "api:2.6.0" if run < 14 else "api:2.7.0").model_copy(
        update={"cpu_per_unit": cpu}
    )


def test_a_cost_that_rises_while_the_ceiling_holds_regresses_and_names_the_cost() -> None:
    """Issue 58, item 1: a release that costs 15% more CPU per request, its ceiling held
    (a faster node, a looser bar): the ceiling's series shows nothing, the cost's does."""
    levels = noisy([1000.0] * 20, seed=3)
    cpu = [c / 1000 for c in noisy([2.0 * 1000] * 14 + [2.3 * 1000] * 6, seed=5)]
    history: list[HistoryEntry] = []
    verdicts = []
    for run in range(20):
        history = remember(history, [costly(run, levels[run], cpu[run])], 50)
        verdicts.append((run, judge_changepoints(history, "default", f"r{run}", CHANGEPOINT)))
    flagged = [(run, v) for run, v in verdicts if v.regressed]
    assert len(flagged) == 1, [v.message for _, v in verdicts]
    run, verdict = flagged[0]
    assert 14 <= run <= 17
    [point] = [p for p in verdict.changepoints if p.metric == "CPU per unit"]
    assert point.run_id == "r14"
    assert point.image == "api:2.7.0"
    assert 0.12 <= point.change <= 0.18
    assert point.sentence.startswith("CPU per unit +15%")
    assert "regressed: a new significant rise in cost" in verdict.message
    assert not [p for p in verdict.changepoints if p.metric == "ceiling"]


def test_a_cost_that_falls_is_a_change_never_a_regression() -> None:
    levels = noisy([1000.0] * 20, seed=3)
    cpu = [c / 1000 for c in noisy([2.3 * 1000] * 14 + [2.0 * 1000] * 6, seed=5)]
    history: list[HistoryEntry] = []
    messages = []
    for run in range(20):
        history = remember(history, [costly(run, levels[run], cpu[run])], 50)
        verdict = judge_changepoints(history, "default", f"r{run}", CHANGEPOINT)
        assert not verdict.regressed, verdict.message
        messages.append(verdict.message)
    assert any("CPU per unit −13%" in m and "a new drop" in m for m in messages), messages
