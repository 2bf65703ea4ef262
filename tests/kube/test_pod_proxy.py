"""The pod-proxy relay (`plimsoll.kube.pod_proxy`) through an emulated API server.

The relay is what an operator outside the cluster reaches generators by. Here
it talks to kmock's emulator (`tests.controller.kubelet.FakeCluster`), whose pod
proxy forwards to a real HTTP server bound on the pod's 127.0.0.x address, the
way a real API server forwards to a pod: methods, paths, queries, bodies,
statuses and content types must survive both hops, and the API server's own
refusals must reach the caller as they are. The relay holds the operator's
credentials: a request without its token, to a pod it did not hand out, or with a
path that climbs (`..`, `%2F`) must reach no API server at all.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass

import aiohttp.web
import httpx
import kmock
import pytest

from plimsoll.kube.client import KubeClient
from plimsoll.kube.pod_proxy import PodProxyRelay
from tests.controller.fake_cluster import FakeCluster

POD_IP = "127.0.0.251"


@dataclass
class Setup:
    relay: PodProxyRelay
    port: int  # the pod's HTTP port
    api: httpx.AsyncClient  # the relay's clients: plain HTTP on 127.0.0.1
    seen_auth: list[str | None]


async def _pod_server(seen_auth: list[str | None]) -> aiohttp.web.AppRunner:
    async def echo(request: aiohttp.web.Request) -> aiohttp.web.Response:
        seen_auth.append(request.headers.get("Authorization"))
        body = {
            "method": request.method,
            "path": request.path,
            "query": dict(request.query),
            "body": (await request.read()).decode(),
        }
        status = 201 if request.method == "POST" else 200
        return aiohttp.web.json_response(body, status=status)

    async def boom(_: aiohttp.web.Request) -> aiohttp.web.Response:
        return aiohttp.web.Response(status=409, text="busy", content_type="text/plain")

    app = aiohttp.web.Application()
    app.router.add_route("*", "/boom", boom)
    app.router.add_route("*", "/{tail:.*}", echo)
    runner = aiohttp.web.AppRunner(app, access_log=None)
    await runner.setup()
    await aiohttp.web.TCPSite(runner, POD_IP, 0).start()
    return runner


@pytest.fixture
async def setup() -> AsyncIterator[Setup]:
    seen_auth: list[str | None] = []
    pod_server = await _pod_server(seen_auth)
    port = int(pod_server.addresses[0][1])
    async with FakeCluster() as emulator, kmock.Server(emulator) as server:
        url = str(server.url).rstrip("/")
        async with httpx.AsyncClient(base_url=url) as admin:
            for name, ip in (("generator-0", POD_IP), ("starting", None)):
                pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}}
                pod["status"] = {"podIP": ip} if ip else {}
                created = await admin.post("/api/v1/namespaces/run/pods", json=pod)
                created.raise_for_status()
        client = KubeClient(url, headers={"Authorization": "Bearer operator-token"})
        relay = PodProxyRelay(client)
        await relay.start()
        try:
            async with httpx.AsyncClient(timeout=10) as api:
                yield Setup(relay, port, api, seen_auth)
        finally:
            await relay.stop()
            await client.aclose()
    await pod_server.cleanup()


async def test_get_and_post_reach_the_pod_with_path_query_and_body(setup: Setup) -> None:
    base = setup.relay.url_for("run", "generator-0", setup.port)
    assert httpx.URL(base).host == "127.0.0.1"
    got = await setup.api.get(f"{base}/trials/t-1", params={"wait": "2", "x": "a b"})
    assert got.status_code == 200
    assert got.json() == {
        "method": "GET",
        "path": "/trials/t-1",
        "query": {"wait": "2", "x": "a b"},
        "body": "",
    }
    payload = {"level": 40, "note": "é"}
    posted = await setup.api.post(f"{base}/trials", json=payload)
    assert posted.status_code == 201
    assert posted.headers["content-type"].startswith("application/json")
    echoed = posted.json()
    assert (echoed["method"], echoed["path"]) == ("POST", "/trials")
    assert json.loads(echoed["body"]) == payload
    deleted = await setup.api.delete(f"{base}/trials/t-1")
    assert deleted.json()["method"] == "DELETE"
    # The operator's credentials are for the API server; the pod never sees them.
    assert setup.seen_auth == [None, None, None]


async def test_the_pods_own_error_answers_come_back_unchanged(setup: Setup) -> None:
    base = setup.relay.url_for("run", "generator-0", setup.port)
    answer = await setup.api.post(f"{base}/boom", content=b"x")
    assert answer.status_code == 409
    assert answer.text == "busy"
    assert answer.headers["content-type"].startswith("text/plain")


async def test_api_server_refusals_reach_the_caller(setup: Setup) -> None:
    missing = await setup.api.get(setup.relay.url_for("run", "nosuch", setup.port) + "/trials")
    assert missing.status_code == 404
    assert "nosuch" in missing.json()["message"]
    no_ip = await setup.api.get(setup.relay.url_for("run", "starting", setup.port) + "/trials")
    assert no_ip.status_code == 503
    closed = await setup.api.get(setup.relay.url_for("run", "generator-0", 1) + "/trials")
    assert closed.status_code == 503
    assert "error trying to reach service" in closed.json()["message"]


async def test_an_unreachable_api_server_is_a_502_naming_it() -> None:
    client = KubeClient("http://127.0.0.1:1")  # nothing listens on port 1
    relay = PodProxyRelay(client)
    await relay.start()
    try:
        async with httpx.AsyncClient(timeout=10) as api:
            answer = await api.get(relay.url_for("run", "generator-0", 8089) + "/trials")
    finally:
        await relay.stop()
        await client.aclose()
    assert answer.status_code == 502
    assert "127.0.0.1:1" in answer.text


@pytest.fixture
async def recording_api() -> AsyncIterator[tuple[str, list[str]]]:
    """An API server that records every path it is asked for, and answers 200."""
    seen: list[str] = []

    async def record(request: aiohttp.web.Request) -> aiohttp.web.Response:
        seen.append(request.raw_path)
        return aiohttp.web.json_response({"kind": "Secret"})

    app = aiohttp.web.Application()
    app.router.add_route("*", "/{tail:.*}", record)
    runner = aiohttp.web.AppRunner(app, access_log=None)
    await runner.setup()
    await aiohttp.web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}", seen
    finally:
        await runner.cleanup()


async def _raw(port: int, target: str, authorization: str | None) -> tuple[int, bytes]:
    """One request with the target exactly as written (no client normalises `..`)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    head = f"GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
    if authorization:
        head += f"Authorization: {authorization}\r\n"
    writer.write((head + "\r\n").encode())
    answer = await reader.read()
    writer.close()
    status = int(answer.split(b" ", 2)[1])
    return status, answer


