"""Where a CapacityTest's `target.url` may send load on a cluster: not at the cluster.

With `target.url` the generators drive an existing service, from pods inside the
cluster, so the URL is a request forgery aimed by whoever writes the CR: cloud
metadata (169.254.169.254, fd00:ec2::254), the API server (the `kubernetes.default`
Service, its cluster IP and the address the operator itself uses), or loopback,
which on a cluster is the generator pod's own control port. Those are refused unless
the operator's admin allow-lists the host (`PLIMSOLL_ALLOWED_TARGET_HOSTS`, Helm
`allowedTargetHosts`), as images and Prometheus URLs are. The Kubernetes platform
asks `target_url_problem` before it creates anything; locally the user owns the
machine and nothing is asked. Pure: the addresses to refuse are passed in.

A host name is judged by its spelling only (the cluster's DNS answers for the pods,
not for the operator); the run's egress policy then admits only its port.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Collection
from urllib.parse import urlsplit

# Link-local (cloud metadata: AWS, GCP, Azure, OpenStack) and AWS's IPv6 metadata.
_LINK_LOCAL = (
    ipaddress.ip_network("169.254.0.0/16"),
    ipaddress.ip_network("fe80::/10"),
    ipaddress.ip_network("fd00:ec2::254/128"),
)
# Names that reach the API server or a metadata service from any pod.
_CLUSTER_NAMES = ("kubernetes", "kubernetes.default", "kubernetes.default.svc")
_METADATA_NAMES = ("metadata", "metadata.google.internal", "instance-data")
_FIELD = "spec.target.url"


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped  # ::ffff:169.254.169.254 is the same place
    return address


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
    if any(address in network for network in _LINK_LOCAL):
        return "is a link-local address (cloud metadata services live there)"
    if address.is_loopback:
        return "is loopback: on a cluster that is the generator pod itself"
    if address.is_unspecified:
        return "is the unspecified address, which reaches the pod itself"
    return None


def target_url_problem(
    url: str | None, api_server_hosts: Collection[str], allowed_hosts: Collection[str]
) -> str | None:
    """Why the generators may not be aimed at `url` from inside the cluster; None if fine."""
    if url is None:
        return None
    try:
        host = (urlsplit(url).hostname or "").lower()
    except ValueError:
        return f"{_FIELD}: {url!r} is not a URL with a host"
    if host in {h.lower().strip("[]") for h in allowed_hosts}:
        return None
    reason = _why_refused(host, api_server_hosts)
    if reason is None:
        return None
    return (
        f"{_FIELD}: {host!r} {reason}; a CapacityTest may not aim load there. Name the "
        "service's own address, or have the operator's admin add the host to "
        "PLIMSOLL_ALLOWED_TARGET_HOSTS (Helm: allowedTargetHosts)"
    )
