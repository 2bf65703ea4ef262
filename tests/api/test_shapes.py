"""spec.shapes and spec.cost: each shape is a variant of target.resources alone; bad
combinations are errors that name the field and the fix."""

import copy
from typing import Any

import pytest

from plimsoll.api import SpecError, load_capacity_test
from plimsoll.api.shapes import DEFAULT_PER_CPU_HOUR, Cost, shape_name
from plimsoll.api.target import PodShape
from tests.api.test_spec_errors import MINIMAL

MIB = 2**20
SEARCH = {
    "cpu": {"min": "250m", "max": "2"},
    "memory": {"min": "256Mi", "max": "2Gi"},
    "steps": 4,
    "maxShapes": 5,
}


def document(**spec: Any) -> dict[str, Any]:
    doc = copy.deepcopy(MINIMAL)
    doc["spec"].update(spec)
    return doc


def problems(**spec: Any) -> str:
    with pytest.raises(SpecError) as caught:
        load_capacity_test(document(**spec))
    return "\n".join(caught.value.problems)


def test_explicit_shapes_are_variants_that_change_only_the_resources() -> None:
    test = load_capacity_test(
        document(
            shapes={
                "explicit": [{"cpu": "1", "memory": "512Mi"}, {"cpu": "500m", "memory": "1Gi"}]
            },
            target={
                "command": ["./server"],
                "env": {"MODE": "x"},
                "resources": {"cpu": "1", "memory": "512Mi"},
            },
        )
    )
    specs = test.spec.variant_specs()
    assert list(specs) == ["c1-m512mi", "c500m-m1gi"]
    second = specs["c500m-m1gi"].target
    assert second.resources == PodShape(cpu=0.5, memory=1024 * MIB)
    assert second.command == ["./server"]
    assert second.env == {"MODE": "x"}
    assert test.spec.baseline_name == "c1-m512mi"
    # The stored spec stays what the user wrote: no variants appear in it.
    assert "variants" not in test.spec.to_wire() or not test.spec.to_wire()["variants"]


def test_a_search_bounds_the_grid_and_keeps_its_defaults() -> None:
    spec = load_capacity_test(document(shapes={"search": SEARCH})).spec
    assert spec.shapes is not None
    assert spec.shapes.search is not None
    assert spec.shapes.search.cpu.min == 0.25
    assert spec.shapes.search.max_shapes == 5
    assert spec.compared_variants == []  # chosen as the search goes
    assert spec.baseline_name == "c1-m512mi"  # it starts from target.resources


def test_cost_defaults_price_cpu_and_memory_per_hour() -> None:
    cost = load_capacity_test(document()).spec.cost
    assert cost.per_cpu_hour == DEFAULT_PER_CPU_HOUR
    shape = PodShape(cpu=2.0, memory=2**30)
    assert cost.per_hour(shape) == pytest.approx(2 * cost.per_cpu_hour + cost.per_gib_hour)
    custom = load_capacity_test(document(cost={"perCpuHour": 0.03, "perGibHour": 0.004})).spec
    assert custom.cost == Cost(per_cpu_hour=0.03, per_gib_hour=0.004)


def test_shapes_and_variants_together_are_refused() -> None:
    text = problems(
        shapes={"search": SEARCH}, variants=[{"name": "a"}, {"name": "b", "env": {"X": "1"}}]
    )
    assert "shapes and variants: give one of them" in text


def test_min_above_max_names_the_field() -> None:
    bad = {**SEARCH, "cpu": {"min": "4", "max": "1"}}
    text = problems(shapes={"search": bad})
    assert "cpu.min (4) is above cpu.max (1)" in text
    bad = {**SEARCH, "memory": {"min": "2Gi", "max": "1Gi"}}
    assert "memory.min (2Gi) is above memory.max (1Gi)" in problems(shapes={"search": bad})


def test_a_search_must_contain_target_resources() -> None:
    narrow = {**SEARCH, "cpu": {"min": "2", "max": "4"}}
    assert "outside min … max" in problems(shapes={"search": narrow})


def test_explicit_and_search_together_or_neither_are_refused() -> None:
    both = {"explicit": [{"cpu": "1", "memory": "1Gi"}] * 2, "search": SEARCH}
    assert "either 'explicit'" in problems(shapes=both)
    assert "either 'explicit'" in problems(shapes={})


def test_a_shape_listed_twice_is_refused() -> None:
    twice = {"explicit": [{"cpu": "1", "memory": "1Gi"}, {"cpu": "1000m", "memory": "1024Mi"}]}
    assert "more than once" in problems(shapes=twice)


def test_shapes_of_an_external_url_are_refused() -> None:
    text = problems(shapes={"search": SEARCH}, target={"url": "http://127.0.0.1:9"})
    assert "target.url" in text


def test_negative_prices_are_refused() -> None:
    assert "perCpuHour" in problems(cost={"perCpuHour": -1})


def test_shape_names_are_valid_variant_names() -> None:
    assert shape_name(PodShape(cpu=0.25, memory=300 * MIB)) == "c250m-m300mi"
    assert shape_name(PodShape(cpu=16.0, memory=64 * 2**30)) == "c16-m64gi"
