"""Prometheus text for `/metrics`: trials by state and the last trial's figures.

The control server updates it when a trial ends; scraping it during a trial
shows whether one is running. Hand-written: a dozen lines of text do not need
a client library in the image.
"""

from __future__ import annotations

from plimsoll.api.trial import TrialResult


class Metrics:
    def __init__(self, processes: int) -> None:
        self.processes = processes
        self.running = 0
        self.trials: dict[str, int] = {}
        self.sent = 0
        self.dropped = 0
        self.cpu_seconds = 0.0
        self.last: TrialResult | None = None

    def finished(self, result: TrialResult) -> None:
        self.running = 0
        self.trials[result.state.value] = self.trials.get(result.state.value, 0) + 1
        self.sent += result.sent
        self.dropped += result.dropped_starts
        self.cpu_seconds += result.cpu_seconds
        self.last = result

    def render(self) -> str:
        lines = [
            "# TYPE plimsoll_generator_processes gauge",
            f"plimsoll_generator_processes {self.processes}",
            "# TYPE plimsoll_generator_trial_running gauge",
            f"plimsoll_generator_trial_running {self.running}",
            "# TYPE plimsoll_generator_trials_total counter",
        ]
        for state, n in sorted(self.trials.items()):
            lines.append(f'plimsoll_generator_trials_total{{state="{state}"}} {n}')
        lines += [
            "# TYPE plimsoll_generator_requests_sent_total counter",
            f"plimsoll_generator_requests_sent_total {self.sent}",
            "# TYPE plimsoll_generator_dropped_starts_total counter",
            f"plimsoll_generator_dropped_starts_total {self.dropped}",
            "# TYPE plimsoll_generator_cpu_seconds_total counter",
            f"plimsoll_generator_cpu_seconds_total {self.cpu_seconds:.6f}",
        ]
        if self.last is not None:
            lines += [
                "# TYPE plimsoll_generator_last_trial_cpu_fraction gauge",
                f"plimsoll_generator_last_trial_cpu_fraction {self.last.cpu_fraction:.6f}",
            ]
        return "\n".join(lines) + "\n"
