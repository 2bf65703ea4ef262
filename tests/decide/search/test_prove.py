"""The proof strategy: one full-length trial at the level, then the answer."""

from __future__ import annotations

import pytest

from bench.simulated_targets import record
from plimsoll.api.spec import Search, Trial
from plimsoll.api.step import TrialKind, Verdict
from plimsoll.decide.search import Finished, NextTrial, next_action, noise_free_bound

SEARCH = Search.model_validate({"strategy": "prove", "level": 600})
TRIAL = Trial.model_validate({"duration": "120s"})


def test_a_proof_runs_one_long_trial_at_its_level() -> None:
    action = next_action(SEARCH, TRIAL, [])
    assert action == NextTrial(600, TrialKind.FULL, 120.0)
    assert noise_free_bound(SEARCH) == 1


@pytest.mark.parametrize("verdict", [Verdict.PASS, Verdict.FAIL])
def test_either_verdict_completes_the_proof_and_only_a_pass_is_a_ceiling(
    verdict: Verdict,
) -> None:
    first = next_action(SEARCH, TRIAL, [])
    assert isinstance(first, NextTrial)
    done = next_action(SEARCH, TRIAL, [record(1, first, verdict)])
    assert isinstance(done, Finished)
    assert done.ceiling.complete
    held = verdict is Verdict.PASS
    assert done.ceiling.level == (600 if held else None)
    assert done.ceiling.high == (None if held else 600)


def test_a_noisy_proof_is_repeated_at_the_same_level() -> None:
    first = next_action(SEARCH, TRIAL, [])
    assert isinstance(first, NextTrial)
    again = next_action(SEARCH, TRIAL, [record(1, first, Verdict.NOISY)])
    assert again == NextTrial(600, TrialKind.FULL, 120.0, attempt=2)


def test_an_invalid_proof_stops_incomplete() -> None:
    first = next_action(SEARCH, TRIAL, [])
    assert isinstance(first, NextTrial)
    done = next_action(SEARCH, TRIAL, [record(1, first, Verdict.INVALID)])
    assert isinstance(done, Finished)
    assert not done.ceiling.complete
    assert "invalid" in done.ceiling.stop_reason
