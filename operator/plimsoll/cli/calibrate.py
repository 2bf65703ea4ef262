"""`plimsoll calibrate LOG... -o workload.yaml`: a workload and a mock fitted from access logs.

Reads each log line by line (gzip too; `-` is stdin), so a log of any size
streams through `plimsoll.shared.accesslog.Parser` into
`plimsoll.decide.calibration.traffic.TrafficFit`, then writes the fitted
`workload:` and `upstream:` (plimsoll.cli.calibration_yaml) and prints what was
fitted and how well. Client ids are hashed and query strings dropped unless
asked otherwise; nothing of a log's bodies or headers is ever read.
"""

from __future__ import annotations

import gzip
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import IO, Annotated

import typer

from plimsoll.api.units import parse_duration, parse_fraction
from plimsoll.cli.calibration_yaml import render, report
from plimsoll.cli.exits import EXIT_INVALID_SPEC
from plimsoll.decide.calibration.routes import RoutePatterns
from plimsoll.decide.calibration.traffic import TrafficFit
from plimsoll.shared.accesslog import LogFormat, LogFormatError, Parser, Privacy
from plimsoll.shared.accesslog.formats import FieldMap

_Opt = typer.Option
MAX_BAD_SHARE = 0.01  # more broken lines than this and the format is probably wrong


def _open(path: str) -> IO[str]:
    if path == "-":
        return sys.stdin
    if path.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


def read_lines(paths: list[str]) -> Iterator[str]:
    for path in paths:
        handle = _open(path)
        try:
            yield from handle
        finally:
            if handle is not sys.stdin:
                handle.close()


def _instant(option: str, value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError as exc:
        raise typer.BadParameter(
            f"{option} {value!r}: give epoch seconds or an ISO time such as 2026-12-01T10:00:00Z"
        ) from exc


def _fail(message: str) -> typer.Exit:
    typer.echo(f"invalid: {message}", err=True)
    return typer.Exit(EXIT_INVALID_SPEC)


def calibrate(  # one flag per choice the log cannot make for the user
    logs: Annotated[list[str], typer.Argument(help="Access logs (.gz too; '-' for stdin).")],
    output: Annotated[Path | None, _Opt("-o", "--output", help="Write the fragment here.")] = None,
    log_format: Annotated[LogFormat, _Opt("--format", help="The logs' format.")] = LogFormat.AUTO,
    client: Annotated[
        str | None, _Opt(help="The field naming a client: an IP, a user or an API-key id.")
    ] = None,
    field: Annotated[
        list[str] | None, _Opt(help="For jsonl: ROLE=KEY (time, client, method, path, ...).")
    ] = None,
    time_at: Annotated[
        str, _Opt(help="For jsonl: the time is the 'start' or the 'end'.")
    ] = "start",
    duration_unit: Annotated[str, _Opt(help="For jsonl: durations in 's' or 'ms'.")] = "s",
    route: Annotated[
        list[str] | None, _Opt(help="A route pattern such as /api/items/{id} (repeatable).")
    ] = None,
    since: Annotated[str | None, _Opt(help="Only requests from this time on.")] = None,
    until: Annotated[str | None, _Opt(help="Only requests before this time.")] = None,
    mcp_path: Annotated[str, _Opt(help="An MCP server's path: POSTs there are calls.")] = "/mcp",
    session_gap: Annotated[
        str, _Opt(help="Idle longer than this and a client's next call starts a new session.")
    ] = "30m",
    bot_share: Annotated[
        str | None,
        _Opt(help="Bots are the fewest clients carrying this share of calls (default: a jump)."),
    ] = None,
    keep_client_ids: Annotated[
        bool, _Opt(help="Keep client ids as logged instead of hashing them.")
    ] = False,
    keep_query: Annotated[bool, _Opt(help="Keep query strings (dropped by default).")] = False,
) -> None:
    """Fit a workload and a mock upstream from access logs."""
    try:
        fields = FieldMap.parse(field or [], time_at, duration_unit)
        parser = Parser(
            log_format,
            client_field=client,
            fields=fields,
            privacy=Privacy(keep_client_ids=keep_client_ids, keep_query=keep_query),
        )
        patterns = RoutePatterns(route or [])
        gap = parse_duration(session_gap)
    except ValueError as exc:
        raise _fail(str(exc)) from exc
    try:
        share = parse_fraction(bot_share) if bot_share is not None else None
    except ValueError as exc:
        raise _fail(f"--bot-share {bot_share!r}: give a share such as '50%'") from exc
    if share is not None and not 0 < share < 1:
        raise _fail(f"--bot-share {bot_share!r}: give a share between 0% and 100%")
    start, end = _instant("--since", since), _instant("--until", until)
    traffic = TrafficFit(patterns, mcp_path=mcp_path, session_gap=gap, bot_share=share)
    lines = bad = 0
    first_error = ""
    try:
        for line in read_lines(logs):
            lines += 1
            try:
                record = parser.parse(line)
            except LogFormatError as exc:
                if lines == 1:
                    raise _fail(str(exc)) from exc
                bad += 1
                first_error = first_error or str(exc)
                continue
            if record is None:
                continue
            if (start is not None and record.start < start) or (
                end is not None and record.start >= end
            ):
                continue
            traffic.add(record)
    except OSError as exc:
        raise _fail(f"cannot read the log: {exc}") from exc
    if bad > MAX_BAD_SHARE * lines:
        raise _fail(f"{bad} of {lines} lines could not be read; the first: {first_error}")
    try:
        fit = traffic.result()
    except ValueError as exc:
        raise _fail(str(exc)) from exc
    text = render(fit, [Path(p).name for p in logs])
    if output is None:
        typer.echo(text, nl=False)
    else:
        output.write_text(text)
    for line in report(fit):
        typer.echo(line, err=True)
    if bad:
        typer.echo(f"skipped {bad} unreadable lines of {lines}; the first: {first_error}", err=True)
