"""A synthetic target with an analytic ceiling: every request costs a fixed CPU time.

`GET /work` burns `WORK_MS` milliseconds of this process's own CPU time
(measured with `time.thread_time`, so being throttled or descheduled does not
shorten the work) and answers. Pinned to C cores it can serve at most
C / (WORK_MS / 1000) requests per second; the runner's test checks that the
ceiling it finds lies within 15% of that. Standard library only.

Run: `PORT=8080 WORK_MS=20 python cpu_bound.py`.
"""

from __future__ import annotations

import asyncio
import os
import time

from tinyhttp import Request, Response, serve

WORK_SECONDS = float(os.environ.get("WORK_MS", "20")) / 1000


def burn(seconds: float) -> int:
    end = time.thread_time() + seconds
    spins = 0
    while time.thread_time() < end:
        spins += sum(range(200))
    return spins


async def handle(request: Request) -> Response:
    if request.path == "/healthz":
        return Response(200, b'{"ok":true}')
    if request.path.startswith("/work"):
        return Response(200, b'{"spins":%d}' % burn(WORK_SECONDS))
    return Response(404, b"{}")


if __name__ == "__main__":
    asyncio.run(serve(handle))
