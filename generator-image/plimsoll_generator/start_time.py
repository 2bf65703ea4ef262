"""Waiting for a trial's start time, so that every generator begins together.

The runner names the start as Unix time on this generator's own clock
(`TrialRequest.start_at`, `plimsoll.decide.clock`). The drivers are built first and
the wait comes last, so a slow build does not make this generator late; a request
that arrives after the start time begins at once and says how late it was.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

# The runner asks for a start well under a second ahead. One a minute or more away is a
# clock or a caller gone wrong, and the trial slot would sit idle until then.
MAX_LEAD_SECONDS = 60.0


def check_lead(start_at: float | None) -> None:
    """Raises ValueError when `start_at` is further ahead than any runner asks for."""
    if start_at is not None and start_at - time.time() > MAX_LEAD_SECONDS:
        ahead = start_at - time.time()
        raise ValueError(
            f"startAt is {ahead:.0f} s ahead of this generator's clock, more than "
            f"{MAX_LEAD_SECONDS:.0f} s: its clock or the runner's is wrong"
        )


async def wait_for_start(start_at: float | None, abort: asyncio.Event) -> float:
    """Sleep until `start_at` (or until `abort` is set); how many seconds late it was."""
    if start_at is None:
        return 0.0
    delay = start_at - time.time()
    if delay > 0:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(abort.wait(), delay)
    return max(0.0, time.time() - start_at)  # a busy loop wakes a little late, too
