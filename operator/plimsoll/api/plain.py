"""Is a document plain JSON data? Keys that are text, values JSON can carry, finite numbers.

`load_capacity_test` (`plimsoll.api.resource`) runs this before the models see a
document, because YAML builds more than JSON has: `null:`, `1.5:`, `true:` and
`2024-01-01:` as mapping keys, dates and `!!binary` bytes as values, `.nan` and
`.inf` (and `1e400`, which overflows to infinity) as numbers, integers beyond 64
bits. The API server cannot hold any of them (kubectl fails to send them), and
inside the models they surface as `spec.None`, "nan is not a percentage", or a
`TypeError` deep in a validator. Each is named here, with its path written the way
the user wrote the key, so the message can be acted on. Pure; no recursion, so a
hostile document cannot exhaust the stack.
"""

from __future__ import annotations

import datetime
import math
from typing import Any

INT64 = 2**63


def _key_as_written(key: Any) -> str:
    """A mapping key the way YAML shows it: null, true, 1.5, 2024-01-01."""
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, datetime.date):
        return key.isoformat()
    if isinstance(key, tuple | frozenset):
        return "a sequence"
    return str(key)


def _key_type(key: Any) -> str:
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "a boolean"
    if isinstance(key, int | float):
        return "a number"
    if isinstance(key, datetime.date):
        return "a date"
    return "a sequence"


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _kind_of(value: Any) -> str | None:
    """Why a value cannot cross into JSON, or None when it can."""
    if isinstance(value, datetime.datetime):
        return f"a timestamp ({value.isoformat()})"
    if isinstance(value, datetime.date):
        return f"a date ({value.isoformat()})"
    if isinstance(value, bytes | bytearray):
        return "binary data (!!binary)"
    if isinstance(value, set | frozenset):
        return "a set (!!set)"
    return None


def number_problem(value: float | int) -> str | None:
    """What is wrong with a number JSON and Kubernetes cannot carry, or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        if math.isnan(value):
            return "is not a number (.nan): write a finite number"
        if math.isinf(value):
            return (
                "is infinite (.inf, or a number too large for a float such as 1e400): "
                "write a finite number"
            )
    elif isinstance(value, int) and not -INT64 <= value < INT64:
        return "is too large a number (beyond 64 bits): write a smaller one"
    return None


def plain_problems(document: Any, root: str = "") -> list[str]:
    """Every key that is not text and every value JSON cannot carry, 'path: message'."""
    problems: list[str] = []
    stack: list[tuple[str, Any]] = [(root, document)]
    while stack:
        path, value = stack.pop()
        where = path or "(document)"
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    written = _key_as_written(key)
                    problems.append(
                        f"{_join(path, written)}: the key {written} is not text (YAML reads "
                        f'it as {_key_type(key)}): quote it ("{written}") or use a field name'
                    )
                    continue
                stack.append((_join(path, key), item))
        elif isinstance(value, list | tuple):
            stack.extend((f"{path}[{index}]", item) for index, item in enumerate(value))
        elif isinstance(value, float | int):
            problem = number_problem(value)
            if problem:
                problems.append(f"{where}: {value!r} {problem}")
        elif not isinstance(value, str) and value is not None:
            kind = _kind_of(value)
            problems.append(
                f"{where}: {kind or type(value).__name__} where text, a number or a "
                "mapping belongs: quote it to keep it as text"
            )
    return sorted(problems)
