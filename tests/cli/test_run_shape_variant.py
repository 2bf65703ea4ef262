"""`plimsoll run --variant SHAPE`: one shape of `spec.shapes` measured and priced alone.

A shape's name (`c500m-m256mi`) selects it from `shapes.explicit`, or from a guided
search's grid; any other name is refused naming the field and the names it holds. One
real run in a process of its own (the CPU-bound example, 20 ms per request: a 1.5 s
trial at 5 requests/s on 250m, which it carries) shows the report's cost table holding
that one shape, read back by `plimsoll report`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from plimsoll.api.resource import CapacityTest, SpecError
from plimsoll.api.spec import CapacityTestSpec
from plimsoll.api.units import parse_memory
from plimsoll.cli.run import _select
from tests.localrun import marked_processes, plimsoll, saved_report

TARGET = {
    "command": ["python", "examples/targets/cpu_bound.py"],
    "env": {"WORK_MS": "20"},
    "resources": {"cpu": "500m", "memory": "128Mi"},
}
EXPLICIT = [{"cpu": "500m", "memory": "128Mi"}, {"cpu": "250m", "memory": "256Mi"}]
SEARCH = {
    "cpu": {"min": "250m", "max": "1"},
    "memory": {"min": "128Mi", "max": "512Mi"},
    "steps": 3,
}


def shaped(shapes: dict[str, object]) -> CapacityTest:
    return CapacityTest.model_validate(
        {
            "apiVersion": "plimsoll.dev/v1alpha1",
            "kind": "CapacityTest",
            "metadata": {"name": "one-shape"},
            "spec": {
                "target": TARGET,
                "workload": {"model": "rate", "mix": [{"name": "work", "path": "/work"}]},
                "trial": {"duration": "1.5s", "warmUp": "0.3s"},
                "search": {"strategy": "steps", "levels": [5], "repeats": 0},
                "passWhen": {"minAchieved": "90%"},
                "noise": {"repeatWhenBusy": False},
                "generators": {"replicas": 1, "processes": 1},
                "shapes": shapes,
            },
        }
    )


def test_an_explicit_shape_is_measured_alone_and_still_validates() -> None:
    spec = _select([shaped({"explicit": EXPLICIT})], "c250m-m256mi").spec
    assert spec.shapes is not None
    assert [s.to_wire() for s in spec.shapes.explicit or []] == [EXPLICIT[1]]
    assert list(spec.variant_specs()) == ["c250m-m256mi"]
    assert spec.variant_specs()["c250m-m256mi"].target.resources == spec.shapes.explicit[0]
    # What the report saves must read back (a one-shape list is valid input too).
    assert CapacityTestSpec.model_validate(spec.to_wire()).shapes == spec.shapes


def test_a_shape_of_a_searchs_grid_is_measured_alone() -> None:
    spec = _select([shaped({"search": SEARCH})], "c1-m256mi").spec
    assert spec.shapes is not None
    assert spec.shapes.search is None
    [shape] = spec.shapes.explicit or []
    assert (shape.cpu, shape.memory) == (1.0, parse_memory("256Mi"))


@pytest.mark.parametrize(
    ("shapes", "field", "listed"),
    [
        ({"explicit": EXPLICIT}, "spec.shapes.explicit", "'c500m-m128mi', 'c250m-m256mi'"),
        ({"search": SEARCH}, "spec.shapes.search", "'c1-m128mi'"),
    ],
)
def test_a_name_that_is_no_shape_is_refused_with_the_names_there_are(
    shapes: dict[str, object], field: str, listed: str
) -> None:
    with pytest.raises(SpecError) as refused:
        _select([shaped(shapes)], "c3-m1gi")
    message = str(refused.value)
    assert field in message
    assert "'c3-m1gi'" in message
    assert listed in message


@pytest.mark.usefixtures("mark")
def test_run_variant_prices_the_one_shape_it_measured(tmp_path: Path, mark: str) -> None:
    spec = tmp_path / "shapes.yaml"
    spec.write_text(yaml.safe_dump(shaped({"explicit": EXPLICIT}).to_wire()))
    out = tmp_path / "out"
    result = plimsoll("run", str(spec), "--variant", "c250m-m256mi", "--out", str(out), "--quiet")
    assert result.returncode == 0, result.stderr[-3000:]
    saved = saved_report(out)
    assert [c["variant"] for c in saved["ceilings"]] == ["c250m-m256mi"]
    [row] = saved["shapes"]["rows"]
    assert (row["name"], row["ceiling"], row["cheapest"]) == ("c250m-m256mi", 5, True)
    # 250m at $0.0445 per CPU-hour and 256Mi at $0.0049225 per GiB-hour, over 5 requests/s.
    assert row["costPerHour"] == pytest.approx(0.25 * 0.0445 + 0.25 * 0.0049225)
    assert row["costPerThousand"] == pytest.approx(row["costPerHour"] / 5 * 1000)
    assert saved["shapes"]["headline"].endswith("the only shape measured).")
    assert "is the cheapest shape" not in saved["shapes"]["headline"]
    rendered = plimsoll("report", str(out / "report.json"))
    assert rendered.returncode == 0, rendered.stderr[-3000:]
    assert marked_processes(mark) == []
