"""How far a run has come, and what the trial under way measured so far: both pure."""

from __future__ import annotations

from plimsoll.api.resource import CapacityTest
from plimsoll.api.spec import LatencyBound, PassWhen
from plimsoll.api.timeline import TimelineSlice
from plimsoll.decide.run_progress import describe, run_progress, steps_at_most
from plimsoll.decide.search import noise_free_bound
from plimsoll.decide.trial_so_far import judged_quantiles, so_far
from plimsoll.shared import histogram


def _spec(shapes: dict[str, object] | None = None, **search: object) -> CapacityTest:
    return CapacityTest.model_validate(
        {
            "metadata": {"name": "p"},
            "spec": {
                "target": {"command": ["./server"], "resources": {"cpu": "1", "memory": "1Gi"}},
                "workload": {"mix": [{"name": "get", "path": "/"}]},
                "trial": {"duration": "20s", "warmUp": "5s"},
                "search": search,
                **({"shapes": shapes} if shapes else {}),
            },
        }
    )


def test_the_bound_is_the_searchs_noise_free_one_then_its_hard_cap() -> None:
    spec = _spec(strategy="steps", levels=[10, 20, 40, 80], maxTrials=10).spec
    assert noise_free_bound(spec.search) == 4
    assert steps_at_most(spec, 3) == 4
    assert steps_at_most(spec, 5) == 10  # noisy repeats went past it: the cap holds


def test_the_time_left_comes_from_the_steps_so_far_or_the_spec_before_any() -> None:
    spec = _spec(strategy="steps", levels=[10, 20, 40, 80]).spec
    first = run_progress(spec, finished=0, seconds_finished=0.0, seconds_into_step=5.0)
    assert (first.done, first.at_most) == (0, 4)
    assert first.seconds_left == 4 * 25.0 - 5.0  # warm-up + duration per step
    later = run_progress(spec, finished=2, seconds_finished=80.0, seconds_into_step=10.0)
    assert later.seconds_left == 2 * 40.0 - 10.0  # the steps took 40 s each
    assert describe(later) == "2 of at most 4 steps done, about 70 s left at most"
    long = run_progress(spec, finished=1, seconds_finished=400.0, seconds_into_step=0.0)
    assert describe(long) == "1 of at most 4 steps done, about 20 min left at most"


def test_a_guided_shape_search_claims_no_bound() -> None:
    grid = {"cpu": {"min": "250m", "max": "2"}, "memory": {"min": "256Mi", "max": "1Gi"}}
    spec = _spec(shapes={"search": grid}).spec
    assert describe(run_progress(spec, 3, 100.0, 1.0)) == "3 steps done"


def test_variants_multiply_the_bound() -> None:
    one = _spec(strategy="steps", levels=[10, 20]).spec
    shaped = _spec(
        shapes={"explicit": [{"cpu": "500m", "memory": "1Gi"}, {"cpu": "1", "memory": "1Gi"}]},
        strategy="steps",
        levels=[10, 20],
    ).spec
    assert steps_at_most(one, 1) == 2
    assert steps_at_most(shaped, 1) == 4  # two shapes, two steps each


def _slice(start: float, sent: int, errors: int, micros: list[int]) -> TimelineSlice:
    h = histogram.new_histogram()
    for value in micros:
        h.record_value(value)
    return TimelineSlice(
        start=start,
        seconds=1.0,
        latency=histogram.encode(h) if micros else None,
        sent=sent,
        ok=len(micros) - errors,
        errors=errors,
    )


def test_so_far_sums_every_generators_slices_and_reads_the_bars_quantiles() -> None:
    bar = PassWhen(
        latency=[
            LatencyBound(operation="chat", quantile=0.95, below=0.9, metric="ttft"),
            LatencyBound(quantile=0.99, below=2.0),
            LatencyBound(quantile=0.95, below=1.0),
        ]
    )
    assert judged_quantiles(bar) == [0.95, 0.99]
    assert judged_quantiles(PassWhen()) == [0.5, 0.99]
    # two generators, two seconds each: 100 calls at 10 ms, then 4 at 900 ms in the second
    slices = [
        _slice(0.0, 50, 0, [10_000] * 50),
        _slice(0.0, 50, 1, [10_000] * 50),
        _slice(1.0, 52, 0, [10_000] * 50 + [900_000] * 2),
        _slice(1.0, 52, 0, [10_000] * 50 + [900_000] * 2),
    ]
    figures = so_far(slices, judged_quantiles(bar))
    assert figures.seconds == 2.0
    assert figures.rate == 204 / 2.0
    assert figures.errors == 1
    assert figures.error_share == 1 / 204
    p95, p99 = figures.quantiles_ms[0.95], figures.quantiles_ms[0.99]
    assert p95 is not None
    assert p99 is not None
    assert 9.9 <= p95 <= 10.1
    assert 890 <= p99 <= 910
    # Folded in a second at a time, as the live view does, it comes to the same figures.
    step = so_far(slices[2:], judged_quantiles(bar), so_far(slices[:2], judged_quantiles(bar)))
    assert (step.seconds, step.sent, step.errors) == (2.0, 204, 1)
    assert step.quantiles_ms == figures.quantiles_ms
    empty = so_far([], [0.99])
    assert (empty.rate, empty.error_share, empty.quantiles_ms) == (0.0, None, {0.99: None})
