"""Credentials in URLs, kept out of every message, status field and report.

A URL such as `https://user:secret@prometheus:9090` authenticates by itself, so it
must never be shown as written: status, Events, logs and the report ConfigMap are all
readable by far more people than the secret was meant for. Everything that shows a
URL passes it through `redact_url`, and free text that may quote one (an exception's
message) through `redact_urls_in`.
"""

from __future__ import annotations

import re

# scheme://userinfo@ — the userinfo ends at the first '@' before any path, query or
# fragment; a '@' later in the path is not a credential and stays.
_USERINFO = re.compile(r"\b([A-Za-z][A-Za-z0-9+.\-]*://)[^/?#@\s]*@")


def redact_url(url: str) -> str:
    """`https://user:pass@host/x` → `https://***@host/x`; a URL without credentials
    is returned unchanged."""
    return _USERINFO.sub(r"\1***@", url, count=1) if "@" in url else url


def redact_urls_in(text: str) -> str:
    """Every URL's credentials in a piece of free text, redacted as `redact_url` does."""
    return _USERINFO.sub(r"\1***@", text) if "@" in text else text
