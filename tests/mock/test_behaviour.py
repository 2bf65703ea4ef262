"""The samplers the mock draws from match the configured distributions.

The statistics run in-process on the same `Behaviour` objects the handlers use
(a few thousand draws in milliseconds); test_routes checks over real HTTP that
the drawn time is the time a call is held.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from plimsoll.api.upstream import Errors, Latency, SizeChoice
from plimsoll.shared.distributions import expected_quantile
from plimsoll_mock.behaviour import Behaviour

N = 5000


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@pytest.mark.parametrize(
    "latency",
    [
        {"p50": "1.2s", "p95": "12s", "max": "50s"},  # the MCP gateway seed's slow tools
        {"fixed": "1s", "jitter": "500ms"},
        {
            "quantiles": [
                {"q": 0.5, "value": "15ms"},
                {"q": 0.99, "value": "120ms"},
                {"q": 1.0, "value": "200ms"},
            ]
        },
    ],
)
def test_latency_percentiles_match_the_model(latency: dict[str, Any]) -> None:
    model = Latency.model_validate(latency)
    behaviour = Behaviour(model, Errors(), None, random.Random(1))
    draws = [behaviour.latency() for _ in range(N)]
    for q in (0.5, 0.95):
        assert quantile(draws, q) == pytest.approx(expected_quantile(model, q), rel=0.10)
    if model.max is not None:
        assert max(draws) <= model.max


def test_error_fraction_and_size_mix() -> None:
    behaviour = Behaviour(
        Latency(fixed=0),
        Errors(fraction=0.08),
        [SizeChoice(bytes=4096, weight=98), SizeChoice(bytes=1 << 20, weight=2)],
        random.Random(2),
    )
    failures = sum(behaviour.fails() is not None for _ in range(N))
    big = sum(behaviour.size() == 1 << 20 for _ in range(N))
    # five standard deviations of the binomial either side
    assert abs(failures - 0.08 * N) < 5 * (N * 0.08 * 0.92) ** 0.5
    assert abs(big - 0.02 * N) < 5 * (N * 0.02 * 0.98) ** 0.5
