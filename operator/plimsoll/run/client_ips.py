"""Checks that the target honours the client addresses the generators will send.

A run stops "with instructions" when the server ignores the client-IP
header: per-client limits would then see one client, and the ceiling would be
the rate limiter's, not the service's. The runner calls `check_client_ips`
once per variant, before the first trial; each trial checks again in its generators.

The probe is sent by the first generator (`POST /client-ips`), never by the runner:
on a cluster the runner is the operator's pod, which would call a host resolved
again and never checked (issue 52). The generator vets the target's address against
the refused networks and pins its connection to it, as for a trial, and answers in
its own words only, so nothing the target says reaches the status.
"""

from __future__ import annotations

import httpx
from pydantic import ValidationError

from plimsoll.api.trial import CONTROL_TOKEN_HEADER, ClientIpCheck, ClientIpVerdict
from plimsoll.api.workload import Workload
from plimsoll.platforms.base import Endpoints

# The generator waits at most `ClientIpCheck.timeout` per probe, two probes in all.
_CALL_SECONDS = 30.0


async def check_client_ips(endpoints: Endpoints, workload: Workload) -> str | None:
    """None when the target echoes the addresses it was sent; otherwise what to do."""
    client_ips = workload.client_ips
    assert client_ips is not None  # the runner asks only when the workload sends them
    if client_ips.verify_path is None:
        return (
            "workload.clientIps.verify is on but verifyPath is not set: name a path whose "
            "answer shows the client address the target saw (or set verify: false)"
        )
    if not endpoints.generator_urls:
        return "no generator answers to check the client addresses from"
    request = ClientIpCheck(
        target_url=endpoints.target_url,
        client_ips=client_ips,
        refused_networks=endpoints.refused_target_networks,
        tls_verify=workload.tls_verify,
        timeout=min(workload.timeout, 10.0),
    )
    generator = endpoints.generator_urls[0]
    token = endpoints.control_token
    headers = {CONTROL_TOKEN_HEADER: token} if token else {}
    try:
        async with httpx.AsyncClient(timeout=_CALL_SECONDS, headers=headers) as client:
            answer = await client.post(f"{generator}/client-ips", json=request.to_wire())
        answer.raise_for_status()
        return ClientIpVerdict.model_validate_json(answer.content).problem
    except (httpx.HTTPError, ValidationError) as exc:
        return f"the generator at {generator} could not check the client addresses: {exc}"
