"""How the client reaches and authenticates to the API server, from kopf's login.

kopf's `ConnectionInfo` (duck-typed: kopf is not imported here) carries a server,
a token or basic credentials, and TLS material as paths or inline data; a
`Session` is what httpx needs of it. Rebuilt whenever fresh credentials arrive
(`KubeClient.use_credentials`).
"""

from __future__ import annotations

import base64
import os
import ssl
import tempfile
from dataclasses import dataclass
from typing import Any

import httpx


def _write_temp(data: str | bytes, suffix: str) -> str:
    raw = data.encode() if isinstance(data, str) else data
    try:  # kubeconfig's *-data fields are base64; kopf may pass them decoded or not
        decoded = base64.b64decode(raw, validate=True)
        if b"-----BEGIN" in decoded:
            raw = decoded
    except ValueError:
        pass
    handle, path = tempfile.mkstemp(suffix=suffix)
    with os.fdopen(handle, "wb") as file:
        file.write(raw)
    return path


@dataclass(frozen=True)
class Session:
    """How to reach and authenticate to the server: what a ConnectionInfo becomes."""

    headers: dict[str, str]
    verify: Any
    auth: httpx.Auth | None


def session_of(info: Any) -> Session:
    """From kopf's `ConnectionInfo` (duck-typed: kopf is not imported here)."""
    headers: dict[str, str] = {}
    if info.token:
        headers["Authorization"] = f"{info.scheme or 'Bearer'} {info.token}"
    verify: Any = True
    if str(info.server).startswith("https"):
        context = ssl.create_default_context()
        if info.insecure:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        if info.ca_path:
            context.load_verify_locations(cafile=os.fspath(info.ca_path))
        elif info.ca_data:
            context.load_verify_locations(cafile=_write_temp(info.ca_data, ".crt"))
        cert = info.certificate_path or (
            _write_temp(info.certificate_data, ".crt") if info.certificate_data else None
        )
        key = info.private_key_path or (
            _write_temp(info.private_key_data, ".key") if info.private_key_data else None
        )
        if cert:
            context.load_cert_chain(os.fspath(cert), os.fspath(key) if key else None)
        verify = context
    auth = (
        httpx.BasicAuth(info.username, info.password) if info.username and info.password else None
    )
    return Session(headers, verify, auth)
