"""Bounded values: durations and memory with tight limits, paths, header values, weights.

`Seconds` and `Bytes` (`plimsoll.api.units`) accept up to a day and 64Ti; some
fields need less (a trial of 25 hours, a warm-up of two, a 1 TiB mock response,
a pod of 100 bytes are all typos that would otherwise surface only after the
run's pods were provisioned). Each type here checks its bound when parsed and
publishes it in the CRD as a CEL rule, so `kubectl apply` refuses the same
values with the same words. Paths and header values are held to visible ASCII:
a CR or LF would split the request the generator sends into two, and a non-ASCII
header value cannot be sent at all.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field, PlainSerializer, WithJsonSchema

from plimsoll.api.units import (
    MAX_BYTES,
    Bytes,
    Seconds,
    duration_schema,
    format_duration,
    format_memory,
    memory_schema,
)


def _at_most(limit: float) -> AfterValidator:
    def check(seconds: float) -> float:
        if seconds > limit:
            raise ValueError(
                f"{format_duration(seconds)} is too long here: at most {format_duration(limit)}"
            )
        return seconds

    return AfterValidator(check)


def _between(low: int, high: int, why: str) -> AfterValidator:
    def check(amount: int) -> int:
        if not low <= amount <= high:
            raise ValueError(
                f"{format_memory(amount)} is out of range: between {format_memory(low)} "
                f"and {format_memory(high)} ({why})"
            )
        return amount

    return AfterValidator(check)


MIB = 2**20
SIX_HOURS, HOUR = 6 * 3600.0, 3600.0

TrialSeconds = Annotated[
    Seconds,
    _at_most(SIX_HOURS),
    PlainSerializer(format_duration, return_type=str),
    WithJsonSchema(duration_schema(SIX_HOURS)),
]
"""A trial's length: a longer one is a typo (25h for 25m)."""

HourSeconds = Annotated[
    Seconds,
    _at_most(HOUR),
    PlainSerializer(format_duration, return_type=str),
    WithJsonSchema(duration_schema(HOUR)),
]
"""Warm-up and settle: at most an hour, as long as a generator accepts a warm-up."""

PodMemory = Annotated[
    Bytes,
    _between(4 * MIB, MAX_BYTES, "a container needs a few MiB to start"),
    PlainSerializer(format_memory, return_type=str),
    WithJsonSchema(memory_schema(4 * MIB, MAX_BYTES)),
]
"""A pod's memory: from 4Mi (a container cannot start in less) to 64Ti."""

ResponseBytes = Annotated[
    Bytes,
    _between(1, 64 * MIB, "the mock holds each response in memory"),
    PlainSerializer(format_memory, return_type=str),
    WithJsonSchema(memory_schema(1, 64 * MIB)),
]
"""A mock response's size: up to 64Mi, which the mock holds in memory."""

RequestBytes = Annotated[
    Bytes,
    _between(1, 4 * MIB, "the generator holds each body size in memory"),
    PlainSerializer(format_memory, return_type=str),
    WithJsonSchema(memory_schema(1, 4 * MIB)),
]
"""A request body's size: up to 4Mi, which the generator builds once and holds."""


# A path: '/' then visible ASCII (no space, CR, LF or other control, no non-ASCII:
# percent-encode those). Also the CRD's pattern.
PATH_PATTERN = r"^/[\x21-\x7e]*$"
# A header value: visible ASCII, spaces and tabs (RFC 9110 field-value, no obs-text).
HEADER_VALUE_PATTERN = r"^[\t\x20-\x7e]*$"
# A header name: an RFC 9110 token. Checked by the model only: a CEL rule over a map's
# keys, whose length the schema cannot bound, exceeds the API server's cost budget.
HEADER_NAME_PATTERN = r"^[-!#$%&'*+.^_`|~0-9A-Za-z]+$"

HeaderValue = Annotated[str, Field(pattern=HEADER_VALUE_PATTERN, max_length=8192)]
HeaderName = Annotated[str, Field(pattern=HEADER_NAME_PATTERN, max_length=256)]
"""A header name a CR supplies (`clientIps.header`): a token, so no CR/LF can split the
request head; the generator checks it again where it writes the header."""

# A PromQL query from the CR: at most this long, checked by the model (so by `plimsoll
# validate`, the API server's schema and the operator alike). `decide.promql_scope` parses
# each query with a native parser whose stack deep nesting overflows: this cap keeps it safe.
MAX_PROMQL_CHARS = 1024
PromQLQuery = Annotated[str, Field(min_length=1, max_length=MAX_PROMQL_CHARS)]

# A URL the operator or the generator sends a request to: a scheme, then visible ASCII (a
# CR or LF would split the request line; a space ends it).
URL_PATTERN = r"^https?://[\x21-\x7e]+$"

# An image reference as the container runtimes parse it: an optional registry host (and
# port), lowercase path components joined by '.', '_', '__' or dashes, an optional tag and
# an optional digest. The runtime also caps the name at 255 characters: with a 128-character
# tag and a digest a reference stays within 512.
_HOST_PART = r"[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?"
# The first component is a registry only with a '.', a port, or as 'localhost' (as Docker
# reads it); otherwise it is a path component, lowercase like the rest.
IMAGE_PATTERN = (
    rf"^(({_HOST_PART}(\.{_HOST_PART})+(:[0-9]+)?|{_HOST_PART}:[0-9]+|localhost)/)?"
    r"[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*(/[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*)*"
    r"(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@[A-Za-z][A-Za-z0-9]*([-_+.][A-Za-z][A-Za-z0-9]*)*"
    r":[0-9a-fA-F]{32,})?$"
)
ImageRef = Annotated[str, Field(pattern=IMAGE_PATTERN, max_length=512)]
"""A container image reference, e.g. 'ghcr.io/acme/api:1.2' or 'nginx@sha256:...'."""

# An environment variable's name (POSIX shells' rule, and Kubernetes' for env names).
ENV_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"
EnvName = Annotated[str, Field(pattern=ENV_NAME_PATTERN, max_length=256)]
"""An environment variable's name (checked by the model only: a CEL rule over a map's keys
exceeds the API server's cost budget, see HEADER_NAME_PATTERN)."""
Weight = Annotated[float, Field(gt=0, le=1_000_000, allow_inf_nan=False)]
Level = Annotated[int, Field(ge=1, le=10_000_000)]
