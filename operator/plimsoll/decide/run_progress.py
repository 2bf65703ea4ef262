"""How far a run has come: "3 of at most 16 steps done, about 6 min left at most".

The search cannot know how many steps it will take, but it can bound them: each
variant takes at most `noise_free_bound` trials when no step is noisy, and never more
than `search.maxTrials`. The live view states the bound ("at most"), moving to the
hard cap once noisy repeats pass the first, and estimates the time left from the
wall time the finished steps took (the spec's trial length before any did). A guided
shape search chooses its shapes as it goes: no bound is claimed for it. Steps are
counted done, not numbered: the step tables number them from 0 (their index). Pure.
"""

from __future__ import annotations

from dataclasses import dataclass

from plimsoll.api.spec import CapacityTestSpec
from plimsoll.decide.search import noise_free_bound


@dataclass(frozen=True)
class RunProgress:
    done: int  # steps finished
    at_most: int | None  # the most steps the run can take; None: no bound to claim
    seconds_left: float | None  # at most about this long, when bounded


def steps_at_most(spec: CapacityTestSpec, step: int) -> int | None:
    """The most steps the run can take, as it stands at its `step`-th (from 1)."""
    if spec.shapes is not None and spec.shapes.search is not None:
        return None
    variants = len(spec.compared_variants) or 1
    cap = spec.search.max_trials
    bound = variants * min(noise_free_bound(spec.search), cap)
    return bound if step <= bound else variants * cap


def run_progress(
    spec: CapacityTestSpec, finished: int, seconds_finished: float, seconds_into_step: float
) -> RunProgress:
    """`finished` steps took `seconds_finished` of wall time; the current one has run for
    `seconds_into_step`."""
    at_most = steps_at_most(spec, finished + 1)
    if at_most is None:
        return RunProgress(finished, None, None)
    trial = spec.trial
    per_step = (
        seconds_finished / finished if finished else trial.warm_up + trial.duration + trial.settle
    )
    left = max(0.0, (at_most - finished) * per_step - seconds_into_step)
    return RunProgress(finished, at_most, left)


def describe(progress: RunProgress) -> str:
    if progress.at_most is None:
        return f"{progress.done} steps done"
    text = f"{progress.done} of at most {progress.at_most} steps done"
    if progress.seconds_left is not None:
        text += f", about {_minutes(progress.seconds_left)} left at most"
    return text


def _minutes(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"
