"""Grouping request paths into routes: `/api/items/42` and `/api/items/43` are one route.

Called by `traffic.TrafficFit` for every record. User patterns come first
(`/api/items/{id}`: a `{name}` stands for one path segment, a trailing `*` for
the rest); without a match, segments that look like ids (numbers, UUIDs, long
hex or mixed tokens) become `{id}`.
"""

from __future__ import annotations

import re
from functools import lru_cache

_ID_SEGMENT = re.compile(
    r"^(\d+|[0-9a-fA-F]{8}-[0-9a-fA-F-]{27,}|[0-9a-fA-F]{12,}|(?=.*\d)[A-Za-z0-9_-]{20,})$"
)


class RoutePatterns:
    """The user's route patterns, compiled once."""

    def __init__(self, patterns: list[str]) -> None:
        self.patterns: list[tuple[str, re.Pattern[str]]] = []
        for pattern in patterns:
            if not pattern.startswith("/"):
                raise ValueError(f"--route {pattern!r}: a route pattern starts with '/'")
            self.patterns.append((pattern, _compile(pattern)))
        self._cached = lru_cache(maxsize=65_536)(self._group)

    def group(self, path: str) -> str:
        return self._cached(path)

    def _group(self, path: str) -> str:
        for pattern, regex in self.patterns:
            if regex.fullmatch(path):
                return pattern
        segments = path.split("/")
        return "/".join("{id}" if _ID_SEGMENT.match(s) else s for s in segments)


def _compile(pattern: str) -> re.Pattern[str]:
    tail = pattern.endswith("*")
    body = pattern[:-1] if tail else pattern
    parts = re.split(r"(\{[^/{}]+\})", body)
    regex = "".join("[^/]+" if re.fullmatch(r"\{[^/{}]+\}", p) else re.escape(p) for p in parts)
    return re.compile(regex + (".*" if tail else ""))


def operation_name(method: str, route: str) -> str:
    """A mix/route name for `GET /api/items/{id}`: `get-api-items-id` (the API's name rule)."""
    words = re.findall(r"[a-z0-9]+", f"{method} {route}".lower())
    return "-".join(words)[:60] or "root"
