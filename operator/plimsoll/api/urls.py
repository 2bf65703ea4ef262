"""Credentials in URLs, kept out of every message, status field and report.

A URL such as `https://user:secret@prometheus:9090` authenticates by itself, so it
must never be shown as written: status, Events, logs and the report ConfigMap are all
readable by far more people than the secret was meant for. Everything that shows a
URL passes it through `redact_url`, and free text that may quote one (an exception's
message) through `redact_urls_in`.
"""

from __future__ import annotations

import re
from typing import Any

# scheme://userinfo@ — the userinfo ends at the first '@' before any path, query or
# fragment; a '@' later in the path is not a credential and stays. Quotes and angle
# brackets end it too, so a URL inside JSON or HTML text never swallows its neighbours.
_USERINFO = re.compile(r"\b([A-Za-z][A-Za-z0-9+.\-]*://)[^/?#@\s\"'<>]*@")


def redact_url(url: str) -> str:
    """`https://user:pass@host/x` → `https://***@host/x`; a URL without credentials
    is returned unchanged."""
    return _USERINFO.sub(r"\1***@", url, count=1) if "@" in url else url


def redact_urls_in(text: str) -> str:
    """Every URL's credentials in a piece of free text, redacted as `redact_url` does."""
    return _USERINFO.sub(r"\1***@", text) if "@" in text else text


def redact_strings(value: Any) -> Any:
    """`value` (JSON-shaped: dicts, lists, strings, numbers) with every string redacted.
    Iterative, so a deep document cannot exhaust the stack."""
    if isinstance(value, str):
        return redact_urls_in(value)
    if not isinstance(value, dict | list):
        return value
    root: list[Any] = [None]
    pending: list[tuple[Any, Any, Any]] = [(value, root, 0)]
    while pending:
        item, parent, slot = pending.pop()
        if isinstance(item, dict):
            copy: Any = {}
            pending.extend((v, copy, k) for k, v in item.items())
        elif isinstance(item, list):
            copy = [None] * len(item)
            pending.extend((v, copy, i) for i, v in enumerate(item))
        else:
            copy = redact_urls_in(item) if isinstance(item, str) else item
        parent[slot] = copy
    return root[0]
