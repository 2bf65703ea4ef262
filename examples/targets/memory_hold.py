"""A memory-bound target: every request holds a fixed amount of memory for a fixed time.

`GET /hold` maps `HOLD_MIB` MiB of anonymous memory, writes every page of it
(so it is resident and charged to the target's memory cgroup), waits
`HOLD_SECONDS` and unmaps it before answering. At a steady rate of r requests
per second, Little's law puts r × HOLD_SECONDS requests in flight, so the
target needs its idle working set plus r × HOLD_SECONDS × HOLD_MIB MiB: under a
limit of L MiB it carries at most (L - idle) / (HOLD_SECONDS × HOLD_MIB)
requests per second, and above that it is OOM-killed. The CPU per request is
small (writing the pages), so CPU does not limit it first. The shape tests
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
CHUNK = b"\x01" * (64 * 1024)  # written chunk by chunk: no temporary as large as the hold


def resident(size: int) -> mmap.mmap:
    """`size` bytes of anonymous memory with every page written (resident, not just mapped)."""
    held = mmap.mmap(-1, size)
    for offset in range(0, size, len(CHUNK)):
        held[offset : offset + len(CHUNK)] = CHUNK[: size - offset]
    return held


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
