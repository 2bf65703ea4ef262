"""The kubernetes client's `Configuration` from kopf's login: one identity for everything.

kopf's `ConnectionInfo` (duck-typed: kopf is not imported here) carries a server,
a token or basic credentials, and TLS material as paths or inline data. The
official client wants a `kubernetes.client.Configuration`; this builds it, with
the client's own retries off (`plimsoll.kube.retry` retries, bounded and logged).
Rebuilt whenever fresh credentials arrive (`KubeClient.use_credentials`).
"""

from __future__ import annotations

import base64
import os
import tempfile
from typing import Any

from kubernetes.client import Configuration


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


def configuration(
    server: str,
    *,
    authorization: str | None = None,
    insecure: bool = False,
    ca_file: str | None = None,
    cert_file: str | None = None,
    key_file: str | None = None,
    pool_size: int = 4,
) -> Configuration:
    """A Configuration for `server`; `authorization` is the whole header value."""
    config = Configuration(host=server.rstrip("/"))
    config.retries = False  # urllib3's: off, so a fault reaches our RetryPolicy at once
    config.verify_ssl = not insecure
    config.ssl_ca_cert = ca_file
    config.cert_file = cert_file
    config.key_file = key_file
    config.connection_pool_maxsize = pool_size
    if authorization:
        # The client's one header slot for credentials, for a bearer token or basic auth.
        config.api_key = {"authorization": authorization}
    return config


def configuration_of(info: Any, *, pool_size: int = 4) -> Configuration:
    """From kopf's `ConnectionInfo` (duck-typed: kopf is not imported here)."""
    authorization = None
    if info.token:
        authorization = f"{info.scheme or 'Bearer'} {info.token}"
    elif info.username and info.password:
        pair = base64.b64encode(f"{info.username}:{info.password}".encode()).decode()
        authorization = f"Basic {pair}"
    ca = info.ca_path or (_write_temp(info.ca_data, ".crt") if info.ca_data else None)
    cert = info.certificate_path or (
        _write_temp(info.certificate_data, ".crt") if info.certificate_data else None
    )
    key = info.private_key_path or (
        _write_temp(info.private_key_data, ".key") if info.private_key_data else None
    )
    return configuration(
        str(info.server),
        authorization=authorization,
        insecure=bool(info.insecure),
        ca_file=os.fspath(ca) if ca else None,
        cert_file=os.fspath(cert) if cert else None,
        key_file=os.fspath(key) if key else None,
        pool_size=pool_size,
    )
