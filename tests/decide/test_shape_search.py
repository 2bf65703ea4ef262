"""The guided shape search: the next shape follows from what limited the cheapest one; it
stops when latency-bound, bracketed or at maxShapes; predictions scale measured usage."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from plimsoll.api.shapes import Cost, CpuRange, MemoryRange, ShapeSearch
from plimsoll.api.spec import Search
from plimsoll.api.step import LimitedBy
from plimsoll.api.target import PodShape
from plimsoll.decide.shape_search import (
    MeasuredShape,
    NextShape,
    ShapesDone,
    grid,
    next_shape,
    predict,
    predicted_search,
)

MIB = 2**20
SPACE = ShapeSearch(
    cpu=CpuRange(min=0.25, max=4.0),
    memory=MemoryRange(min=128 * MIB, max=2048 * MIB),
    steps=5,
    max_shapes=8,
)
START = PodShape(cpu=1.0, memory=512 * MIB)
COST = Cost()


def linear(
    shape: PodShape, cpu_per: float, mem_fixed: float, mem_per: float, share: float = 0.9
) -> MeasuredShape:
    """A target whose ceiling is where its first resource reaches `share` of its limit."""
    by_cpu = share * shape.cpu / cpu_per
    by_mem = (share * shape.memory - mem_fixed) / mem_per
    level = int(min(by_cpu, by_mem))
    limited = LimitedBy.CPU if by_cpu <= by_mem else LimitedBy.MEMORY
    return MeasuredShape(shape, level, limited, cpu_per * level, mem_fixed + mem_per * level)


def test_the_grid_is_geometric_and_holds_the_start() -> None:
    cpus, mems = grid(SPACE, START)
    assert cpus == [0.25, 0.5, 1.0, 2.0, 4.0]
    assert mems == [128 * MIB, 256 * MIB, 512 * MIB, 1024 * MIB, 2048 * MIB]
    odd = PodShape(cpu=0.75, memory=300 * MIB)
    cpus, mems = grid(SPACE, odd)
    assert 0.75 in cpus
    assert 300 * MIB in mems


def test_the_first_shape_is_target_resources() -> None:
    choice = next_shape(SPACE, START, COST, [])
    assert isinstance(choice, NextShape)
    assert choice.shape == START
    assert choice.predicted is None


def test_memory_bound_with_idle_cpu_grows_memory_or_shrinks_cpu() -> None:
    measured = [linear(START, cpu_per=0.0005, mem_fixed=30 * MIB, mem_per=2 * MIB)]
    assert measured[0].limited_by is LimitedBy.MEMORY
    choice = next_shape(SPACE, START, COST, measured)
    assert isinstance(choice, NextShape)
    assert choice.shape in (
        PodShape(cpu=1.0, memory=1024 * MIB),
        PodShape(cpu=0.5, memory=512 * MIB),
    )
    assert choice.predicted is not None
    assert choice.predicted > 0


def test_cpu_bound_with_spare_memory_grows_cpu_or_shrinks_memory() -> None:
    measured = [linear(START, cpu_per=0.002, mem_fixed=40 * MIB, mem_per=0.1 * MIB)]
    assert measured[0].limited_by is LimitedBy.CPU
    choice = next_shape(SPACE, START, COST, measured)
    assert isinstance(choice, NextShape)
    assert choice.shape in (
        PodShape(cpu=2.0, memory=512 * MIB),
        PodShape(cpu=1.0, memory=256 * MIB),
    )


def test_a_latency_bound_shape_stops_the_search() -> None:
    measured = [MeasuredShape(START, 300, LimitedBy.NEITHER, 0.3, 100 * MIB)]
    done = next_shape(SPACE, START, COST, measured)
    assert isinstance(done, ShapesDone)
    assert done.latency_bound
    assert "more resources will not help" in done.reason


def test_unknown_limits_and_no_ceiling_stop_with_a_reason() -> None:
    unknown = next_shape(SPACE, START, COST, [MeasuredShape(START, 300, LimitedBy.UNKNOWN)])
    assert isinstance(unknown, ShapesDone)
    assert "unknown" in unknown.reason
    none = next_shape(SPACE, START, COST, [MeasuredShape(START, None, LimitedBy.CPU)])
    assert isinstance(none, ShapesDone)
    assert "no level passed" in none.reason


def test_max_shapes_stops_the_search() -> None:
    small = SPACE.model_copy(update={"max_shapes": 2})
    measured = [linear(START, 0.0005, 30 * MIB, 2 * MIB)]
    first = next_shape(small, START, COST, measured)
    assert isinstance(first, NextShape)
    measured.append(linear(first.shape, 0.0005, 30 * MIB, 2 * MIB))
    done = next_shape(small, START, COST, measured)
    assert isinstance(done, ShapesDone)
    assert "maxShapes (2)" in done.reason


def test_prediction_is_exact_for_a_linear_target_once_two_shapes_are_measured() -> None:
    measured = [
        linear(START, 0.0005, 30 * MIB, 2 * MIB),
        linear(PodShape(cpu=1.0, memory=1024 * MIB), 0.0005, 30 * MIB, 2 * MIB),
    ]
    target = PodShape(cpu=1.0, memory=2048 * MIB)
    truth = linear(target, 0.0005, 30 * MIB, 2 * MIB).level
    assert truth is not None
    predicted = predict(measured, target)
    assert predicted is not None
    assert abs(predicted - truth) <= 0.02 * truth


def test_a_predicted_search_starts_at_the_prediction_with_a_small_factor() -> None:
    base = Search(start=100, precision=0.1)
    guided = predicted_search(base, 850)
    assert guided.start == 850
    assert guided.factor == 1.1
    assert guided.precision == base.precision
    assert guided.repeats == base.repeats
    assert predicted_search(base, None) == base


@st.composite
def targets(draw: st.DrawFn) -> tuple[float, float, float]:
    cpu_per = draw(st.floats(0.0002, 0.01))
    mem_fixed = draw(st.floats(0, 60)) * MIB
    mem_per = draw(st.floats(0.02, 4)) * MIB
    return cpu_per, mem_fixed, mem_per


@settings(max_examples=150, deadline=None)
@given(targets())
def test_the_search_always_ends_within_max_shapes_on_distinct_grid_shapes(
    target: tuple[float, float, float],
) -> None:
    cpus, mems = grid(SPACE, START)
    measured: list[MeasuredShape] = []
    for _ in range(SPACE.max_shapes + 1):
        choice = next_shape(SPACE, START, COST, measured)
        if isinstance(choice, ShapesDone):
            break
        assert choice.shape.cpu in cpus
        assert choice.shape.memory in mems
        assert all(choice.shape != m.shape for m in measured)
        measured.append(linear(choice.shape, *target))
    else:
        raise AssertionError("the search did not stop at maxShapes")
    assert len(measured) <= SPACE.max_shapes


@settings(max_examples=100, deadline=None)
@given(targets())
def test_each_move_follows_the_limit(target: tuple[float, float, float]) -> None:
    first = linear(START, *target)
    choice = next_shape(SPACE, START, COST, [first])
    if not isinstance(choice, NextShape):
        return
    if first.limited_by is LimitedBy.MEMORY:
        grew_memory = choice.shape.memory > START.memory and choice.shape.cpu == START.cpu
        shrank_cpu = choice.shape.cpu < START.cpu and choice.shape.memory == START.memory
        assert grew_memory or shrank_cpu
    else:
        grew_cpu = choice.shape.cpu > START.cpu and choice.shape.memory == START.memory
        shrank_memory = choice.shape.memory < START.memory and choice.shape.cpu == START.cpu
        assert grew_cpu or shrank_memory


def test_one_shape_own_slopes_separate_the_fixed_part_from_the_cost_per_unit() -> None:
    # 100 MiB of runtime + 1 MiB per unit, limited by memory at 400 units of 512Mi × 0.98.
    shape = PodShape(cpu=1.0, memory=512 * MIB)
    one = MeasuredShape(
        shape,
        400,
        LimitedBy.MEMORY,
        cpu_used=0.2,
        memory_used=500 * MIB,
        cpu_slope=0.0005,
        memory_slope=1.0 * MIB,
    )
    bigger = PodShape(cpu=1.0, memory=1024 * MIB)
    predicted = predict([one], bigger)
    # share 500/512 of 1024 MiB is 1000 MiB; less 100 fixed, at 1 MiB per unit: 900.
    assert predicted == 900
    without = MeasuredShape(shape, 400, LimitedBy.MEMORY, cpu_used=0.2, memory_used=500 * MIB)
    assert predict([without], bigger) == 800  # all of it per unit: proportional
