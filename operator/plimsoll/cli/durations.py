"""Duration flags in the spec's units: `--trial-duration 20s`, `--warm-up 500ms`, `--timeout 30m`.

Every spec writes durations with a unit, so the flags that override them take the same
spelling (`plimsoll.api.units.parse_duration`); a bare number is still seconds, as the
flags took before. Given to typer as an option's `parser`, so a bad value is refused
before anything runs, naming the flag (exit 2).
"""

from __future__ import annotations

import re

import typer

from plimsoll.api.units import parse_duration

_BARE = re.compile(r"\d+(\.\d+)?")
METAVAR = "DURATION"


def duration(value: str | float) -> float:
    """Seconds from '20s', '250ms', '2m30s' or a bare number of seconds (click also hands
    the parser an option's default, a number)."""
    text = str(value).strip()
    try:
        return parse_duration(float(text) if _BARE.fullmatch(text) else text)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc


def whole_seconds(value: str | float) -> int:
    """A duration for a flag that counts whole seconds: '1m' is 60; '1.5s' is refused."""
    seconds = duration(value)
    if seconds != int(seconds):
        raise typer.BadParameter(f"{value!r}: give whole seconds, e.g. '30s' or '1m'")
    return int(seconds)


def positive_duration(value: str | float) -> float:
    seconds = duration(value)
    if seconds <= 0:
        raise typer.BadParameter(f"{value!r}: give a duration longer than zero, e.g. '20s'")
    return seconds
