"""The one load split, as the runner (across generators) and each generator (across its
processes) apply it: levels add up, user ids and seeds never repeat over both hops."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plimsoll.api.trial import TrialRequest
from plimsoll.api.workload import LoadModel
from plimsoll.shared.load_split import ADDRESS_STRIDE, split_load, split_request, user_count


def request(level: float, model: str, **extra: Any) -> TrialRequest:
    return TrialRequest.model_validate(
        {
            "level": level,
            "duration": 1,
            "targetUrl": "http://127.0.0.1:1",
            "workload": {"model": model, "mix": [{"name": "a"}]},
            **extra,
        }
    )


@given(st.floats(0, 1e6, allow_nan=False), st.integers(1, 64))
def test_rates_sum_to_the_level_the_last_part_taking_the_remainder(
    level: float, parts: int
) -> None:
    shares = split_load(level, parts, LoadModel.RATE)
    assert len(shares) == parts
    assert sum(s.level for s in shares) == pytest.approx(level, rel=1e-12, abs=1e-9)
    assert len({s.level for s in shares[:-1]}) <= 1  # equal, but for the last


@given(st.integers(0, 100_000), st.integers(1, 64), st.integers(0, 1000))
def test_users_sum_exactly_with_contiguous_offsets(users: int, parts: int, first: int) -> None:
    shares = split_load(users, parts, LoadModel.USERS, first_user=first)
    counts = [int(s.level) for s in shares]
    assert sum(counts) == users
    assert max(counts) - min(counts) <= 1
    assert counts == sorted(counts, reverse=True)  # the first parts take the extra users
    offset = first
    for share, count in zip(shares, counts, strict=True):
        assert share.first_user == offset
        offset += count


@given(
    st.sampled_from(["rate", "users"]),
    st.integers(1, 300),
    st.integers(1, 8),
    st.integers(1, 8),
    st.integers(0, 10_000),
)
def test_two_hops_give_every_process_its_own_users_seed_and_addresses(
    model: str, level: int, generators: int, processes: int, seed: int
) -> None:
    top = request(level, model, seed=seed, firstUser=0)
    leaves = [
        leaf for part in split_request(top, generators) for leaf in split_request(part, processes)
    ]
    assert len(leaves) == generators * processes
    assert sum(leaf.level for leaf in leaves) == pytest.approx(level)
    assert len({leaf.seed for leaf in leaves}) == len(leaves)
    if model == "users":
        ids = [
            u for leaf in leaves for u in range(leaf.first_user, leaf.first_user + int(leaf.level))
        ]
        assert sorted(ids) == list(range(level))  # every user once, numbered from 0
    else:
        assert len({leaf.client_ip_offset for leaf in leaves}) == len(leaves)


def test_one_generator_with_processes_spaces_their_addresses_a_stride_apart() -> None:
    parts = split_request(request(30, "rate", seed=7), 3)
    assert [p.client_ip_offset for p in parts] == [0, ADDRESS_STRIDE, 2 * ADDRESS_STRIDE]
    assert [p.seed for p in parts] == [7 * 65_537, 7 * 65_537 + 1, 7 * 65_537 + 2]


def test_users_keep_the_request_offset_and_number_on_from_its_first_user() -> None:
    parts = split_request(request(7, "users", firstUser=100, clientIpOffset=5), 3)
    assert [p.level for p in parts] == [3.0, 2.0, 2.0]
    assert [p.first_user for p in parts] == [100, 103, 105]
    assert {p.client_ip_offset for p in parts} == {5}  # a user's address follows its id


def test_a_fractional_or_negative_user_level_and_no_parts_are_refused() -> None:
    with pytest.raises(ValueError, match="whole number"):
        user_count(10.5)
    with pytest.raises(ValueError, match="negative"):
        user_count(-1)
    with pytest.raises(ValueError, match="at least one part"):
        split_load(10, 0, LoadModel.RATE)
