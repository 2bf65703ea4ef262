"""cancel_and_wait: the background task ends, and the caller's own cancellation survives."""

from __future__ import annotations

import asyncio

import pytest

from plimsoll.metrics.tasks import cancel_and_wait


async def _slow_to_stop(stopping: asyncio.Event) -> None:
    try:
        await asyncio.sleep(3600)
    finally:
        stopping.set()
        await asyncio.sleep(0.2)  # a clean-up that takes a while, as a sampler's last read


async def test_the_task_is_cancelled_and_the_caller_goes_on() -> None:
    task = asyncio.create_task(asyncio.sleep(3600))
    await asyncio.sleep(0)
    await cancel_and_wait(task)
    assert task.cancelled()


async def test_a_caller_cancelled_while_it_waits_is_still_cancelled() -> None:
    # Ctrl-C cancels the run's main task while it stops a sampler: the run must stop.
    stopping = asyncio.Event()
    background = asyncio.create_task(_slow_to_stop(stopping))
    went_on = False

    async def caller() -> None:
        nonlocal went_on
        await asyncio.sleep(0)
        await cancel_and_wait(background)
        went_on = True  # what swallowing the cancellation would let happen

    outer = asyncio.create_task(caller())
    await stopping.wait()
    outer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await outer
    assert not went_on