async def test_the_relay_refuses_any_request_without_its_token(
    recording_api: tuple[str, list[str]],
) -> None:
    url, seen = recording_api
    client = KubeClient(url)
    relay = PodProxyRelay(client)
    await relay.start()
    try:
        good = httpx.URL(relay.url_for("run", "generator-0", 8089))
        basic = httpx.BasicAuth(good.username, good.password)
        wrong = httpx.BasicAuth(good.username, "guess")
        async with httpx.AsyncClient(timeout=10) as api:
            bare = f"http://127.0.0.1:{relay.port}/run/generator-0/8089/trials"
            assert (await api.get(bare)).status_code == 401
            assert (await api.get(bare, auth=wrong)).status_code == 401
            assert (await api.get(bare, auth=basic)).status_code == 200
            assert (await api.get(f"{good}/trials")).status_code == 200  # the URL's own
            other = f"http://127.0.0.1:{relay.port}/kube-system/etcd-0/2379/"
            assert (await api.get(other, auth=basic)).status_code == 404
    finally:
        await relay.stop()
        await client.aclose()
    assert seen == [
        "/api/v1/namespaces/run/pods/generator-0:8089/proxy/trials",
        "/api/v1/namespaces/run/pods/generator-0:8089/proxy/trials",
    ]


@pytest.mark.parametrize(
    "target",
    [
        "/run/generator-0/8089/../../../../secrets",
        "/run/generator-0/8089/..%2F..%2F..%2F..%2Fsecrets",
        "/run/generator-0/8089/%2e%2e/%2e%2e/%2e%2e/secrets",
        "/run/generator-0/8089/a%5c..%5c..",
        "/run/generator-0/8089/a%00b",
        "/run/generator-0/8089//trials",
        "/run/../8089/trials",
        "/run/generator-0:80/8089/trials",
        "/run/generator-0/80a/trials",
    ],
)
async def test_a_path_that_climbs_is_refused_and_reaches_no_api_server(
    recording_api: tuple[str, list[str]], target: str
) -> None:
    url, seen = recording_api
    client = KubeClient(url)
    relay = PodProxyRelay(client)
    await relay.start()
    try:
        good = httpx.URL(relay.url_for("run", "generator-0", 8089))
        authorization = httpx.BasicAuth(good.username, good.password)
        header = next(authorization.auth_flow(httpx.Request("GET", "http://x"))).headers
        status, answer = await _raw(relay.port, target, header["Authorization"])
    finally:
        await relay.stop()
        await client.aclose()
    assert status == 400, answer
    assert seen == []
