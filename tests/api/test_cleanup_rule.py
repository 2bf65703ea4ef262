"""`spec.cleanup`: one rule for whether a run's pieces stay, which the local runner and
the operator both apply (issue 53: it was written twice, once negated)."""

import pytest

from plimsoll.api.spec import Cleanup


@pytest.mark.parametrize(
    ("cleanup", "succeeded", "kept"),
    [
        (Cleanup.ALWAYS, True, False),
        (Cleanup.ALWAYS, False, False),
        (Cleanup.ON_SUCCESS, True, False),
        (Cleanup.ON_SUCCESS, False, True),  # kept to look at what went wrong
        (Cleanup.NEVER, True, True),
        (Cleanup.NEVER, False, True),
    ],
)
def test_what_stays_after_a_run(cleanup: Cleanup, succeeded: bool, kept: bool) -> None:
    assert cleanup.keeps(succeeded) is kept
