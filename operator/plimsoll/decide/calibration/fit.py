"""What `plimsoll calibrate` fitted: plain data, each figure beside the count it came from.

Built by `traffic.TrafficFit.result`; the CLI turns it into a CapacityTest
fragment (with the figures as comments) and a short report.
"""

from __future__ import annotations

from dataclasses import dataclass

from plimsoll.decide.calibration.cohort import CohortFit
from plimsoll.decide.calibration.gaps import GapFit
from plimsoll.decide.calibration.latency import LatencyFit
from plimsoll.decide.calibration.responses import ErrorFit


@dataclass(frozen=True)
class RouteFit:
    name: str
    method: str
    route: str  # the grouped path, e.g. /api/items/{id}
    example_path: str  # its most common concrete path: what the workload sends
    requests: int
    weight: float  # share of all requests
    latency: LatencyFit | None
    errors: ErrorFit
    sizes: list[tuple[int, float]]  # (bytes, share)


@dataclass(frozen=True)
class UsersFit:
    gaps: GapFit
    cohort: CohortFit
    bot_rate: float  # calls per second per bot while active
    burst_size_mean: float
    burst_size_p50: float
    burst_size_p90: float
    sessions_per_client: float
    session_seconds_mean: float
    multi_session_clients: int
    page_view_fraction: float
    holds_stream: bool


@dataclass(frozen=True)
class ArrivalFit:
    window: float  # seconds per bucket
    mean_rate: float  # requests per second over the log's busy span
    peak_rate: float
    peak_at: float  # epoch seconds of the busiest window's start
    peak_to_mean: float
    peak_clients: int  # distinct clients in the busiest window (a users level)


@dataclass(frozen=True)
class CalibrationFit:
    records: int
    clients: int
    first: float
    last: float
    mcp: bool  # the log is an MCP server's: calls are POSTs to the MCP path
    mcp_path: str
    mcp_stateless: bool  # requests name their method in Mcp-Method: the stateless revision
    routes: list[RouteFit]
    users: UsersFit | None  # None: too few gaps between calls to fit bursts
    users_problem: str | None  # why there is no users fit
    arrivals: ArrivalFit
