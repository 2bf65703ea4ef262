from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plimsoll.api.trial import TrialRequest
from plimsoll_generator.split import split_rate, split_request, split_users, user_count


@given(st.floats(0, 1e6, allow_nan=False), st.integers(1, 64))
def test_rates_sum_exactly_to_the_level(level: float, parts: int) -> None:
    shares = split_rate(level, parts)
    assert len(shares) == parts
    assert sum(shares) == pytest.approx(level, rel=1e-12, abs=1e-9)


@given(st.integers(0, 100_000), st.integers(1, 64), st.integers(0, 1000))
def test_users_sum_exactly_with_contiguous_offsets(users: int, parts: int, first: int) -> None:
    shares = split_users(users, parts, first)
    assert sum(count for count, _ in shares) == users
    assert max(c for c, _ in shares) - min(c for c, _ in shares) <= 1
    offset = first
    for count, start in shares:
        assert start == offset
        offset += count


def test_a_fractional_user_level_is_refused() -> None:
    with pytest.raises(ValueError, match="whole number"):
        user_count(10.5)


def test_split_request_keeps_users_and_offsets() -> None:
    request = TrialRequest.model_validate(
        {
            "level": 7,
            "duration": 1,
            "targetUrl": "http://127.0.0.1:1",
            "firstUser": 100,
            "workload": {"model": "users", "mix": [{"name": "a"}]},
        }
    )
    parts = split_request(request, 3)
    assert [p.level for p in parts] == [3.0, 2.0, 2.0]
    assert [p.first_user for p in parts] == [100, 103, 105]
    assert len({p.seed for p in parts}) == 3
