"""`plimsoll size`: turn a run's measured costs into a deployment plan.

Takes every cost a `report.json` measured (the per-pod ceiling of a variant,
memory per held stream, memory per call in flight, store calls per request,
store CPU per call, bytes per key; see `plimsoll.decide.sizing_costs`) and the
inputs only the user knows (peak, zones, headroom, busiest client, key
lifetime), from the report's `spec.sizing` or from flags (a flag wins), and
prints the plan with the line that derives each number and the source of each
cost (see `plimsoll.decide.sizing`), then the `prove` stanza that tests the plan
on this machine (`plimsoll.decide.proof_plan`), as the seed's sizing ends.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from plimsoll.api.report import RunReport
from plimsoll.api.sizing import SizingInput, SizingPlan, SizingSpec
from plimsoll.api.target import PodShape
from plimsoll.api.units import format_fraction, parse_duration, parse_memory
from plimsoll.api.validation_errors import describe_validation_error
from plimsoll.decide.proof_plan import proof_scale, proof_stanza
from plimsoll.decide.sizing import plan_deployment
from plimsoll.decide.sizing_costs import SizingInputError, resolve
from plimsoll.report.files import read_report

_Opt = typer.Option


def _invalid(problems: list[str]) -> typer.Exit:
    for problem in problems:
        typer.echo(f"invalid: {problem}", err=True)
    return typer.Exit(2)


def _costs(**given: Any) -> dict[str, float]:
    """The cost flags the user gave, parsed to plain numbers (bytes, seconds)."""
    parsers = {
        "memory_per_stream": parse_memory,
        "memory_per_in_flight": parse_memory,
        "memory_per_user": parse_memory,
        "pod_memory": parse_memory,
        "bytes_per_key": parse_memory,
        "cpu_per_call": parse_duration,
    }
    costs: dict[str, float] = {}
    for name, value in given.items():
        if value is None:
            continue
        try:
            costs[name] = float(parsers.get(name, float)(value))
        except ValueError as exc:
            raise _invalid([f"--{name.replace('_', '-')}: {exc}"]) from exc
    return costs


def size(  # one flag per input of the seed's sizing table
    report: Annotated[Path | None, _Opt(help="report.json of a finished run.")] = None,
    variant: Annotated[str | None, _Opt(help="Plan with this variant's ceiling.")] = None,
    peak: Annotated[float | None, _Opt(help="Expected peak load, in the test's unit.")] = None,
    per_pod: Annotated[float | None, _Opt(help="Per-pod ceiling (without --report).")] = None,
    unit: Annotated[str, _Opt(help="Unit of --per-pod: rps or users.")] = "rps",
    growth: Annotated[float | None, _Opt(help="Plan for peak x growth.")] = None,
    utilisation: Annotated[str | None, _Opt(help="Share of the ceiling, e.g. 60%.")] = None,
    zones: Annotated[int | None, _Opt(help="Zones to spread over.")] = None,
    survive_zone_loss: Annotated[
        bool | None, _Opt(help="Keep capacity after a zone loss (default yes).")
    ] = None,
    upstream_latency: Annotated[str | None, _Opt(help="Upstream p99, e.g. 200ms.")] = None,
    burst: Annotated[float | None, _Opt(help="In-flight headroom (default 2).")] = None,
    streams: Annotated[int | None, _Opt(help="Concurrent streams in all.")] = None,
    stream_headroom: Annotated[float | None, _Opt(help="Stream cap headroom (2).")] = None,
    memory_per_stream: Annotated[str | None, _Opt(help="e.g. 72Ki; else the report's.")] = None,
    memory_per_in_flight: Annotated[str | None, _Opt(help="e.g. 100Ki; else the report's.")] = None,
    memory_per_user: Annotated[str | None, _Opt(help="e.g. 48Ki; else the report's.")] = None,
    pod_memory: Annotated[str | None, _Opt(help="e.g. 1Gi; else the target's limit.")] = None,
    latency_budget: Annotated[str | None, _Opt(help="Added p99 budget, e.g. 10ms.")] = None,
    busiest_client: Annotated[float | None, _Opt(help="Busiest client's requests/s.")] = None,
    backstop_headroom: Annotated[float | None, _Opt(help="Backstop over it (2).")] = None,
    log_bytes_per_request: Annotated[str | None, _Opt(help="Access log line, e.g. 400.")] = None,
    log_budget: Annotated[str | None, _Opt(help="Log bytes/s to keep, e.g. 1M.")] = None,
    store: Annotated[str | None, _Opt(help="The shared store's name, e.g. valkey.")] = None,
    calls_per_request: Annotated[float | None, _Opt(help="Store calls per request.")] = None,
    cpu_per_call: Annotated[str | None, _Opt(help="Store CPU per call, e.g. 21us.")] = None,
    bytes_per_key: Annotated[str | None, _Opt(help="Store bytes per key, e.g. 124.")] = None,
    clients_per_minute: Annotated[int | None, _Opt(help="Distinct clients a minute.")] = None,
    key_lifetime: Annotated[str | None, _Opt(help="A client key's life, e.g. 2m.")] = None,
    extra_keys: Annotated[str | None, _Opt(help="More keys for other rules, e.g. 5%.")] = None,
    store_p99: Annotated[str | None, _Opt(help="Store round-trip p99, e.g. 2ms.")] = None,
    as_json: Annotated[bool, _Opt("--json", help="Print the plan as JSON.")] = False,
) -> None:
    """Plan a deployment from a run's costs and your peak.

    From a run's measured costs (or --per-pod), your peak, zones and headroom."""
    run = read_report(report) if report is not None else None
    inputs = {
        "variant": variant,
        "peak": peak,
        "growth": growth,
        "utilisation": utilisation,
        "zones": zones,
        "survive_zone_loss": survive_zone_loss,
        "upstream_latency": upstream_latency,
        "burst": burst,
        "streams": streams,
        "stream_headroom": stream_headroom,
        "latency_budget": latency_budget,
        "busiest_client": busiest_client,
        "backstop_headroom": backstop_headroom,
        "log_bytes_per_request": log_bytes_per_request,
        "log_budget": log_budget,
    }
    store_inputs = {
        "name": store,
        "clients_per_minute": clients_per_minute,
        "key_lifetime": key_lifetime,
        "extra_keys": extra_keys,
        "p99": store_p99,
    }
    fields = _sizing_fields(run, inputs, store_inputs)
    if "peak" not in fields:
        raise _invalid(["--peak: give the expected peak load (or spec.sizing.peak in the run)"])
    flags = _costs(
        per_pod=per_pod,
        memory_per_stream=memory_per_stream,
        memory_per_in_flight=memory_per_in_flight,
        memory_per_user=memory_per_user,
        pod_memory=pod_memory,
        calls_per_request=calls_per_request,
        cpu_per_call=cpu_per_call,
        bytes_per_key=bytes_per_key,
    )
    try:
        costs = run.unit_costs if run is not None else []
        sizing = resolve(SizingSpec.model_validate(fields), run, flags, unit=unit, costs=costs)
    except ValidationError as exc:
        raise _invalid(describe_validation_error(exc)) from exc
    except SizingInputError as exc:
        raise _invalid([str(exc)]) from exc
    result = plan_deployment(sizing)
    if as_json:
        typer.echo(result.to_wire_json(indent=2))
        return
    _print_plan(result)
    shape = run.spec.target.resources if run is not None else None
    _print_proof(sizing, result, shape)


