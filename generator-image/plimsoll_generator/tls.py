"""TLS to https:// targets: the client context every pool and held stream uses.

`context.py` (the target), `floor.py` (the mock) and `trial.py` (the client-IP
check) build their pools with `context_for(url, verify)`. Verification is on
unless the workload says `tlsVerify: false` (a self-signed test target); the
trusted authorities are the system's, or the bundle named by `SSL_CERT_FILE`,
which is how a pod trusts a private CA without turning verification off.
"""

from __future__ import annotations

import ssl

import httptools


def is_tls(url: str) -> bool:
    return bool(httptools.parse_url(url.encode()).schema == b"https")


def context_for(url: str, verify: bool = True) -> ssl.SSLContext | None:
    """The client TLS context for `url`, or None for plain http://."""
    if not is_tls(url):
        return None
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    if not verify:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    # HTTP/1.1 only: the hot path speaks nothing else.
    context.set_alpn_protocols(["http/1.1"])
    return context
