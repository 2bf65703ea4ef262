"""A memory-bound target: every request holds a fixed amount of memory for a fixed time.

`GET /hold` maps `HOLD_MIB` MiB of anonymous memory with MAP_POPULATE (the kernel
faults every page in at once, so it is resident and charged to the target's
memory cgroup), waits
`HOLD_SECONDS` and unmaps it before answering. At a steady rate of r requests
per second, Little's law puts r × HOLD_SECONDS requests in flight, so the
target needs its idle working set plus r × HOLD_SECONDS × HOLD_MIB MiB: under a
limit of L MiB it carries at most (L - idle) / (HOLD_SECONDS × HOLD_MIB)
requests per second, and above that it is OOM-killed. The CPU per request is
small, so CPU does not limit it first: populating a page costs kernel time, and
on a virtual machine whose host takes freed pages back it is dear (measured on
this project's Firecracker VM: 3.5 ms of CPU per 4 MiB populated, 7.5 ms when
the pages were written one by one instead), so the shapes leave it room. The shape tests
(tests/e2e/test_shapes_real.py) use it as the memory-bound target.
Standard library only.

Run: `PORT=8080 HOLD_MIB=4 HOLD_SECONDS=2 python memory_hold.py`.
"""

from __future__ import annotations

import asyncio
import mmap
import os

from tinyhttp import Request, Response, serve

HOLD_BYTES = int(float(os.environ.get("HOLD_MIB", "4")) * 2**20)
HOLD_SECONDS = float(os.environ.get("HOLD_SECONDS", "2"))
FLAGS = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | mmap.MAP_POPULATE


def resident(size: int) -> mmap.mmap:
    """`size` bytes of anonymous memory, every page resident (populated, not just mapped)."""
    return mmap.mmap(-1, size, flags=FLAGS)


async def handle(request: Request) -> Response:
    if request.path == "/healthz":
        return Response(200, b'{"ok":true}')
    if request.path.startswith("/hold"):
        held = resident(HOLD_BYTES)
        try:
            await asyncio.sleep(HOLD_SECONDS)
        finally:
            held.close()  # unmapped at once: the memory leaves the cgroup with the request
        return Response(200, b'{"heldBytes":%d}' % HOLD_BYTES)
    return Response(404, b"{}")


if __name__ == "__main__":
    asyncio.run(serve(handle))
