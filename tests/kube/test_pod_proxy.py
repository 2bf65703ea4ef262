"""The pod-proxy relay (`plimsoll.kube.pod_proxy`) through an emulated API server.

The relay is what an operator outside the cluster reaches generators by. Here
it talks to kmock's emulator (`tests.controller.kubelet.FakeCluster`), whose pod
proxy forwards to a real HTTP server bound on the pod's 127.0.0.x address, the
way a real API server forwards to a pod: methods, paths, queries, bodies,
statuses and content types must survive both hops, and the API server's own
refusals must reach the caller as they are.
"""

from __future__ import annotations

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
    assert base.startswith("http://127.0.0.1:")
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
