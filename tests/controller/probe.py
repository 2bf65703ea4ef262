"""A container's readiness probe, as a kubelet runs it: HTTP GET or a TCP connect.

No probe means ready once started, as Kubernetes has it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx


async def probe_ok(http: httpx.AsyncClient, ip: str, probe: dict[str, Any] | None) -> bool:
    probe = probe or {}
    if "httpGet" in probe:
        get = probe["httpGet"]
        try:
            response = await http.get(f"http://{ip}:{get['port']}{get.get('path', '/')}")
        except httpx.HTTPError:
            return False
        return 200 <= response.status_code < 400
    if "tcpSocket" in probe:
        try:
            _, writer = await asyncio.open_connection(ip, probe["tcpSocket"]["port"])
        except OSError:
            return False
        writer.close()
        return True
    return True
