"""One table of the (protocol, model) pairs the generator drives (issue 53, item 4): the
model refuses any other pair, and the `users` behaviour anywhere but MCP, before a trial
would; the generator's own driver table agrees with it."""

from __future__ import annotations

import itertools

import pytest

from plimsoll.api.workload import RUNNABLE, LoadModel, Protocol, runnable_problem


@pytest.mark.parametrize(("protocol", "model"), list(itertools.product(Protocol, LoadModel)))
def test_every_pair_is_either_in_the_table_or_refused_naming_what_runs(
    protocol: Protocol, model: LoadModel
) -> None:
    problem = runnable_problem(protocol, model, has_users=False)
    if (protocol, model) in RUNNABLE:
        assert problem is None
    else:
        assert problem is not None
        assert f"protocol {protocol.value!r} with model {model.value!r} cannot run" in problem
        for runs in (m for (p, m) in RUNNABLE if p is protocol):
            assert f"{protocol.value}+{runs.value}" in problem


def test_the_user_behaviour_is_refused_for_http_s_closed_loop_only() -> None:
    assert runnable_problem(Protocol.MCP, LoadModel.USERS, has_users=True) is None
    assert runnable_problem(Protocol.HTTP, LoadModel.RATE, has_users=True) is None
    problem = runnable_problem(Protocol.HTTP, LoadModel.USERS, has_users=True)
    assert problem is not None
    assert "is built for protocol 'mcp'" in problem
    assert "a closed loop of HTTP clients" in problem


def test_the_generator_drives_each_pair_of_the_table() -> None:
    """The generator's driver choice, read without a trial: each runnable pair maps to a
    driver class, and no pair outside the table does."""
    from plimsoll_generator.trial import driver_for

    for (protocol, model), words in RUNNABLE.items():
        assert driver_for(protocol, model) is not None, words
    for protocol, model in itertools.product(Protocol, LoadModel):
        if (protocol, model) not in RUNNABLE:
            assert driver_for(protocol, model) is None, (protocol, model)
