"""The relay's path parser: what it builds for the API server, and what it refuses."""

from __future__ import annotations

import pytest

from plimsoll.kube.proxy_path import ProxyPathError, parse_proxy_path


def test_a_plain_path_becomes_the_pods_proxy_path() -> None:
    target = parse_proxy_path("/run-1/generator-0/8089/trials/t%201")
    assert target.segments == ("trials", "t 1")
    assert target.api_path() == "/api/v1/namespaces/run-1/pods/generator-0:8089/proxy/trials/t%201"


def test_a_trailing_slash_is_kept() -> None:
    assert parse_proxy_path("/ns/pod/80/").api_path().endswith("/proxy/")


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ("/ns/pod/80/..", "'..'"),
        ("/ns/pod/80/a/%2E%2E/b", "'..'"),
        ("/ns/pod/80/..%2F..%2Fsecrets", "encoded slash"),
        ("/ns/pod/80/a%2fb", "encoded slash"),
        ("/ns/pod/80/a%5Cb", "backslash"),
        ("/ns/pod/80/a\\b", "backslash"),
        ("/ns/pod/80/a%0Ab", "control character"),
        ("/ns/pod/80/a//b", "empty"),
        ("/ns/pod/80/%ff", "not UTF-8"),
        ("/NS/pod/80/", "namespace"),
        ("/ns/pod..x/80/", "pod name"),
        ("/ns/pod/0/", "port"),
        ("/ns/pod/١٢/", "port"),
        ("/ns/pod", "/NAMESPACE/POD/PORT"),
    ],
)
def test_refused(raw: str, why: str) -> None:
    with pytest.raises(ProxyPathError, match=why):
        parse_proxy_path(raw)
