"""The shapes in words: the headline names the cheapest shape against the starting one, and
the cost table marks it and shows each prediction beside its measured ceiling."""

from __future__ import annotations

from pathlib import Path

from plimsoll.api.shapes import ShapeResult, ShapeTable
from plimsoll.api.step import LimitedBy
from plimsoll.report.shapes import headline, shapes_markdown
from plimsoll.report.shapes_chart import shapes_figure

MIB = 2**20


def row(
    name: str, label: str, ceiling: int | None, per_k: float | None, **more: object
) -> ShapeResult:
    return ShapeResult.model_validate(
        {
            "name": name,
            "label": label,
            "cpu": 1.0,
            "memory": 512 * MIB,
            "ceiling": ceiling,
            "unit": "rps",
            "complete": True,
            "limitedBy": LimitedBy.MEMORY,
            "costPerHour": 0.05,
            "costPerThousand": per_k,
            **more,
        }
    )


def table() -> ShapeTable:
    return ShapeTable(
        rows=[
            row("c1-m512mi", "1 CPU / 512Mi", 200, 0.66),
            row(
                "c2-m1gi",
                "2 CPU / 1Gi",
                500,
                0.41,
                predicted=450,
                cheapest=True,
                limitedBy=LimitedBy.CPU,
            ),
        ],
        cheapest="c2-m1gi",
        stop_reason="2 CPU / 1Gi is the cheapest per unit and bracketed",
    )


def test_the_headline_names_the_cheapest_and_the_saving_against_the_start() -> None:
    text = headline(table(), "$", "c1-m512mi")
    assert text == (
        "2 CPU / 1Gi is the cheapest shape: $0.41 per 1,000 requests/s per hour, "
        "38% less than 1 CPU / 512Mi (memory-bound)."
    )


def test_a_latency_bound_stop_is_said_in_the_headline() -> None:
    bound = table().model_copy(update={"latency_bound": True, "stop_reason": "x is latency-bound"})
    assert headline(bound, "$", "c1-m512mi").endswith("The search stopped: x is latency-bound.")


def test_no_passing_shape_has_no_cheapest() -> None:
    empty = ShapeTable(rows=[row("c1-m512mi", "1 CPU / 512Mi", None, None)])
    assert headline(empty, "$", "c1-m512mi") == (
        "No shape passed a level: there is no cheapest shape."
    )


def test_the_table_marks_the_cheapest_and_the_prediction_against_the_measurement() -> None:
    data = table()
    data.headline = headline(data, "$", "c1-m512mi")
    text = shapes_markdown(data, "$")
    assert text.startswith("**2 CPU / 1Gi is the cheapest shape")
    assert "| **2 CPU / 1Gi** | 500 rps | cpu |" in text
    assert "450 (+11% measured)" in text
    assert "The guided search stopped: 2 CPU / 1Gi is the cheapest" in text


def test_the_chart_draws_one_bar_per_shape_the_cheapest_coloured(tmp_path: Path) -> None:
    figure = shapes_figure(table(), "$")
    bars = figure.axes[0].patches
    assert [round(b.get_height(), 2) for b in bars] == [0.66, 0.41]
    assert bars[0].get_facecolor() != bars[1].get_facecolor()
    labels = [t.get_text() for t in figure.axes[0].get_xticklabels()]
    assert labels == ["1 CPU / 512Mi", "2 CPU / 1Gi"]
    figure.savefig(tmp_path / "shapes.png")
    assert (tmp_path / "shapes.png").stat().st_size > 0
