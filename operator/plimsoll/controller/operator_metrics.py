"""The operator's own Prometheus metrics: runs by phase, steps by verdict, step duration,
and the latest results (`result_metrics`).

Fed by the run supervisor (`plimsoll.controller.supervisor`) as phases change and steps
finish, and served as Prometheus text on `/metrics` (port PLIMSOLL_METRICS_PORT,
9090 in the Helm chart). Written out by hand: three families do not justify
another dependency, and the text format is small and stable.
"""

from __future__ import annotations

import bisect
from collections import Counter

import aiohttp.web

from plimsoll.api.status import CapacityTestStatus, Phase
from plimsoll.api.step import Verdict
from plimsoll.controller.result_metrics import ResultGauges

BUCKETS = (1.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0)


class OperatorMetrics:
    def __init__(self) -> None:
        self.phases: dict[str, Phase] = {}  # resource uid -> its current phase
        self.steps: Counter[str] = Counter()
        self._bucket_counts = [0] * (len(BUCKETS) + 1)
        self._duration_sum = 0.0
        self.results = ResultGauges()

    def record_result(self, namespace: str, name: str, status: CapacityTestStatus) -> None:
        """A run ended: its ceilings, regression verdicts and finish time become gauges."""
        self.results.record(namespace, name, status)

    def set_phase(self, uid: str, phase: Phase | None) -> None:
        if phase is None:
            self.phases.pop(uid, None)
        else:
            self.phases[uid] = phase

    def step(self, verdict: Verdict, seconds: float) -> None:
        self.steps[verdict.value] += 1
        self._bucket_counts[bisect.bisect_left(BUCKETS, seconds)] += 1
        self._duration_sum += seconds

    def render(self) -> str:
        lines = [
            "# HELP plimsoll_runs CapacityTests watched by this operator, by phase.",
            "# TYPE plimsoll_runs gauge",
        ]
        by_phase = Counter(p.value for p in self.phases.values())
        lines += [f'plimsoll_runs{{phase="{p.value}"}} {by_phase.get(p.value, 0)}' for p in Phase]
        lines += [
            "# HELP plimsoll_steps_total Steps (trials) judged, by verdict.",
            "# TYPE plimsoll_steps_total counter",
        ]
        lines += [
            f'plimsoll_steps_total{{verdict="{v.value}"}} {self.steps.get(v.value, 0)}'
            for v in Verdict
        ]
        lines += [
            "# HELP plimsoll_step_duration_seconds Wall time of one step, warm-up included.",
            "# TYPE plimsoll_step_duration_seconds histogram",
        ]
        cumulative = 0
        for bound, count in zip(BUCKETS, self._bucket_counts, strict=False):
            cumulative += count
            lines.append(f'plimsoll_step_duration_seconds_bucket{{le="{bound}"}} {cumulative}')
        total = sum(self._bucket_counts)
        lines.append(f'plimsoll_step_duration_seconds_bucket{{le="+Inf"}} {total}')
        lines.append(f"plimsoll_step_duration_seconds_sum {self._duration_sum}")
        lines.append(f"plimsoll_step_duration_seconds_count {total}")
        lines += self.results.render()
        return "\n".join(lines) + "\n"


async def serve_metrics(metrics: OperatorMetrics, host: str, port: int) -> aiohttp.web.AppRunner:
    async def handle(_: aiohttp.web.Request) -> aiohttp.web.Response:
        return aiohttp.web.Response(text=metrics.render(), content_type="text/plain")

    app = aiohttp.web.Application()
    app.router.add_get("/metrics", handle)
    runner = aiohttp.web.AppRunner(app, access_log=None)
    await runner.setup()
    await aiohttp.web.TCPSite(runner, host, port).start()
    return runner
