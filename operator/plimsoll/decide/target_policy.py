"""Where a CapacityTest's `target.url` may send load on a cluster: not at the cluster.

With `target.url` the generators drive an existing service, from pods inside the
cluster, so the URL is a request forgery aimed by whoever writes the CR: cloud
metadata (169.254.169.254, fd00:ec2::254, Alibaba's 100.100.100.200), the API server
(the `kubernetes.default` Service, its cluster IP and the address the operator itself
uses), a node's kubelet or kube-proxy ports, or loopback, which on a cluster is the
generator pod's own control port. An IPv6 spelling of a refused IPv4 address (mapped,
IPv4-compatible, NAT64, 6to4) is judged as the address it lands on. Those are refused unless
the operator's admin allow-lists the host (`PLIMSOLL_ALLOWED_TARGET_HOSTS`, Helm
`allowedTargetHosts`), as images and Prometheus URLs are. The Kubernetes platform
asks `target_url_problem` before it creates anything; locally the user owns the
machine and nothing is asked. Pure: the addresses to refuse are passed in.

Beyond that floor, on a cluster an external target is opt-in (`external_target_problem`):
`target.url` must name a host or network the admin listed (`PLIMSOLL_EXTERNAL_TARGETS`,
Helm `externalTargets`, empty by default), so that no tenant aims load at another team's
Service, a database or a third party by writing a URL. A host name is listed by name
(or under a listed domain, `.shop.example.com`); a network (a CIDR) admits only IP
literals inside it, never a name that resolves there, since the tenant may own the name
and its DNS. `plimsoll run` on one's own machine asks neither.

A host name is judged by its spelling and by every address it resolves to: the
platform resolves it (I/O stays out of here) and passes the addresses in, and each is
judged as a literal would be. DNS can change after that check (or answer the operator
differently from the pods), so `refused_networks` gives the generators the same rules
as networks: each trial resolves the name again, refuses it if any address falls in one,
and connects only to the address it checked (`plimsoll_generator.target_address`).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Collection, Iterable
from urllib.parse import urlsplit

# Link-local (cloud metadata: AWS, GCP, Azure, OpenStack) and AWS's IPv6 metadata.
_LINK_LOCAL = (
    ipaddress.ip_network("169.254.0.0/16"),
    ipaddress.ip_network("fe80::/10"),
    ipaddress.ip_network("fd00:ec2::254/128"),
)
# Metadata services outside link-local: Alibaba Cloud's.
_METADATA_ADDRESSES = (ipaddress.ip_network("100.100.100.200/32"),)
# The well-known NAT64 prefix (RFC 6052): 64:ff9b::a9fe:a9fe is 169.254.169.254 to a
# cluster whose pods reach IPv4 through NAT64.
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
# Ports that are the node's, whatever the host: the kubelet's API, its read-only port
# and health check, kube-proxy's health check.
_NODE_PORTS = {
    10250: "the kubelet's API",
    10255: "the kubelet's read-only API",
    10248: "the kubelet's health check",
    10256: "kube-proxy's health check",
}
# Names that reach the API server or a metadata service from any pod.
_CLUSTER_NAMES = ("kubernetes", "kubernetes.default", "kubernetes.default.svc")
_METADATA_NAMES = ("metadata", "metadata.google.internal", "instance-data")
_FIELD = "spec.target.url"


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address):
        return _embedded_ipv4(address) or address
    return address


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 spelling lands on, judged as that address: mapped
    (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d, deprecated but parsed), well-known
    NAT64 (64:ff9b::a.b.c.d), 6to4 (2002:AABB:CCDD::) and Teredo's client."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    value = int(address)
    if address in _NAT64 or (value >> 32 == 0 and value > 1):  # not :: nor ::1
        return ipaddress.IPv4Address(value & 0xFFFFFFFF)
    return None


def _ipv6_spellings(network: ipaddress.IPv4Network) -> list[ipaddress.IPv6Network]:
    """Where an IPv4 network sits inside IPv6 (see `_embedded_ipv4`), for the
    generators, which compare each resolved address with networks as they are."""
    base, bits = int(network.network_address), network.prefixlen
    return [
        ipaddress.IPv6Network((int(_NAT64.network_address) | base, 96 + bits)),
        ipaddress.IPv6Network((0xFFFF << 32 | base, 96 + bits)),
        ipaddress.IPv6Network((base, 96 + bits)),
        ipaddress.IPv6Network((0x2002 << 112 | base << 80, 16 + bits)),
    ]


def _is_cluster_name(host: str) -> bool:
    bare = host.rstrip(".")
    return bare in _CLUSTER_NAMES or bare.startswith("kubernetes.default.svc.")


def _why_refused(host: str, api_server_hosts: Collection[str]) -> str | None:
    address = _address(host)
    if host in {h.lower().strip("[]") for h in api_server_hosts} or _is_cluster_name(host):
        return "is the cluster's API server"
    if host.rstrip(".") in _METADATA_NAMES:
        return "is a cloud metadata service"
    if host.rstrip(".") == "localhost" or host.endswith(".localhost"):
        return "is loopback: on a cluster that is the generator pod itself"
    if address is None:
        return None
    return _why_address_refused(address)


def _why_address_refused(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    if any(address in network for network in _LINK_LOCAL):
        return "is a link-local address (cloud metadata services live there)"
    if any(address in network for network in _METADATA_ADDRESSES):
        return "is a cloud metadata service"
    if address.is_loopback:
        return "is loopback: on a cluster that is the generator pod itself"
    if address.is_unspecified:
        return "is the unspecified address, which reaches the pod itself"
    return None


def _why_port_refused(url: str) -> str | None:
    try:
        port = urlsplit(url).port
    except ValueError:
        return None
    if port in _NODE_PORTS:
        return f"is asked at port {port}, {_NODE_PORTS[port]} on a node"
    return None


def target_host(url: str) -> str | None:
    """The host of `url`, lowercased, without brackets; None when it has none."""
    try:
        return (urlsplit(url).hostname or "").lower() or None
    except ValueError:
        return None


def is_address(host: str) -> bool:
    """Whether `host` is an IP literal (nothing to resolve)."""
    return _address(host) is not None


def _allowed(host: str, allowed_hosts: Collection[str]) -> bool:
    return host in {h.lower().strip("[]") for h in allowed_hosts}


def target_url_problem(
    url: str | None,
    api_server_hosts: Collection[str],
    allowed_hosts: Collection[str],
    resolved: Iterable[str] = (),
    field: str = _FIELD,
    shown: str | None = None,
) -> str | None:
    """Why the generators may not be aimed at `url` from inside the cluster; None if fine.
    `resolved`: the addresses the URL's host name resolves to, each judged too. `field`
    names where the URL came from; `shown` replaces the URL in the message (a webhook's
    URL is a secret: the message names its Secret key, never the URL)."""
    if url is None:
        return None
    host = target_host(url)
    if host is None:
        return f"{field}: {shown or repr(url)} is not a URL with a host"
    if _allowed(host, allowed_hosts):
        return None
    reason = _why_refused(host, api_server_hosts) or _why_port_refused(url)
    if reason is None:
        api_addresses = {a for a in map(_address, api_server_hosts) if a is not None}
        for text in resolved:
            address = _address(text.split("%", 1)[0])
            if address is None:
                continue
            why = (
                "is the cluster's API server"
                if address in api_addresses
                else _why_address_refused(address)
            )
            if why is not None:
                reason = f"resolves to {address}, which {why}"
                break
    if reason is None:
        return None
    return (
        f"{field}: {host!r} {reason}; a CapacityTest may not aim load there. Name the "
        "service's own address, or have the operator's admin add the host to "
        "PLIMSOLL_ALLOWED_TARGET_HOSTS (Helm: allowedTargetHosts)"
    )


def refused_networks(
    url: str | None, api_server_hosts: Collection[str], allowed_hosts: Collection[str]
) -> list[str]:
    """The networks the generators must not connect to for `url`, as CIDRs (the same
    rules as `target_url_problem`, for the addresses a host name resolves to at run
    time); [] when there is no `target.url` or the admin allow-listed its host."""
    if url is None:
        return []
    host = target_host(url)
    if host is None or _allowed(host, allowed_hosts):
        return []
    networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = [
        *_LINK_LOCAL,
        *_METADATA_ADDRESSES,
        ipaddress.ip_network("127.0.0.0/8"),
        ipaddress.ip_network("::1/128"),
        ipaddress.ip_network("0.0.0.0/32"),
        ipaddress.ip_network("::/128"),
    ]
    for api in sorted(api_server_hosts):
        address = _address(api.strip("[]"))
        if address is not None:
            networks.append(ipaddress.ip_network(address))
    v4 = [n for n in networks if isinstance(n, ipaddress.IPv4Network)]
    networks.extend(spelled for network in v4 for spelled in _ipv6_spellings(network))
    return [str(n) for n in dict.fromkeys(networks)]


def external_target_problem(
    url: str | None, external_targets: Collection[str], allowed_hosts: Collection[str] = ()
) -> str | None:
    """Why the admin's list of external targets does not admit `url`'s host; None when it
    does (or there is no `target.url`). An entry is a host name (`shop.example.com`), a
    domain with a leading dot (`.example.com`: every name under it) or a network
    (`10.20.0.0/16`: IP literals inside it). A host the admin allowed past the refusals
    (`allowed_hosts`) is listed too."""
    if url is None:
        return None
    host = target_host(url)
    if host is None or _allowed(host, allowed_hosts) or _listed(host, external_targets):
        return None
    listed = ", ".join(sorted(external_targets)) or "none"
    return (
        f"{_FIELD}: {host!r} is not an external target this cluster's operator allows "
        f"(allowed: {listed}); on a cluster load goes only to a host or network the admin "
        "listed. Ask the operator's admin to add it to PLIMSOLL_EXTERNAL_TARGETS (Helm: "
        "externalTargets), or run the spec on your own machine with `plimsoll run`"
    )


def _listed(host: str, external_targets: Collection[str]) -> bool:
    address = _address(host)
    for entry in (e.strip().lower() for e in external_targets):
        if not entry:
            continue
        if "/" in entry or _address(entry.strip("[]")) is not None:
            network = ipaddress.ip_network(entry.strip("[]"), strict=False)
            if address is not None and address.version == network.version and address in network:
                return True
        elif address is None and entry.startswith("."):
            if host.rstrip(".").endswith(entry.rstrip(".")):
                return True
        elif host.rstrip(".") == entry.strip("[]").rstrip("."):
            return True
    return False


def external_targets_from(text: str) -> frozenset[str]:
    """The admin's list, comma-separated as the chart writes it; ValueError naming an
    entry that is neither a host name, a domain nor a network."""
    entries = frozenset(e.strip().lower() for e in text.split(",") if e.strip())
    for entry in entries:
        if "/" in entry or _address(entry.strip("[]")) is not None:
            try:
                ipaddress.ip_network(entry.strip("[]"), strict=False)
            except ValueError:
                raise ValueError(
                    f"externalTargets: {entry!r} is not a network; write a CIDR such as "
                    "10.20.0.0/16, a host name, or a domain as .example.com"
                ) from None
        elif not entry.strip(".") or any(c in entry for c in " :@?#"):
            raise ValueError(
                f"externalTargets: {entry!r} is not a host name; write shop.example.com, "
                "a domain as .example.com, or a network as 10.20.0.0/16"
            )
    return entries