def _print_proof(sizing: SizingInput, result: SizingPlan, shape: PodShape | None) -> None:
    """The stanza that proves this plan, scaled to fit this machine (`plimsoll run` it
    with the test's target, workload and bar)."""
    scale = proof_scale(result, shape, os.cpu_count() or 1)
    stanza = proof_stanza(sizing, result, scale)
    where = f" at {format_fraction(scale)} of its peak and of each pod's CPU" if scale < 1 else ""
    typer.echo(
        f"\nProve the plan{where}: put this in the test's spec (search.strategy: prove) and "
        "plimsoll run it:\n"
    )
    typer.echo(yaml.safe_dump(stanza, sort_keys=False).rstrip())


def _sizing_fields(
    run: RunReport | None, inputs: dict[str, Any], store_inputs: dict[str, Any]
) -> dict[str, Any]:
    """`spec.sizing` as the run wrote it, with every flag the user gave over it."""
    fields: dict[str, Any] = {}
    if run is not None and run.spec.sizing is not None:
        fields = run.spec.sizing.model_dump(exclude_unset=True)
    fields.update({k: v for k, v in inputs.items() if v is not None})
    if any(v is not None for v in store_inputs.values()):
        fields["store"] = {
            **(fields.get("store") or {}),
            **{k: v for k, v in store_inputs.items() if v is not None},
        }
    return fields


def _print_plan(result: SizingPlan) -> None:
    """The plan's lines as a table: item, derivation, result and where its costs came from."""
    title = f"Plan: {result.pods} pods, {result.pods_per_zone} per zone"
    table = Table("Item", "Derivation", "Result", "Measured costs from", title=title)
    for line in result.lines:
        table.add_row(line.item, line.derivation, line.result, line.source)
    console = Console()
    # Piped output would wrap the derivations at 80 columns; a file reader can scroll.
    (console if console.is_terminal else Console(width=160)).print(table)
