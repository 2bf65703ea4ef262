"""The proxy's swept truth: the highest level most of whose trials passed, every level
below it doing the same."""

from __future__ import annotations

from bench.truth_shaped import swept_truth
from plimsoll.api.step import Verdict

P, F, N = Verdict.PASS, Verdict.FAIL, Verdict.NOISY


def test_the_truth_is_the_last_level_of_an_unbroken_majority() -> None:
    assert swept_truth({100: [P, P, P], 110: [P, F, P], 120: [F, P, F], 130: [P, P, P]}) == 110


def test_noisy_trials_are_not_votes() -> None:
    assert swept_truth({100: [P, N, N], 110: [N, F, N]}) == 100
    assert swept_truth({100: [N, N, N]}) is None


def test_a_lowest_level_that_failed_has_no_truth() -> None:
    assert swept_truth({100: [F, F, P], 110: [P, P, P]}) is None


def test_every_level_passing_gives_the_highest() -> None:
    assert swept_truth({100: [P, P, F], 110: [P, P, P]}) == 110
