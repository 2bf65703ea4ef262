"""Per-unit costs in their units: memory in KiB/MiB, CPU to three significant digits."""

import pytest

from plimsoll.api.report import UnitCost
from plimsoll.report.markdown import _ENV
from plimsoll.report.sentence import format_quantity


@pytest.mark.parametrize(
    ("value", "unit", "shown"),
    [
        (286748.4, "bytes", "280 KiB"),
        (17260.0, "bytes", "17 KiB"),
        (3.5 * 2**20, "bytes", "3.5 MiB"),
        (512.0, "bytes", "512 B"),
        (3.5812, "CPU-ms", "3.58 CPU-ms"),
        (0.14321, "millicores", "0.143 millicores"),
        (1234.5, "millicores", "1,234 millicores"),
    ],
)
def test_a_quantity_is_shown_in_its_unit(value: float, unit: str, shown: str) -> None:
    assert format_quantity(value, unit) == shown


def test_the_report_template_uses_it_for_unit_costs() -> None:
    cost = UnitCost(
        variant="default", name="memory per user", value=286748.4, unit="bytes", basis="b"
    )
    row = _ENV.from_string("| {{ u.value | quantity(u.unit) }} |").render(u=cost)
    assert row == "| 280 KiB |"
