"""The mock upstream's configuration: what the target calls, and how it behaves.

The same model is `spec.upstream` in a CapacityTest and the JSON the mock process
reads at start-up (`PLIMSOLL_MOCK_CONFIG` or a file), so what the user wrote is
exactly what the mock serves. The behaviours are those real upstreams show: slow tools with
a long tail (lognormal fitted to p50/p95, capped), tool errors, a response-size
mix, LLM streaming with time-to-first-token and inter-token latency, and
microservice routes that fail, time out or return large bodies.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import Field, model_validator

from plimsoll.api.base import PlimsollModel
from plimsoll.api.bounded import PATH_PATTERN, ImageRef, ResponseBytes, Weight
from plimsoll.api.target import PodShape
from plimsoll.api.unique import raise_duplicates
from plimsoll.api.units import Fraction, Seconds


class QuantilePoint(PlimsollModel):
    """One row of an empirical latency table: `q` of calls finish within `value`."""

    q: float = Field(gt=0, le=1, description="The quantile, e.g. 0.5 for the median.")
    value: Seconds = Field(description="The latency at this quantile.")


class Latency(PlimsollModel):
    """A latency distribution, in one of three forms (exactly one must be given).

    - `fixed` (± `jitter`, uniform): synthetic probes, "calls 1 s ± 0.5";
    - `p50` + `p95` (lognormal through both, optionally capped at `max`): the
      slow tools as an MCP gateway sees them, median 1.2 s, 5% over 12 s, capped at 50 s;
    - `quantiles`: an empirical table, interpolated between its rows.
    """

    fixed: Seconds | None = Field(None, description="A fixed latency, e.g. 20ms.")
    jitter: Seconds = Field(
        0.0, description="Spread around fixed: each call takes fixed ± up to this, uniformly."
    )
    p50: Seconds | None = Field(None, description="Median of a lognormal latency (with p95).")
    p95: Seconds | None = Field(
        None, description="95th percentile of a lognormal latency (with p50)."
    )
    max: Seconds | None = Field(None, description="Cap on any single draw.")
    quantiles: list[QuantilePoint] | None = Field(
        None,
        min_length=2,
        description="A latency distribution given as a table of quantiles, interpolated between "
        "points.",
    )

    @model_validator(mode="after")
    def _one_form(self) -> Latency:
        forms = [
            name
            for name, present in (
                ("fixed", self.fixed is not None),
                ("p50/p95", self.p50 is not None or self.p95 is not None),
                ("quantiles", self.quantiles is not None),
            )
            if present
        ]
        if len(forms) != 1:
            raise ValueError(
                "give exactly one latency form: 'fixed' (with optional 'jitter'), "
                f"'p50' and 'p95' (lognormal), or 'quantiles'; got {forms or 'none'}"
            )
        if forms == ["p50/p95"]:
            if self.p50 is None or self.p95 is None:
                raise ValueError("a lognormal latency needs both 'p50' and 'p95'")
            if not 0 < self.p50 < self.p95:
                raise ValueError("'p50' must be positive and below 'p95'")
        if self.fixed is not None and self.jitter > self.fixed:
            raise ValueError("'jitter' must not exceed 'fixed' (latency cannot be negative)")
        if self.quantiles is not None:
            qs = [p.q for p in self.quantiles]
            values = [p.value for p in self.quantiles]
            if qs != sorted(qs) or len(set(qs)) != len(qs) or values != sorted(values):
                raise ValueError("'quantiles' rows must rise in both 'q' and 'value'")
        return self

    @classmethod
    def constant(cls, seconds: float) -> Latency:
        return cls(fixed=seconds)


class ErrorShape(StrEnum):
    HTTP = "http"  # an HTTP error status
    TOOL_ERROR = "toolError"  # MCP: a successful JSON-RPC answer whose result has isError
    TIMEOUT = "timeout"  # hold the call past `timeoutAfter`, then drop it


class Errors(PlimsollModel):
    """A share of calls that fail, and how they fail."""

    fraction: Fraction = Field(0.0, description="Share of calls answered with an error.")
    shape: ErrorShape = Field(
        ErrorShape.HTTP,
        description="How an error looks: http (an error status), toolError (MCP isError) or "
        "timeout.",
    )
    status: int = Field(503, ge=400, le=599, description="The HTTP status of an http error.")


class SizeChoice(PlimsollModel):
    """One entry of a response-size mix ("mostly a few KB, 2% around 1 MB")."""

    bytes: ResponseBytes = Field(description="A response body size, e.g. 2Ki or 1Mi.")
    weight: Weight = Field(
        1.0, description="How often this size is picked, relative to the others."
    )


class Route(PlimsollModel):
    """A plain HTTP route of the mock, matched on method and path."""

    name: str = Field(
        min_length=1,
        pattern=r"^[a-z0-9][a-z0-9_.-]*$",
        description="The route's name, shown in the mock's metrics.",
    )
    method: str = Field(
        "GET",
        pattern=r"^(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)$",
        description="The HTTP method the route answers.",
    )
    path: str = Field(pattern=PATH_PATTERN, description="Exact path, or a prefix ending in '*'.")
    latency: Latency = Field(default_factory=lambda: Latency(fixed=0.0))
    errors: Errors = Field(default_factory=Errors)
    sizes: list[SizeChoice] = Field(
        default_factory=lambda: [SizeChoice(bytes=1024)],
        min_length=1,
        description="The mix of response body sizes.",
    )
    status: int = Field(200, ge=100, le=599, description="The HTTP status of a successful answer.")
    echo: bool = Field(False, description="Echo the request body instead of a sized body.")
    timeout_after: Seconds | None = Field(
        None, description="For errors of shape 'timeout': how long to hold before dropping."
    )


class McpTool(PlimsollModel):
    """A tool the mock MCP server lists and answers `tools/call` for."""

    name: str = Field(
        min_length=1,
        pattern=r"^[A-Za-z0-9_.-]+$",
        description="The tool's name, as tools/list gives it.",
    )
    description: str = Field("", description="The tool's description, as tools/list gives it.")
    latency: Latency = Field(default_factory=lambda: Latency(fixed=0.0))
    errors: Errors = Field(default_factory=lambda: Errors(shape=ErrorShape.TOOL_ERROR))
    sizes: list[SizeChoice] = Field(
        default_factory=lambda: [SizeChoice(bytes=2048)],
        min_length=1,
        description="The mix of result sizes.",
    )


class Mcp(PlimsollModel):
    """The mock as an MCP server over streamable HTTP."""

    path: str = Field(
        "/mcp", pattern=PATH_PATTERN, description="The path the MCP endpoint is served at."
    )
    tools: list[McpTool] = Field(min_length=1, description="The tools the mock serves.")
    list_latency: Latency = Field(default_factory=lambda: Latency(fixed=0.0))
    keep_alive: Seconds = Field(15.0, description="Interval of SSE keep-alive comments.")
    server_name: str = Field(
        "plimsoll-mock", description="The server name the mock gives in initialize."
    )

    @model_validator(mode="after")
    def _unique_tools(self) -> Mcp:
        raise_duplicates([t.name for t in self.tools], "tools", "MCP tool")
        return self


class Llm(PlimsollModel):
    """The mock as an LLM provider (OpenAI `/v1/chat/completions`, Anthropic `/v1/messages`)."""

    ttft: Latency = Field(default_factory=lambda: Latency(fixed=0.8))
    itl: Latency = Field(default_factory=lambda: Latency(fixed=0.015))
    output_tokens: int = Field(100, ge=1, le=100_000, description="Tokens in each answer.")
    errors: Errors = Field(default_factory=Errors)
    model: str = Field("plimsoll-echo", description="The model name the mock answers with.")


class Upstream(PlimsollModel):
    """The mock upstream: routes, MCP tools, LLM endpoints, and where it runs."""

    routes: list[Route] = Field(
        default_factory=list, description="Plain HTTP routes with their latency, errors and sizes."
    )
    mcp: Mcp | None = None
    llm: Llm | None = None
    port: int = Field(8765, ge=1, le=65535, description="The port the mock listens on.")
    replicas: int = Field(1, ge=1, le=64, description="Mock pods (local: mock processes).")
    max_in_flight: int = Field(
        100_000, ge=1, description="Above this many open calls the mock answers 503."
    )
    server_timing: bool = Field(True, description="Send the mock's own time in Server-Timing.")
    image: ImageRef | None = Field(None, description="Overrides the operator's default mock image.")
    resources: PodShape | None = Field(
        None,
        description="The mock's shape, requests == limits (per replica on Kubernetes; a "
        "cgroup locally). With it, a step whose mock used more than generators.maxCpu of "
        "its CPU is invalid: the mock saturated. Without it the mock is unlimited.",
    )

    @model_validator(mode="after")
    def _unique_routes(self) -> Upstream:
        seen: set[tuple[str, str]] = set()
        for route in self.routes:
            key = (route.method, route.path)
            if key in seen:
                raise ValueError(f"two routes match {route.method} {route.path}")
            seen.add(key)
        raise_duplicates([r.name for r in self.routes], "routes", "route")
        return self


MOCK_CONFIG_ENV = "PLIMSOLL_MOCK_CONFIG"
"""Environment variable that carries the mock's configuration as JSON."""

ServerTimingName = Literal["upstream"]
SERVER_TIMING_METRIC: ServerTimingName = "upstream"
"""The Server-Timing metric name the mock writes: `Server-Timing: upstream;dur=12.3`."""


ENV_VAR_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"


class NamedUpstream(Upstream):
    """One more mock beside `spec.upstream`, e.g. an auth callout or a metering sink: its
    own routes, run as its own process (local) or pods (Kubernetes), its URL given to the
    target in `envVar`."""

    name: str = Field(
        pattern=r"^[a-z]([a-z0-9-]{0,18}[a-z0-9])?$",
        description="Lower-case, up to 20 characters: names its pods and its report rows.",
    )
    env_var: str = Field(
        pattern=ENV_VAR_PATTERN,
        description="Environment variable of the target that receives this mock's URL.",
    )

    def upstream(self) -> Upstream:
        """The mock's own configuration: what it serves, without its name and variable."""
        return Upstream.model_validate(self.model_dump(exclude={"name", "env_var"}))


def mock_role(name: str | None) -> str:
    """The role the default mock (None) and each named mock are measured and reported as."""
    return "mock" if name is None else f"mock-{name}"
