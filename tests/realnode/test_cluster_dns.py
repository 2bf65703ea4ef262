"""The real node's cluster DNS: Service names answered as a cluster's DNS would."""

from __future__ import annotations

import socket

from dnslib import QTYPE, RCODE, DNSRecord
from dnslib.server import DNSServer

from tests.realnode.cluster_dns import QUIET, ClusterResolver, Table, build_table, lookup

SERVICES = {
    "items": [
        {"metadata": {"name": "mock", "namespace": "run-1"}, "spec": {"clusterIP": "10.0.0.7"}},
        {"metadata": {"name": "db", "namespace": "run-1"}, "spec": {"clusterIP": "None"}},
        {
            "metadata": {"name": "kubernetes", "namespace": "default"},
            "spec": {"clusterIP": "10.0.0.1"},
        },
    ]
}
SLICES = {
    "items": [
        {
            "metadata": {"namespace": "run-1", "labels": {"kubernetes.io/service-name": "db"}},
            "endpoints": [
                {"addresses": ["10.244.0.9"], "conditions": {"ready": True}},
                {"addresses": ["10.244.0.8"], "conditions": {"ready": False}},
            ],
        }
    ]
}


def test_cluster_ips_and_a_headless_services_ready_endpoints() -> None:
    table = build_table(SERVICES, SLICES)
    assert table == {
        "mock.run-1": ["10.0.0.7"],
        "db.run-1": ["10.244.0.9"],
        "kubernetes.default": ["10.0.0.1"],
    }
    assert lookup(table, "mock.run-1.svc.cluster.local.", "cluster.local") == ["10.0.0.7"]
    assert lookup(table, "gone.run-1.svc.cluster.local.", "cluster.local") == []
    assert lookup(table, "example.com.", "cluster.local") is None


def _ask(port: int, name: str, qtype: str = "A") -> DNSRecord:
    question = DNSRecord.question(name, qtype)
    return DNSRecord.parse(question.send("127.0.0.1", port, timeout=2))


def test_the_server_answers_over_udp_from_the_table_it_last_read() -> None:
    table: Table = {"mock.run-1": ["10.0.0.7"]}
    resolver = ClusterResolver(lambda: dict(table), "cluster.local")
    resolver.refresh()
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = DNSServer(resolver, address="127.0.0.1", port=port, logger=QUIET)
    server.start_thread()
    try:
        reply = _ask(port, "mock.run-1.svc.cluster.local")
        assert [str(rr.rdata) for rr in reply.rr] == ["10.0.0.7"]
        assert reply.rr[0].rtype == QTYPE.A
        assert _ask(port, "absent.run-1.svc.cluster.local").header.rcode == RCODE.NXDOMAIN
        assert _ask(port, "example.com").header.rcode == RCODE.REFUSED  # nothing leaves
        assert _ask(port, "mock.run-1.svc.cluster.local", "AAAA").rr == []  # IPv4 only
        table["new.run-1"] = ["10.0.0.8"]  # a Service created since: seen after a refresh
        resolver.refresh()
        assert [str(rr.rdata) for rr in _ask(port, "new.run-1.svc.cluster.local").rr] == [
            "10.0.0.8"
        ]
    finally:
        server.stop()
        server.server.server_close()
