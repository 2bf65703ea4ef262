"""Client addresses sent in a header (`X-Forwarded-For`), and the check the target honours them.

A gateway that limits or accounts per client sees one address for all users
unless it trusts the forwarded header; the run stops with instructions when it
does not, and so do we: `verify` raises `ClientIpError` with what to change.
Addresses come from 10.0.0.0/8, index i -> the (i + 1)-th address.
"""

from __future__ import annotations

from plimsoll.api.trial import ClientIpCheck, ClientIpVerdict
from plimsoll.api.workload import ClientIps
from plimsoll_generator.client import Exchange, Pool, build_request, split_url
from plimsoll_generator.target_address import TargetRefusedError, vetted
from plimsoll_generator.tls import context_for


class ClientIpError(RuntimeError):
    """The target does not honour the client-address header: results would mislead."""


def address(index: int) -> str:
    n = index + 1
    return f"10.{(n >> 16) & 255}.{(n >> 8) & 255}.{n & 255}"


class ClientIpPool:
    def __init__(self, config: ClientIps, offset: int) -> None:
        self.config = config
        self.header = config.header
        self.offset = offset

    def for_index(self, index: int) -> str:
        return address((self.offset + index) % self.config.pool)


async def verify(pool: Pool, host: str, config: ClientIps, limit: float) -> None:
    """Ask `verify_path` with two distinct addresses; each answer must name its own."""
    if config.verify_path is None:
        raise ClientIpError(
            "clientIps.verify is on but clientIps.verifyPath is not set: give a path whose "
            "answer echoes the client address the target saw, or set clientIps.verify to false"
        )
    probes = [address(0), address(config.pool - 1)]
    for ip in dict.fromkeys(probes):
        payload = build_request("GET", config.verify_path, host, {config.header: ip})
        exchange = await pool.fetch(payload, Exchange(keep_body=True, timeout=limit))
        if exchange.error is not None:
            raise ClientIpError(
                f"client-IP check: GET {config.verify_path} failed: {exchange.error}"
            )
        body = exchange.text().decode("utf-8", "replace")
        if ip not in body:
            raise ClientIpError(
                f"the target does not honour {config.header}: GET {config.verify_path} was "
                f"sent with {config.header}: {ip} and its answer (HTTP {exchange.status}) does "
                f"not show that address. Configure the target to trust {config.header} from "
                "the generators (its trusted-proxy setting), or set clientIps.verify to false "
                "to accept that every user shares one address."
            )


async def verify_target(
    target_url: str, tls_verify: bool, config: ClientIps, limit: float, pinned: str | None
) -> None:
    """`verify` over a connection of its own to `target_url` (at the `pinned` address, when
    one was vetted); raises `ClientIpError` with what to change."""
    host, port, _ = split_url(target_url)
    pool = Pool(host, port, context_for(target_url, tls_verify), pinned)
    try:
        await verify(pool, f"{host}:{port}", config, limit)
    finally:
        pool.close()


async def check(request: ClientIpCheck) -> ClientIpVerdict:
    """`POST /client-ips`: the check a trial makes first, made alone before the first trial
    so the run stops early with instructions. The address is vetted and pinned as a trial's
    is; the verdict holds only our own words, never the target's answer."""
    try:
        pinned = await vetted(request.target_url, request.refused_networks)
        await verify_target(
            request.target_url, request.tls_verify, request.client_ips, request.timeout, pinned
        )
    except (TargetRefusedError, ClientIpError) as exc:
        return ClientIpVerdict(problem=str(exc))
    return ClientIpVerdict()
