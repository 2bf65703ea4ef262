"""`workload.replay`: replaying an access log's arrivals with their timing.

With `workload.model: replay` the generator (plimsoll_generator.replay) reads
`log` line by line (as `plimsoll calibrate` does, through
`plimsoll.shared.accesslog`) and starts each logged request at its logged
offset divided by the speed. A level counts percent of the logged speed
(levels are whole numbers: 100 = 1x as logged, 200 = twice as fast), so the
ceiling search works on it unchanged. Each client keeps one of `connections`
modeled connections, as it kept its own; starts stay open-loop, and a late
start is counted as late, never skipped.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field, field_validator

from plimsoll.api.base import PlimsollModel
from plimsoll.api.units import Seconds

SPEED_UNIT = 100.0  # a replay level of 100 replays the log at its own speed
REPLAY_UNIT = "speed%"
FIELD_ROLES = (
    "time",
    "client",
    "method",
    "path",
    "status",
    "duration",
    "bytes",
    "upstream",
    "operation",
)


class LogFormat(StrEnum):
    AUTO = "auto"
    NGINX_JSON = "nginx-json"
    COMBINED = "combined"
    ENVOY = "envoy"
    JSONL = "jsonl"


class Replay(PlimsollModel):
    """Which log to replay, and how to read it."""

    log: str = Field(
        min_length=1,
        description="Path of the access log on the generator's file system (plain or .gz); "
        "read line by line, so a log larger than memory streams.",
    )
    format: LogFormat = Field(
        LogFormat.AUTO, description="nginx-json, combined, envoy, jsonl, or auto (from a line)."
    )
    client: str | None = Field(
        None, description="The field naming a client (an IP, a user or an API-key id)."
    )
    fields: dict[str, str] = Field(
        default_factory=dict, description="For 'jsonl': ROLE -> KEY (time, client, path, ...)."
    )
    time_at: str = Field("start", pattern="^(start|end)$", description="For 'jsonl'.")
    duration_unit: str = Field("s", pattern="^(s|ms)$", description="For 'jsonl'.")
    connections: int = Field(
        64,
        ge=1,
        le=10_000,
        description="Modeled connections: each client is mapped to one and keeps it.",
    )
    loop: bool = Field(True, description="Start over at the log's end when a trial outlasts it.")
    reorder_window: Seconds = Field(
        60.0,
        description="A proxy logs requests as they end; starts are put back in order "
        "within this window (longer requests than this come out late).",
    )
    keep_query: bool = Field(False, description="Send logged query strings (dropped by default).")

    @field_validator("fields")
    @classmethod
    def _roles(cls, fields: dict[str, str]) -> dict[str, str]:
        unknown = sorted(set(fields) - set(FIELD_ROLES))
        if unknown:
            raise ValueError(f"unknown field roles {unknown}: use {', '.join(FIELD_ROLES)}")
        return fields
