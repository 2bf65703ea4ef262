"""A target whose ceiling is set by its service time, not by the host: one request at a time.

`GET /work` holds the target's single worker for SERVICE_MS milliseconds (a
sleep, not CPU), so it serves at most 1000 / SERVICE_MS requests per second
whatever else the machine runs. Comparisons that must come out the same on a
busy shared machine (two identical variants within noise, a variant at twice the
service time clearly lower) use it; `cpu_bound.py` is the CPU-bound counterpart
whose ceiling moves with the CPU the host grants. Standard library only.

Run: `PORT=8080 SERVICE_MS=20 python serial_work.py`.
"""

from __future__ import annotations

import asyncio
import os

from tinyhttp import Request, Response, serve

SERVICE_SECONDS = float(os.environ.get("SERVICE_MS", "20")) / 1000
WORKER = asyncio.Lock()  # one request at a time: the queue in front of it is the load


async def handle(request: Request) -> Response:
    if request.path == "/healthz":
        return Response(200, b'{"ok":true}')
    if request.path.startswith("/work"):
        async with WORKER:
            await asyncio.sleep(SERVICE_SECONDS)
        return Response(200, b'{"ok":true}')
    return Response(404, b"{}")


if __name__ == "__main__":
    asyncio.run(serve(handle))
