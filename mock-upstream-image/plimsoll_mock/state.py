"""Counters and shared state of one mock process, and their Prometheus rendering.

Every connection updates these on its hot path (a dict increment per response),
and `/metrics` renders them. The runner and Prometheus read the mock's own CPU
here to tell "the mock ran out of CPU" (an invalid trial) from a slow target.
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Callable
from typing import Any, Protocol


class Stream(Protocol):
    """A held SSE stream the keep-alive ticker writes to."""

    def keep_alive(self) -> None: ...


class State:
    """Process-wide counters: requests by (route, status), in-flight calls, held streams."""

    __slots__ = (
        "connections",
        "in_flight",
        "max_in_flight",
        "requests",
        "shutting_down",
        "started",
        "streams",
    )

    def __init__(self, max_in_flight: int) -> None:
        self.max_in_flight = max_in_flight
        self.in_flight = 0
        self.requests: dict[tuple[str, int], int] = {}
        self.streams: set[Stream] = set()
        self.connections: set[Any] = set()  # every open connection, for graceful shutdown
        self.shutting_down = False
        self.started = time.time()

    def count(self, route: str, status: int) -> None:
        key = (route, status)
        self.requests[key] = self.requests.get(key, 0) + 1

    def tick_keep_alives(self) -> None:
        # One periodic pass over all streams instead of a timer per stream: ten
        # thousand held streams then cost one set, not ten thousand timer handles.
        for stream in list(self.streams):
            stream.keep_alive()


def _rss_bytes() -> int:
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:  # not Linux: fall back to the peak, which is what getrusage has
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def render_metrics(state: State, clock: Callable[[], float] = time.process_time) -> bytes:
    """The Prometheus text exposition (format 0.0.4) of `state`."""
    lines = [
        "# HELP plimsoll_mock_requests_total Requests answered, by route and HTTP status.",
        "# TYPE plimsoll_mock_requests_total counter",
    ]
    for (route, status), n in sorted(state.requests.items()):
        code = str(status) if status else "dropped"  # 0: closed without an answer
        lines.append(
            f'plimsoll_mock_requests_total{{route="{_escape(route)}",status="{code}"}} {n}'
        )
    lines += [
        "# HELP plimsoll_mock_in_flight Calls received, not yet answered (held streams too).",
        "# TYPE plimsoll_mock_in_flight gauge",
        f"plimsoll_mock_in_flight {state.in_flight}",
        "# HELP plimsoll_mock_held_streams SSE streams held open.",
        "# TYPE plimsoll_mock_held_streams gauge",
        f"plimsoll_mock_held_streams {len(state.streams)}",
        "# HELP process_cpu_seconds_total User and system CPU time of the mock process.",
        "# TYPE process_cpu_seconds_total counter",
        f"process_cpu_seconds_total {clock():.6f}",
        "# HELP process_resident_memory_bytes Resident memory of the mock process.",
        "# TYPE process_resident_memory_bytes gauge",
        f"process_resident_memory_bytes {_rss_bytes()}",
        "# HELP process_start_time_seconds Start time of the mock process since the epoch.",
        "# TYPE process_start_time_seconds gauge",
        f"process_start_time_seconds {state.started:.3f}",
    ]
    return ("\n".join(lines) + "\n").encode()
