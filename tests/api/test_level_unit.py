"""One table says what a level counts, for every report and decision (issue 53)."""

import pytest

from plimsoll.api.level_unit import unit_words
from plimsoll.api.replay import REPLAY_UNIT
from plimsoll.api.spec import LoadModel
from tests.localrun import short_cpu_test


@pytest.mark.parametrize(
    ("unit", "full", "short"),
    [
        ("rps", "requests per second", "requests/s"),
        ("users", "modeled users", "modeled users"),
        (REPLAY_UNIT, "percent of the logged speed", "% of the logged speed"),
        ("widgets", "widgets", "widgets"),  # not in the table: as written
    ],
)
def test_each_unit_has_its_words(unit: str, full: str, short: str) -> None:
    assert unit_words(unit) == full
    assert unit_words(unit, short=True) == short


def test_every_unit_a_spec_can_have_is_in_the_table() -> None:
    spec = short_cpu_test().spec
    for model in LoadModel:
        workload = spec.workload.model_copy(update={"model": model})
        unit = spec.model_copy(update={"workload": workload}).unit
        assert unit_words(unit) != unit, (model, unit)
