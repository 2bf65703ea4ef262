"""The depth scan and the cutting decode, on documents Python's `json` cannot decode."""

from __future__ import annotations

import json

import pytest

from plimsoll.shared.json_depth import CUT, deeper_than, holds_cut, nesting_depth, shallow_loads


def _nested(levels: int) -> str:
    return '{"a":' * levels + "1" + "}" * levels


# Deeper than Python's decoder goes even with the recursion limit raised as some
# libraries do for a while (hypothesis: +2,000), and within the API server's 10,000.
LEVELS = 5000


def test_a_document_beyond_pythons_decoder_is_measured_here() -> None:
    text = _nested(LEVELS)
    with pytest.raises(RecursionError):
        json.loads(text)
    assert nesting_depth(text) == LEVELS
    assert deeper_than(text, 200) == LEVELS


def test_brackets_inside_strings_do_not_count() -> None:
    text = json.dumps({"a": "{{{{[[[[", "b": ['\\"{', {"c": []}]})
    assert nesting_depth(text) == 4  # {"b": [ {"c": [] } ] }
    assert deeper_than(text, 4) is None


def test_a_shallow_document_is_not_scanned_and_not_deeper() -> None:
    assert deeper_than('{"a": [1, 2]}', 200) is None


def test_shallow_loads_cuts_only_the_deep_part() -> None:
    text = '{"items": [{"name": "ok"}, {"name": "bad", "t": ' + _nested(LEVELS) + "}]}"
    decoded = shallow_loads(text, 10)
    assert decoded["items"][0] == {"name": "ok"}
    assert decoded["items"][1]["name"] == "bad"
    assert holds_cut(decoded["items"][1])
    assert not holds_cut(decoded["items"][0])
    assert CUT not in json.dumps(decoded["items"][0])
