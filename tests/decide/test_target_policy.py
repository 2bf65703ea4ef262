"""Where target.url may aim the generators from inside a cluster: not at the cluster."""

from __future__ import annotations

import pytest

from plimsoll.decide.target_policy import (
    external_target_problem,
    external_targets_from,
    refused_networks,
    target_url_problem,
)

API = {"10.96.0.1", "api.cluster.example"}


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://169.254.170.2/v2/credentials", "link-local"),
        ("http://[fd00:ec2::254]/latest/meta-data/", "link-local"),
        ("http://[::ffff:169.254.169.254]/", "link-local"),
        ("http://[fe80::1]:8080/", "link-local"),
        ("http://metadata.google.internal/computeMetadata/v1/", "metadata"),
        ("https://kubernetes.default.svc/api/v1/secrets", "API server"),
        ("https://kubernetes.default.svc.cluster.local./api", "API server"),
        ("https://kubernetes/api", "API server"),
        ("https://10.96.0.1:443/api", "API server"),
        ("https://API.cluster.example:6443/", "API server"),
        ("http://127.0.0.1:8080/trials", "loopback"),
        ("http://127.3.4.5/", "loopback"),
        ("http://[::1]:8080/", "loopback"),
        ("http://localhost:8080/", "loopback"),
        ("http://0.0.0.0:8080/", "unspecified"),
        # Other clouds' metadata, and 169.254.169.254 spelled in IPv6 four more ways.
        ("http://100.100.100.200/latest/meta-data/", "cloud metadata service"),
        ("http://[::a9fe:a9fe]/", "link-local"),  # IPv4-compatible
        ("http://[64:ff9b::a9fe:a9fe]/", "link-local"),  # NAT64, well-known prefix
        ("http://[64:ff9b::169.254.169.254]/", "link-local"),
        ("http://[2002:a9fe:a9fe::1]/", "link-local"),  # 6to4
        ("http://[64:ff9b::7f00:1]:8089/trials", "loopback"),
        # A node's own ports, whatever the address.
        ("https://10.0.12.7:10250/pods", "port 10250, the kubelet's API"),
        ("http://node-1.example.com:10255/stats", "port 10255, the kubelet's read-only API"),
        ("http://10.0.12.7:10256/healthz", "kube-proxy"),
    ],
)
def test_the_cluster_itself_is_refused_naming_the_field_and_the_fix(url: str, reason: str) -> None:
    problem = target_url_problem(url, API, allowed_hosts=())
    assert problem is not None
    assert problem.startswith("spec.target.url: ")
    assert reason in problem
    assert "PLIMSOLL_ALLOWED_TARGET_HOSTS" in problem


@pytest.mark.parametrize(
    "url",
    [
        None,
        "http://shop.team-a.svc.cluster.local:8080/",
        "https://api.example.com/",
        "http://10.0.12.7:8080/",
        "http://[2001:db8::7]/",
    ],
)
def test_services_of_the_cluster_and_beyond_pass(url: str | None) -> None:
    assert target_url_problem(url, API, allowed_hosts=()) is None


def test_the_admins_list_lets_a_refused_host_through() -> None:
    assert target_url_problem("http://127.0.0.1:8080/", API, {"127.0.0.1"}) is None
    assert target_url_problem("http://[::1]:8080/", API, {"[::1]"}) is None
    assert target_url_problem("http://127.0.0.2:8080/", API, {"127.0.0.1"}) is not None


@pytest.mark.parametrize(
    ("resolved", "reason"),
    [
        (["169.254.169.254"], "resolves to 169.254.169.254, which is a link-local address"),
        (["10.0.0.5", "fd00:ec2::254"], "resolves to fd00:ec2::254, which is a link-local"),
        (["::ffff:169.254.170.2"], "resolves to 169.254.170.2"),
        (["10.96.0.1"], "resolves to 10.96.0.1, which is the cluster's API server"),
        (["127.0.0.1"], "resolves to 127.0.0.1, which is loopback"),
        (["fe80::1%eth0"], "resolves to fe80::1, which is a link-local"),
        (["0.0.0.0"], "resolves to 0.0.0.0, which is the unspecified address"),
    ],
)
def test_a_host_name_is_refused_when_any_address_it_resolves_to_is(
    resolved: list[str], reason: str
) -> None:
    problem = target_url_problem("http://shop.example.com:8080/", API, (), resolved)
    assert problem is not None
    assert problem.startswith("spec.target.url: 'shop.example.com' ")
    assert reason in problem
    assert "PLIMSOLL_ALLOWED_TARGET_HOSTS" in problem


