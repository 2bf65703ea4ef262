"""Cluster DNS for the real node: Service names answered from the API, as CoreDNS would.

`tests/realnode/node.py` starts it (`python -m tests.realnode.cluster_dns`) on the
bridge's address, port 53, and names that address in the kubelet's `clusterDNS`, so
pods resolve `svc`, `svc.ns`, `svc.ns.svc` and `svc.ns.svc.cluster.local` (their
resolv.conf's search list does the rest). CoreDNS cannot be installed here; this
answers the part of its `kubernetes` plugin a test cluster needs: A records for a
Service's ClusterIP, or for a headless Service its ready endpoints' addresses from the
EndpointSlices. Names outside the cluster domain get REFUSED: pods have no business
outside this machine. The tables are read from the API server every half second with
the admin kubeconfig, so a new Service resolves within a second.
"""

from __future__ import annotations

import argparse
import base64
import json
import ssl
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

import yaml
from dnslib import QTYPE, RCODE, RR, A, DNSRecord
from dnslib.server import BaseResolver, DNSHandler, DNSLogger, DNSServer

Table = dict[str, list[str]]  # "svc.ns" -> IPv4 addresses
# dnslib logs every request and reply by default: a line per lookup of every pod.
QUIET = DNSLogger(log="-request,-reply,-truncated,-data,-recv,-send", prefix=False)


def build_table(services: dict[str, object], slices: dict[str, object]) -> Table:
    """Names to addresses from `kubectl get services,endpointslices -A -o json` lists."""
    ready: dict[str, list[str]] = {}
    for item in _items(slices):
        meta = item.get("metadata", {})
        owner = meta.get("labels", {}).get("kubernetes.io/service-name")
        if not owner:
            continue
        key = f"{owner}.{meta.get('namespace')}"
        for endpoint in item.get("endpoints") or []:
            if (endpoint.get("conditions") or {}).get("ready", True):
                ready.setdefault(key, []).extend(endpoint.get("addresses", []))
    table: Table = {}
    for item in _items(services):
        meta, spec = item.get("metadata", {}), item.get("spec", {})
        key = f"{meta.get('name')}.{meta.get('namespace')}"
        cluster_ip = spec.get("clusterIP")
        if cluster_ip and cluster_ip != "None":
            table[key] = [cluster_ip]
        elif key in ready:
            table[key] = sorted(set(ready[key]))
    return table


def _items(listing: dict[str, object]) -> list[dict[str, dict]]:  # type: ignore[type-arg]
    items = listing.get("items")
    return items if isinstance(items, list) else []


def lookup(table: Table, name: str, domain: str) -> list[str] | None:
    """The addresses of `svc.ns.svc.<domain>.` (None: not a name this server owns)."""
    name = name.rstrip(".").lower()
    suffix = f".svc.{domain}"
    if not name.endswith(suffix):
        return None
    key = name.removesuffix(suffix)
    return table.get(key, [])


class ClusterResolver(BaseResolver):  # type: ignore[misc]
    def __init__(self, read: Callable[[], Table], domain: str) -> None:
        self._domain = domain
        self._table: Table = {}
        self._lock = threading.Lock()
        self._read = read

    def refresh(self) -> None:
        table = self._read()
        with self._lock:
            self._table = table

    def resolve(self, request: DNSRecord, handler: DNSHandler) -> DNSRecord:
        reply = request.reply()
        qname = str(request.q.qname)
        with self._lock:
            addresses = lookup(self._table, qname, self._domain)
        if addresses is None:
            in_domain = qname.rstrip(".").lower().endswith(self._domain)
            reply.header.rcode = RCODE.NXDOMAIN if in_domain else RCODE.REFUSED
            return reply
        if not addresses:
            reply.header.rcode = RCODE.NXDOMAIN
            return reply
        if request.q.qtype in (QTYPE.A, QTYPE.ANY):
            for address in addresses:
                reply.add_answer(RR(qname, QTYPE.A, rdata=A(address), ttl=5))
        return reply  # AAAA and others: the name exists, with no such record


def api_reader(kubeconfig: str) -> Callable[[], Table]:
    """Reads Services and EndpointSlices over HTTPS with the kubeconfig's client
    certificate: cheap enough to do every half second (a kubectl each time is not)."""
    config = yaml.safe_load(Path(kubeconfig).read_text())
    cluster, user = config["clusters"][0]["cluster"], config["users"][0]["user"]
    folder = Path(tempfile.mkdtemp(prefix="cluster-dns-"))
    files = {}
    for name, key in [
        ("ca.crt", "certificate-authority-data"),
        ("client.crt", "client-certificate-data"),
        ("client.key", "client-key-data"),
    ]:
        files[name] = folder / name
        files[name].write_bytes(base64.b64decode(user.get(key) or cluster[key]))
    context = ssl.create_default_context(cafile=str(files["ca.crt"]))
    context.load_cert_chain(str(files["client.crt"]), str(files["client.key"]))
    server = cluster["server"].rstrip("/")

    def get(path: str) -> dict[str, object]:
        with urllib.request.urlopen(f"{server}{path}", context=context, timeout=10) as answer:
            return dict(json.loads(answer.read()))

    def read() -> Table:
        return build_table(get("/api/v1/services"), get("/apis/discovery.k8s.io/v1/endpointslices"))

    return read


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--address", required=True)
    parser.add_argument("--port", type=int, default=53)
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--domain", default="cluster.local")
    args = parser.parse_args()
    resolver = ClusterResolver(api_reader(args.kubeconfig), args.domain)
    resolver.refresh()
    servers = [
        DNSServer(resolver, address=args.address, port=args.port, tcp=tcp, logger=QUIET)
        for tcp in (False, True)
    ]
    for server in servers:
        server.start_thread()
    print(f"cluster DNS on {args.address}:{args.port}", flush=True)
    while all(server.isAlive() for server in servers):
        time.sleep(0.5)
        try:
            resolver.refresh()
        except (OSError, ValueError) as exc:
            print(f"cannot read Services: {exc}", flush=True)


if __name__ == "__main__":
    main()
