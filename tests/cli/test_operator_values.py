"""The chart's values the operator reads from its environment as JSON (PLIMSOLL_LIMITS,
PLIMSOLL_POD_TEMPLATE_POLICY): unset, the safe defaults; anything else parsed or refused
at start-up, naming the variable."""

from __future__ import annotations

import pytest
import typer

from plimsoll.cli.operator import _limits, _template_policy
from plimsoll.decide.pod_template_policy import TemplatePolicy
from plimsoll.decide.run_limits import RunLimits


def test_unset_gives_the_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PLIMSOLL_LIMITS", raising=False)
    monkeypatch.delenv("PLIMSOLL_POD_TEMPLATE_POLICY", raising=False)
    assert _limits() == RunLimits()
    assert _template_policy() == TemplatePolicy()


def test_set_values_are_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLIMSOLL_LIMITS", '{"pods": 3}')
    monkeypatch.setenv("PLIMSOLL_POD_TEMPLATE_POLICY", '{"tolerationKeys": ["perf"]}')
    assert _limits().pods == 3
    assert _template_policy().toleration_keys == frozenset({"perf"})


@pytest.mark.parametrize(
    ("variable", "text", "words"),
    [
        ("PLIMSOLL_LIMITS", "[1]", "not a JSON object of limits"),
        ("PLIMSOLL_LIMITS", '{"pod": 3}', "limits.pod: not a limit"),
        ("PLIMSOLL_POD_TEMPLATE_POLICY", "{", "PLIMSOLL_POD_TEMPLATE_POLICY"),
        ("PLIMSOLL_POD_TEMPLATE_POLICY", '{"nodeLabels": "a"}', "must be a list of names"),
    ],
)
def test_bad_values_stop_start_up_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, text: str, words: str
) -> None:
    monkeypatch.setenv(variable, text)
    read = _limits if variable == "PLIMSOLL_LIMITS" else _template_policy
    with pytest.raises(typer.BadParameter, match=variable) as raised:
        read()
    assert words in str(raised.value)
