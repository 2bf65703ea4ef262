"""Firing `trial.faults` during a trial, on the platform's clock, beside the load.

Called by `plimsoll.run.step` for every full trial with faults: each fault fires
`warm_up + at` seconds after the trial was posted (the generators measure from
the end of their warm-up), through the platform's `FaultInjector`. What fired,
and what it took away, goes back to the step to be judged
(`plimsoll.decide.fault_windows`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

from plimsoll.api.faults import Fault
from plimsoll.platforms.base import FaultInjector

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Fired:
    fault: Fault
    at: float  # seconds into the measured window, as fired (not as planned)
    taken: list[str]


async def fire_faults(
    injector: FaultInjector, faults: Sequence[Fault], warm_up: float
) -> list[Fired]:
    """Fire `faults` in order of `at`; started as the trial is posted."""
    started = time.monotonic()
    fired = []
    for fault in sorted(faults, key=lambda f: f.at):
        delay = started + warm_up + fault.at - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        at = time.monotonic() - started - warm_up
        taken = await injector.fire(fault)
        log.info("fault: %s (took %s)", fault.describe(), ", ".join(taken) or "nothing")
        fired.append(Fired(fault, at, taken))
    return fired
