"""Typed values written as strings in a CapacityTest: durations, quantities, percentages.

Users write `"250ms"`, `"512Mi"`, `"0.5%"` the way Kubernetes does; the
rest of Plimsoll works with plain numbers (seconds, cores, bytes, fractions). The
annotated types below parse on the way in, print the canonical string on the way
out (so a spec round-trips through the status unchanged in meaning), and publish a
string schema with a pattern so the generated CRD rejects the same mistakes.
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any

from pydantic import BeforeValidator, PlainSerializer, WithJsonSchema

_DURATION_UNITS = {"us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(us|µs|ms|s|m|h)")
DURATION_PATTERN = r"^([0-9]+(\.[0-9]+)?(us|µs|ms|s|m|h))+$"

_MEMORY_SUFFIXES = {
    "": 1,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
}
MEMORY_PATTERN = r"^[0-9]+(\.[0-9]+)?(k|M|G|T|Ki|Mi|Gi|Ti)?$"
# Kubernetes keeps CPU to the millicore: '0.0001' would become 0, an unpinned pod. So
# 1m..9999999m, or cores with at most three decimals, from 0.001 to 9999.999, never 0.
CPU_PATTERN = (
    r"^([1-9][0-9]{0,6}m|[1-9][0-9]{0,3}(\.[0-9]{1,3})?"
    r"|0?\.([1-9][0-9]{0,2}|0[1-9][0-9]?|00[1-9]))$"
)
MAX_CORES = 9999.999
# Nothing Plimsoll waits for or measures takes a day; a longer duration is a typo.
MAX_DURATION = 24 * 3600.0
MAX_BYTES = 2**40 * 64  # 64Ti: more than any node has
PERCENT_PATTERN = r"^[0-9]+(\.[0-9]+)?%$"


def parse_duration(value: Any) -> float:
    """Seconds from `"1.2s"`, `"250ms"`, `"2m30s"`, or a bare number of seconds."""
    if isinstance(value, bool):
        raise ValueError("a duration is a string such as '30s', '250ms' or '5m', not a boolean")
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str):
        text = value.strip()
        if not re.fullmatch(DURATION_PATTERN, text):
            raise ValueError(
                f"{value!r} is not a duration: write a positive number with a unit "
                "(us, ms, s, m, h), for example '250ms', '1.2s', '5m' or '2m30s'"
            )
        seconds = sum(float(n) * _DURATION_UNITS[u] for n, u in _DURATION_PART.findall(text))
    else:
        raise ValueError(f"a duration is a string such as '30s', got {type(value).__name__}")
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"{value!r} is not a duration: it must be zero or positive, e.g. '30s'")
    if seconds > MAX_DURATION:
        raise ValueError(f"{value!r} is longer than a day: write at most '24h'")
    return seconds


def format_duration(seconds: float) -> str:
    """The shortest exact spelling: 0.25 -> '250ms', 90 -> '90s', 300 -> '5m'."""
    if seconds == 0:
        return "0s"
    if seconds >= 60 and seconds % 60 == 0:
        minutes = seconds / 60
        return f"{minutes / 60:g}h" if minutes % 60 == 0 else f"{minutes:g}m"
    if seconds >= 1:
        return f"{seconds:g}s"
    if seconds >= 1e-3:
        return f"{round(seconds * 1e3, 6):g}ms"
    return f"{round(seconds * 1e6, 3):g}us"


def parse_memory(value: Any) -> int:
    """Bytes from a Kubernetes memory quantity: `"512Mi"`, `"1Gi"`, `"500M"`, or bytes."""
    if isinstance(value, bool):
        raise ValueError("a memory quantity is a string such as '512Mi', not a boolean")
    if isinstance(value, int):
        amount = value
    elif isinstance(value, str):
        text = value.strip()
        match = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)([A-Za-z]*)", text)
        if not match or match.group(2) not in _MEMORY_SUFFIXES:
            hint = ""
            if match and match.group(2).upper() in {"KB", "MB", "GB", "TB", "KIB", "MIB", "GIB"}:
                number, suffix = match.group(1), match.group(2)
                hint = f" (did you mean '{number}{suffix[0].upper()}i'?)"
            raise ValueError(
                f"{value!r} is not a Kubernetes memory quantity{hint}: use a binary suffix "
                "Ki, Mi, Gi, Ti (e.g. '512Mi') or a decimal one k, M, G, T"
            )
        amount = int(float(match.group(1)) * _MEMORY_SUFFIXES[match.group(2)])
    else:
        raise ValueError(f"a memory quantity is a string such as '512Mi', got {value!r}")
    if amount <= 0:
        raise ValueError(f"{value!r}: a memory quantity must be positive, e.g. '512Mi'")
    if amount > MAX_BYTES:
        raise ValueError(f"{value!r} is more memory than any machine has: at most '64Ti'")
    return amount


def format_memory(amount: int) -> str:
    for suffix in ("Ti", "Gi", "Mi", "Ki"):
        unit = _MEMORY_SUFFIXES[suffix]
        if amount >= unit and amount % unit == 0:
            return f"{amount // unit}{suffix}"
    return str(amount)


def parse_cpu(value: Any) -> float:
    """Cores from a Kubernetes CPU quantity: `"500m"`, `"1"`, `1.5`."""
    if isinstance(value, bool):
        raise ValueError("a CPU quantity is a number of cores or millicores such as '500m'")
    if isinstance(value, int | float):
        cores = float(value)
    elif isinstance(value, str) and re.fullmatch(
        r"[0-9]+(\.[0-9]+)?|[0-9]+m|\.[0-9]+", value.strip()
    ):
        text = value.strip()
        cores = int(text[:-1]) / 1000 if text.endswith("m") else float(text)
    else:
        raise ValueError(
            f"{value!r} is not a Kubernetes CPU quantity: write cores ('1', '1.5') "
            "or millicores ('500m')"
        )
    if not math.isfinite(cores) or cores <= 0:
        raise ValueError(f"{value!r}: a CPU quantity must be positive, e.g. '1' or '500m'")
    if abs(cores * 1000 - round(cores * 1000)) > 1e-6:
        raise ValueError(
            f"{value!r} is finer than a millicore, which Kubernetes cannot pin (it would "
            f"round it to {format_cpu(cores) if cores >= 0.001 else '0: unpinned'}): "
            "write whole millicores, e.g. '1m' or '250m'"
        )
    if cores > MAX_CORES:
        raise ValueError(f"{value!r} is more CPU than any node has: at most '9999'")
    return cores


def format_cpu(cores: float) -> str:
    millicores = round(cores * 1000)
    return f"{millicores // 1000}" if millicores % 1000 == 0 else f"{millicores}m"


def parse_fraction(value: Any) -> float:
    """A fraction in [0, 1] from `"0.5%"`; a bare number is taken as the fraction itself."""
    if isinstance(value, bool):
        raise ValueError("a percentage is a string such as '0.5%', not a boolean")
    if isinstance(value, int | float):
        fraction = float(value)
    elif isinstance(value, str) and re.fullmatch(PERCENT_PATTERN, value.strip()):
        fraction = float(value.strip()[:-1]) / 100
    else:
        raise ValueError(f"{value!r} is not a percentage: write it with a % sign, e.g. '0.5%'")
    if not 0 <= fraction <= 1:
        raise ValueError(f"{value!r} is not a percentage between 0% and 100%")
    return fraction


def format_fraction(fraction: float) -> str:
    return f"{round(fraction * 100, 6):g}%"


def parse_quantile(value: Any) -> float:
    """A quantile in (0, 1) from `"p95"`, `"p99.9"`; `"p50"` is the median."""
    if isinstance(value, float) and not isinstance(value, bool) and 0 < value < 1:
        return value
    if isinstance(value, str):
        match = re.fullmatch(r"p([0-9]+(?:\.[0-9]+)?)", value.strip())
        if match:
            percentile = float(match.group(1))
            if 0 < percentile < 100:
                return percentile / 100
            raise ValueError(f"{value!r}: a percentile lies strictly between p0 and p100")
    raise ValueError(f"{value!r} is not a quantile: write it as 'p50', 'p95', 'p99' or 'p99.9'")


def format_quantile(quantile: float) -> str:
    return f"p{round(quantile * 100, 6):g}"


QUANTILE_PATTERN = r"^p[0-9]+(\.[0-9]+)?$"


def duration_schema(limit: float = MAX_DURATION) -> dict[str, Any]:
    """A duration string's schema; CEL's duration() (Go's syntax, which ours is a subset
    of) lets the API server hold it to `limit` as well."""
    return {
        "type": "string",
        "pattern": DURATION_PATTERN,
        "maxLength": 32,
        "x-kubernetes-validations": [
            {
                "rule": f"duration(self) <= duration('{format_duration(limit)}')",
                "message": f"at most {format_duration(limit)}",
            }
        ],
    }


def memory_schema(low: int = 1, high: int = MAX_BYTES) -> dict[str, Any]:
    """A memory quantity's schema, held to [low, high] by Kubernetes' CEL quantity library
    (an integer is a number of bytes)."""
    lo, hi = format_memory(low), format_memory(high)
    return {
        "x-kubernetes-int-or-string": True,
        "pattern": MEMORY_PATTERN,
        "maxLength": 32,
        "x-kubernetes-validations": [
            {
                "rule": f"type(self) == int ? self >= {low} && self <= {high} : "
                f"quantity(self).compareTo(quantity('{lo}')) >= 0 && "
                f"quantity(self).compareTo(quantity('{hi}')) <= 0",
                "message": f"between {lo} and {hi}",
            }
        ],
    }


Seconds = Annotated[
    float,
    BeforeValidator(parse_duration),
    PlainSerializer(format_duration, return_type=str),
    WithJsonSchema(duration_schema()),
]
"""A duration held as seconds, written as '30s'."""

Bytes = Annotated[
    int,
    BeforeValidator(parse_memory),
    PlainSerializer(format_memory, return_type=str),
    WithJsonSchema(memory_schema()),
]
"""A memory quantity held as bytes, written as '512Mi'."""

Cores = Annotated[
    float,
    BeforeValidator(parse_cpu),
    PlainSerializer(format_cpu, return_type=str),
    WithJsonSchema(
        {
            "x-kubernetes-int-or-string": True,
            "pattern": CPU_PATTERN,
            "maxLength": 16,
            "x-kubernetes-validations": [
                {
                    "rule": f"type(self) != int || (self >= 1 && self <= {int(MAX_CORES)})",
                    "message": "whole cores from 1, or a string such as '500m'",
                }
            ],
        }
    ),
]
"""A CPU quantity held as cores, written as '500m' or '1'."""

Fraction = Annotated[
    float,
    BeforeValidator(parse_fraction),
    PlainSerializer(format_fraction, return_type=str),
    WithJsonSchema({"type": "string", "pattern": PERCENT_PATTERN}),
]
"""A share in [0, 1], written as '0.5%'."""

Quantile = Annotated[
    float,
    BeforeValidator(parse_quantile),
    PlainSerializer(format_quantile, return_type=str),
    WithJsonSchema({"type": "string", "pattern": QUANTILE_PATTERN}),
]
"""A quantile in (0, 1), written as 'p95'."""
