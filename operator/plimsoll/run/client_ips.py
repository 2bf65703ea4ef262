"""Checks that the target honours the client addresses the generators will send.

A run stops "with instructions" when the server ignores the client-IP
header: per-client limits would then see one client, and the ceiling would be
the rate limiter's, not the service's. The runner calls `check_client_ips`
once per variant, before the first trial.
"""

from __future__ import annotations

import httpx

from plimsoll.api.workload import ClientIps

_PROBE_ADDRESS = "203.0.113.77"  # TEST-NET-3: never a real client


async def check_client_ips(target_url: str, client_ips: ClientIps) -> str | None:
    """None when the target echoes the address it was sent; otherwise what to do about it."""
    if client_ips.verify_path is None:
        return (
            "workload.clientIps.verify is on but verifyPath is not set: name a path whose "
            "answer shows the client address the target saw (or set verify: false)"
        )
    url = target_url.rstrip("/") + client_ips.verify_path
    try:
        async with httpx.AsyncClient(timeout=10.0) as client:
            response = await client.get(url, headers={client_ips.header: _PROBE_ADDRESS})
    except httpx.HTTPError as exc:
        return f"could not reach {url} to check client addresses: {exc}"
    if _PROBE_ADDRESS in response.text:
        return None
    return (
        f"the target does not honour {client_ips.header}: GET {client_ips.verify_path} sent "
        f"{_PROBE_ADDRESS} and the answer does not show it. Configure the target to trust "
        f"the header from the generators (e.g. a trusted-proxy setting), or drop clientIps."
    )
