"""The chart's values the operator reads from its environment (PLIMSOLL_LIMITS and
PLIMSOLL_POD_TEMPLATE_POLICY as JSON, PLIMSOLL_EXTERNAL_TARGETS as a list): unset, the
safe defaults; anything else parsed or refused at start-up, naming the variable."""

from __future__ import annotations

import pytest
import typer

from plimsoll.cli.operator import _external_targets, _limits, _template_policy
from plimsoll.decide.pod_template_policy import TemplatePolicy
from plimsoll.decide.run_limits import RunLimits


def test_unset_gives_the_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PLIMSOLL_LIMITS", raising=False)
    monkeypatch.delenv("PLIMSOLL_POD_TEMPLATE_POLICY", raising=False)
    monkeypatch.delenv("PLIMSOLL_EXTERNAL_TARGETS", raising=False)
    assert _limits() == RunLimits()
    assert _template_policy() == TemplatePolicy()
    assert _external_targets() == frozenset()  # no target.url runs on the cluster


def test_set_values_are_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLIMSOLL_LIMITS", '{"pods": 3}')
    monkeypatch.setenv("PLIMSOLL_POD_TEMPLATE_POLICY", '{"tolerationKeys": ["perf"]}')
    monkeypatch.setenv("PLIMSOLL_EXTERNAL_TARGETS", "shop.example.com,10.20.0.0/16")
    assert _external_targets() == frozenset({"shop.example.com", "10.20.0.0/16"})
    assert _limits().pods == 3
    assert _template_policy().toleration_keys == frozenset({"perf"})


@pytest.mark.parametrize(
    ("variable", "text", "words"),
    [
        ("PLIMSOLL_LIMITS", "[1]", "not a JSON object of limits"),
        ("PLIMSOLL_LIMITS", '{"pod": 3}', "limits.pod: not a limit"),
        ("PLIMSOLL_POD_TEMPLATE_POLICY", "{", "PLIMSOLL_POD_TEMPLATE_POLICY"),
        ("PLIMSOLL_POD_TEMPLATE_POLICY", '{"nodeLabels": "a"}', "must be a list of names"),
        ("PLIMSOLL_EXTERNAL_TARGETS", "10.0.0.0/40", "'10.0.0.0/40' is not a network"),
    ],
)
def test_bad_values_stop_start_up_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, text: str, words: str
) -> None:
    monkeypatch.setenv(variable, text)
    read = {
        "PLIMSOLL_LIMITS": _limits,
        "PLIMSOLL_POD_TEMPLATE_POLICY": _template_policy,
        "PLIMSOLL_EXTERNAL_TARGETS": _external_targets,
    }[variable]
    with pytest.raises(typer.BadParameter, match=variable) as raised:
        read()
    assert words in str(raised.value)
