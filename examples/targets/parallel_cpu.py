"""A CPU-bound target that uses every core its quota grants: a known cost per request.

`GET /work` hashes buffers on a pool of `THREADS` worker threads until the
worker has spent `WORK_MS` milliseconds of its own CPU time (`time.thread_time`,
so a throttled or descheduled worker still does the whole work). hashlib
releases the GIL on buffers this large, so the workers run in parallel: pinned
to C cores (C up to THREADS) the target serves at most C / (WORK_MS / 1000)
requests per second. `cpu_bound.py` is the single-threaded counterpart, which
cannot use a second core. The shape tests (tests/e2e/test_shapes_real.py) use
this one as the CPU-bound target.
Standard library only.

Run: `PORT=8080 WORK_MS=40 THREADS=4 python parallel_cpu.py`.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import time
from concurrent.futures import ThreadPoolExecutor

from tinyhttp import Request, Response, serve

WORK_SECONDS = float(os.environ.get("WORK_MS", "40")) / 1000
THREADS = int(os.environ.get("THREADS", "4"))
# 64 KiB per update: far above hashlib's GIL-release size (2 KiB), and short enough
# (tens of microseconds) that the CPU-time check overshoots WORK_MS by little.
BUFFER = b"\x5a" * (64 * 1024)
POOL = ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="work")


def burn(seconds: float) -> int:
    """Hash BUFFER until this thread has used `seconds` of CPU; the number of updates."""
    digest = hashlib.sha256()
    end = time.thread_time() + seconds
    updates = 0
    while time.thread_time() < end:
        digest.update(BUFFER)
        updates += 1
    return updates


async def handle(request: Request) -> Response:
    if request.path == "/healthz":
        return Response(200, b'{"ok":true}')
    if request.path.startswith("/work"):
        updates = await asyncio.get_running_loop().run_in_executor(POOL, burn, WORK_SECONDS)
        return Response(200, b'{"updates":%d}' % updates)
    return Response(404, b"{}")


if __name__ == "__main__":
    asyncio.run(serve(handle))
