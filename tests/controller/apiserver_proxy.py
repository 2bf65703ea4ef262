"""The API server's pod proxy for the emulated cluster: `pods/{name}[:port]/proxy/{path}`.

kmock 0.8's emulator has no subresources, so `FakeCluster` (kubelet.py) hands
these paths here. As a real API server does, the request is forwarded to the
pod's IP (the fake kubelet's process on 127.0.0.x) on the named port, with the
path, query, method and body; the pod's answer comes back as it is. What a real
API server answers when it cannot reach the pod is kept too: 404 for a pod that
does not exist, 503 for one without an IP yet, and 503 "error trying to reach
service" when nothing listens.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import aiohttp
import aiohttp.web

PROXY_PATH = re.compile(
    r"^/api/v1/namespaces/(?P<ns>[^/]+)/pods/(?:https?:)?(?P<pod>[^/:]+)(?::(?P<port>\d+))?"
    r"/proxy(?P<rest>/.*)?$"
)
_HOP = {"host", "connection", "content-length", "transfer-encoding", "authorization", "keep-alive"}


def _status(code: int, reason: str, message: str) -> aiohttp.web.Response:
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "status": "Failure"}
    body |= {"code": code, "reason": reason, "message": message}
    return aiohttp.web.json_response(body, status=code)


async def serve_pod_proxy(
    request: aiohttp.web.BaseRequest,
    match: re.Match[str],
    find_pod: Callable[[str, str], dict[str, Any] | None],
) -> aiohttp.web.StreamResponse:
    ns, name = match.group("ns"), match.group("pod")
    pod = find_pod(ns, name)
    if pod is None:
        return _status(404, "NotFound", f'pods "{name}" not found')
    ip = (pod.get("status") or {}).get("podIP")
    if not ip:
        return _status(503, "ServiceUnavailable", f"pod {name} has no IP address yet")
    port = match.group("port") or "80"
    url = f"http://{ip}:{port}{match.group('rest') or '/'}"
    headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as session,
            session.request(
                request.method,
                url,
                params=request.query,
                data=await request.read(),
                headers=headers,
                allow_redirects=False,
            ) as upstream,
        ):
            body = await upstream.read()
            passed = {k: v for k, v in upstream.headers.items() if k.lower() not in _HOP}
            passed.pop("Content-Encoding", None)  # aiohttp has already decoded the body
            return aiohttp.web.Response(status=upstream.status, body=body, headers=passed)
    except (aiohttp.ClientError, TimeoutError) as exc:
        return _status(
            503, "ServiceUnavailable", f"error trying to reach service: {exc or type(exc)}"
        )
