"""Where a trial may connect: the target's host resolved now, and checked against the
networks the operator refuses (`TrialRequest.refused_networks`).

On a cluster the operator refuses a `target.url` that is, or resolves to, cloud
metadata, the API server or loopback before it creates anything; but DNS can answer
differently a minute later (or differently to the pods than to the operator). So each
trial resolves the host again here, in the pod that connects, refuses the trial if any
address falls in a refused network, and pins every connection of the trial to the
address it checked (`client.Pool`'s `address`), so no later lookup can swap it. Called
by `trial.run_trial` before anything is sent; with no networks (locally, an allow-listed
host) nothing is resolved and connections go by name as before.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket

from plimsoll.api.trial import TrialRequest
from plimsoll_generator.client import split_url

# A name that takes longer to resolve than this fails the trial (said so), not the pod.
_RESOLVE_TIMEOUT = 10.0


class TargetRefusedError(ValueError):
    """The target's host resolves into a refused network, or does not resolve."""


async def vetted_address(request: TrialRequest) -> str | None:
    """The one address this trial's connections to the target use; None: go by name."""
    return await vetted(request.target_url, request.refused_networks)


async def vetted(target_url: str, refused_networks: list[str]) -> str | None:
    """The one address connections to `target_url` may use, resolved now and outside every
    refused network; None where no network is refused (go by name)."""
    if not refused_networks:
        return None
    host, port, _ = split_url(target_url)
    bare = host.strip("[]")
    try:
        infos = await asyncio.wait_for(
            asyncio.get_running_loop().getaddrinfo(bare, port, type=socket.SOCK_STREAM),
            _RESOLVE_TIMEOUT,
        )
    except (OSError, UnicodeError, TimeoutError) as exc:
        raise TargetRefusedError(f"the target's host {bare!r} does not resolve: {exc}") from exc
    networks = [ipaddress.ip_network(n) for n in refused_networks]
    addresses = [str(info[4][0]) for info in infos]
    for text in addresses:
        address = ipaddress.ip_address(text.split("%", 1)[0])
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        refused = next((n for n in networks if address in n), None)
        if refused is not None:
            raise TargetRefusedError(
                f"the target's host {bare!r} now resolves to {address}, in {refused}, which "
                "the operator refuses (cloud metadata, the API server or loopback): no "
                "request was sent"
            )
    if not addresses:
        raise TargetRefusedError(f"the target's host {bare!r} resolves to no address")
    return addresses[0]