def test_a_host_name_resolving_to_ordinary_addresses_passes_and_the_admin_list_wins() -> None:
    url = "http://shop.example.com/"
    assert target_url_problem(url, API, (), ["10.0.12.7", "2001:db8::7"]) is None
    assert target_url_problem(url, API, {"shop.example.com"}, ["169.254.169.254"]) is None


@pytest.mark.parametrize(
    "address", ["64:ff9b::a9fe:a9fe", "::ffff:a9fe:a9fe", "::a9fe:a9fe", "2002:a9fe:a9fe::5"]
)
def test_a_name_resolving_to_an_ipv6_spelling_of_metadata_is_refused(address: str) -> None:
    problem = target_url_problem("http://shop.example.com/", API, (), [address])
    assert problem is not None
    assert "resolves to 169.254.169.254, which is a link-local address" in problem


def test_the_generators_get_the_same_rules_as_networks() -> None:
    networks = refused_networks("http://shop.example.com/", API, ())
    for expected in ("169.254.0.0/16", "fd00:ec2::254/128", "127.0.0.0/8", "::1/128"):
        assert expected in networks
    # The generators compare resolved addresses with networks as they are: the IPv6
    # spellings of each refused IPv4 network are networks of their own.
    for expected in (
        "100.100.100.200/32",
        "64:ff9b::a9fe:0/112",
        "::ffff:a9fe:0/112",
        "::a9fe:0/112",
        "2002:a9fe::/32",
        "64:ff9b::7f00:0/104",
    ):
        assert expected in networks
    assert "10.96.0.1/32" in networks  # the API server's IP; its name is not a network
    assert refused_networks(None, API, ()) == []
    assert refused_networks("http://shop.example.com/", API, {"shop.example.com"}) == []


LISTED = external_targets_from("shop.example.com, .staging.example.com,10.20.0.0/16,fd00::7")


@pytest.mark.parametrize(
    "url",
    [
        "http://shop.example.com:8080/cart",
        "https://SHOP.example.com./",  # the same name, however it is spelled
        "http://api.staging.example.com/",  # under a listed domain
        "http://10.20.3.4:8080/",  # a literal inside a listed network
        "http://[fd00::7]/",
        None,  # no target.url: nothing to allow
    ],
)
def test_a_listed_host_domain_or_network_is_an_allowed_external_target(url: str | None) -> None:
    assert external_target_problem(url, LISTED) is None


@pytest.mark.parametrize(
    "url",
    [
        "http://orders.team-b.svc.cluster.local:8080/",  # another team's Service
        "http://10.96.14.2/",  # a cluster IP
        "http://postgres.example.com:5432/",
        "http://x.shop.example.com/",  # a listed name admits itself, not names under it
        "http://staging.example.com/",  # a listed domain admits names under it, not itself
        "http://10.21.0.1/",  # outside the listed network
        "http://in-net.example.com/",  # a name, even one resolving into the network
    ],
)
def test_anything_not_listed_is_refused_naming_the_field_the_list_and_the_fix(url: str) -> None:
    problem = external_target_problem(url, LISTED)
    assert problem is not None
    assert problem.startswith("spec.target.url: ")
    assert "is not an external target this cluster's operator allows" in problem
    assert "PLIMSOLL_EXTERNAL_TARGETS (Helm: externalTargets)" in problem
    assert "plimsoll run" in problem  # where it would run as written


def test_by_default_no_external_target_is_allowed_but_an_admins_exception_is() -> None:
    problem = external_target_problem("http://shop.example.com/", frozenset())
    assert problem is not None
    assert "(allowed: none)" in problem
    exception = external_target_problem("http://127.0.0.1:9000/", (), allowed_hosts={"127.0.0.1"})
    assert exception is None


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("10.0.0.0/33", "'10.0.0.0/33' is not a network"),
        ("shop example.com", "is not a host name"),
        ("user@shop.example.com", "is not a host name"),
        (".", "is not a host name"),
    ],
)
def test_a_bad_entry_in_the_admins_list_is_named(text: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        external_targets_from(text)
