"""The CapacityTest fragment `plimsoll calibrate` writes: `workload:` and `upstream:` with
each fitted figure's source as a comment beside it, and the short report.

Called by `plimsoll.cli.calibrate` with a `CalibrationFit`. The fragment is
checked against the API models (`Workload`, `Upstream`) before it is written,
so what the user gets is a valid spec, not a draft. YAML is written by hand
here because a YAML library does not keep end-of-line comments.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import yaml

from plimsoll.api.upstream import Upstream
from plimsoll.api.workload import Workload
from plimsoll.decide.calibration.fit import CalibrationFit, RouteFit
from plimsoll.decide.calibration.latency import MAX_KS_DISTANCE

STATELESS_REVISION = "2026-07-28"


@dataclass(frozen=True)
class Note:
    """A fitted value with the figure it came from (written as its comment)."""

    value: Any
    comment: str = ""


def seconds(value: float) -> str:
    """A duration to three significant figures: '301ms', '6.04s', '78.4s'."""
    if value < 1:
        return f"{max(value, 0.0001) * 1000:.3g}ms".replace("e+", "")
    return f"{value:.4g}s" if value < 1000 else f"{value:.0f}s"


def percent(value: float) -> str:
    return f"{value * 100:.3g}%" if value > 0 else "0%"


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return f"{value:g}" if isinstance(value, float) else str(value)
    text = str(value)
    plain = yaml.safe_dump(text, width=10_000).removesuffix("\n...\n").strip()
    return plain if "\n" not in plain else json.dumps(text)  # a JSON string is YAML too


def emit(node: Any, indent: int = 0) -> list[str]:
    """YAML lines of nested dicts and lists whose leaves may be `Note`s."""
    pad = " " * indent
    lines: list[str] = []
    if isinstance(node, dict):
        for key, value in node.items():
            comment = ""
            if isinstance(value, Note):
                value, comment = value.value, value.comment
            tail = f"  # {comment}" if comment else ""
            if isinstance(value, dict | list) and value:
                lines.append(f"{pad}{key}:{tail}")
                lines.extend(emit(value, indent + 2))
            else:
                empty = "{}" if isinstance(value, dict) else "[]" if isinstance(value, list) else ""
                lines.append(f"{pad}{key}: {empty or _scalar(value)}{tail}")
        return lines
    for item in node:
        inner = emit(item, indent + 2)
        lines.append(f"{pad}- {inner[0].lstrip()}")
        lines.extend(inner[1:])
    return lines


def _latency(route: RouteFit) -> Note:
    fit = route.latency
    if fit is None:
        return Note({"fixed": "0ms"}, "the log has no request or upstream time")
    goodness = f"KS distance {fit.ks_distance:.3f} over {fit.samples} {fit.source}s"
    if fit.lognormal:
        return Note(
            {"p50": seconds(fit.p50), "p95": seconds(fit.p95), "max": seconds(fit.maximum)},
            f"lognormal through the log's p50/p95, capped at its maximum; {goodness}",
        )
    table = [{"q": q, "value": seconds(v)} for q, v in fit.table]
    return Note(
        {"quantiles": table},
        f"quantile table: a lognormal fits badly ({goodness} > {MAX_KS_DISTANCE})",
    )


def _errors(route: RouteFit) -> tuple[Note, float | None]:
    """The route's errors as the mock models them (one class per route: the commonest),
    and for timeouts how long the mock holds a call before dropping it."""
    errors = route.errors
    classes = {"timeout": errors.timeouts, "5xx": errors.server, "4xx": errors.client}
    seen = ", ".join(f"{name} {percent(errors.share(n))}" for name, n in classes.items())
    comment = f"of {errors.requests} requests: {seen}"
    worst = max(classes, key=lambda name: classes[name])
    share = errors.share(classes[worst])
    if classes[worst] == 0:
        return Note({"fraction": "0%"}, comment), None
    if worst == "timeout":
        hold = route.latency.maximum if route.latency is not None else 30.0
        return Note({"fraction": percent(share), "shape": "timeout"}, comment), hold
    status = errors.server_status if worst == "5xx" else errors.client_status
    return Note({"fraction": percent(share), "shape": "http", "status": status}, comment), None


def _sizes(route: RouteFit) -> Note:
    if not route.sizes:
        return Note([{"bytes": 1024}], "the log has no response sizes: 1 KiB")
    buckets = [{"bytes": b, "weight": round(share * 100, 3) or 0.001} for b, share in route.sizes]
    return Note(buckets, "median bytes sent per size bucket; weight = percent of requests")


def _mock_path(route: str) -> str:
    """A mock path for a grouped route: exact, or the prefix up to its first `{...}`."""
    cut = route.find("{")
    return route if cut < 0 else route[:cut] + "*"


def _users(fit: CalibrationFit) -> Note:
    users = fit.users
    assert users is not None
    gaps, cohort = users.gaps, users.cohort
    page = next((r for r in fit.routes if r.method == "GET" and r.route != fit.mcp_path), None)
    body: dict[str, Any] = {
        "holdStream": Note(users.holds_stream, "GETs of the MCP path (held streams) in the log"),
        "burstGapMedian": Note(
            seconds(gaps.burst_gap_median),
            f"EM fit of {gaps.gaps} human gaps ({gaps.censored} cut short by a slow call, "
            f"{gaps.open_at_end} still open at the log's end): "
            f"{percent(gaps.in_burst_share)} in bursts, "
            f"threshold {seconds(gaps.threshold)}; bursts of {users.burst_size_mean:.1f} calls "
            f"on average (p50 {users.burst_size_p50:g}, p90 {users.burst_size_p90:g})",
        ),
        "meanGap": Note(
            seconds(gaps.mean_gap),
            f"the fitted mixture's mean (as logged: {seconds(gaps.observed_mean)}); pauses "
            f"between bursts average {seconds(gaps.pause_mean)}",
        ),
        "botFraction": Note(
            percent(cohort.fraction),
            f"{len(cohort.bots)} of {cohort.clients} clients: {cohort.rule}; "
            f"{cohort.half_traffic_clients} clients carry half of the calls",
        ),
        "botShare": Note(
            percent(cohort.share) if 0 < cohort.share < 1 else "0%",
            f"{cohort.bot_calls} of {cohort.calls} calls; {users.bot_rate:.3g} calls/s per bot",
        ),
        "reconnectEvery": Note(
            # The CRD types it a duration: a day stands for "never" within any trial.
            seconds(min(users.session_seconds_mean, 86_400.0))
            if users.multi_session_clients
            else "24h",
            f"{users.sessions_per_client:.2f} sessions per client, "
            f"{users.multi_session_clients} clients came back after a pause",
        ),
        "relistFraction": Note("0%", "a tools/list is a POST like a call: not in an access log"),
        "pageViewFraction": Note(
            percent(users.page_view_fraction), "GETs outside the MCP path per MCP call"
        ),
    }
    if page is not None:
        body["pageViewPath"] = Note(page.example_path, f"the commonest page ({page.requests} GETs)")
    return Note(body)


def _mock_routes(fitted: list[RouteFit]) -> list[dict[str, Any]]:
    """The mock's plain routes, busiest first; a route whose path a busier one's prefix
    already serves is left out."""
    routes = []
    taken: set[tuple[str, str]] = set()
    for r in fitted:
        key = (r.method, _mock_path(r.route))
        if key in taken or "#" in r.route:
            continue
        taken.add(key)
        errors, hold = _errors(r)
        route: dict[str, Any] = {
            "name": r.name,
            "method": r.method,
            "path": key[1],
            "latency": _latency(r),
            "errors": errors,
            "sizes": _sizes(r),
        }
        if hold is not None:
            route["timeoutAfter"] = seconds(hold)
        routes.append(route)
    return routes


def fragment(fit: CalibrationFit) -> dict[str, Any]:
    """The `workload` and `upstream` of a CapacityTest, as Note-annotated plain data."""
    workload: dict[str, Any]
    upstream: dict[str, Any]
    if fit.mcp and fit.users is not None:
        call = next(r for r in fit.routes if r.method == "POST" and r.route == fit.mcp_path)
        workload = {
            "protocol": "mcp",
            "model": "users",
            "mcpPath": fit.mcp_path,
            "mcpRevision": Note(
                STATELESS_REVISION if fit.mcp_stateless else "2025-06-18",
                "requests name their method in Mcp-Method: the stateless revision"
                if fit.mcp_stateless
                else "no Mcp-Method in the log: a handshake-era revision",
            ),
            "mix": [{"name": "tool-call", "kind": "call", "tool": "calibrated"}],
            "users": _users(fit),
        }
        errors, _ = _errors(call)
        tool = {"name": "calibrated", "latency": _latency(call), "errors": errors}
        tool["sizes"] = _sizes(call)
        others = [r for r in fit.routes if not r.route.startswith(fit.mcp_path)]
        upstream = {"mcp": {"path": fit.mcp_path, "tools": [tool]}}
        if others:
            upstream["routes"] = _mock_routes(others)
    else:
        workload = {
            "protocol": "http",
            "model": "rate",
            "arrival": "poisson",
            "mix": [
                {
                    "name": r.name,
                    "weight": Note(round(r.weight * 100, 3) or 0.001, f"{r.requests} requests"),
                    "method": r.method,
                    "path": Note(r.example_path, f"the commonest path of {r.route}"),
                }
                for r in fit.routes
                if "#" not in r.route
            ],
        }
        upstream = {"routes": _mock_routes(fit.routes)}
    return {"workload": workload, "upstream": upstream}


def _plain(node: Any) -> Any:
    if isinstance(node, Note):
        return _plain(node.value)
    if isinstance(node, dict):
        return {k: _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    return node


def render(fit: CalibrationFit, sources: list[str]) -> str:
    """The fragment as YAML text, checked against the API models first."""
    tree = fragment(fit)
    plain = _plain(tree)
    Workload.model_validate(plain["workload"])
    Upstream.model_validate(plain["upstream"])
    text = "\n".join(emit(tree)) + "\n"
    assert yaml.safe_load(text) == plain, "the fragment's YAML does not read back as written"
    arrivals = fit.arrivals
    level = (
        f"search.start: {arrivals.peak_clients} users (clients in the busiest minute)"
        if fit.mcp
        else f"search.start: {arrivals.mean_rate:.3g} requests/s (the mean)"
    )
    head = [
        f"# Calibrated by `plimsoll calibrate` from {fit.records} requests of "
        f"{fit.clients} clients ({', '.join(sources)}),",
        f"# {_when(fit.first)} to {_when(fit.last)}. Peak {arrivals.peak_rate:.3g} requests/s "
        f"({arrivals.window:g} s windows), {arrivals.peak_to_mean:.2f}x the mean "
        f"{arrivals.mean_rate:.3g}/s;",
        f"# suggested {level}; sizing.peak: {arrivals.peak_rate:.3g} requests/s.",
    ]
    return "\n".join(head) + "\n" + text


def _when(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _shape(route: RouteFit) -> str:
    fit = route.latency
    if fit is None:
        return "no latency in the log"
    if not fit.lognormal:
        return f"quantile table (lognormal KS {fit.ks_distance:.3f} too far)"
    return f"lognormal p50 {seconds(fit.p50)} p95 {seconds(fit.p95)} (KS {fit.ks_distance:.3f})"


def report(fit: CalibrationFit) -> list[str]:
    """A short account of what was fitted and how well (printed to stderr)."""
    lines = [f"{fit.records} requests, {fit.clients} clients, {len(fit.routes)} routes"]
    for r in fit.routes[:10]:
        lines.append(
            f"  {r.method} {r.route}: {percent(r.weight)} of requests, {_shape(r)}, "
            f"errors {percent(r.errors.share(r.errors.failed))}"
        )
    if fit.users is not None:
        g, c = fit.users.gaps, fit.users.cohort
        lines.append(
            f"  users: in-burst median gap {seconds(g.burst_gap_median)}, mean gap "
            f"{seconds(g.mean_gap)}, threshold {seconds(g.threshold)}; bots "
            f"{percent(c.fraction)} of clients make {percent(c.share)} of calls"
        )
    else:
        lines.append(f"  users: not fitted ({fit.users_problem})")
    return lines
