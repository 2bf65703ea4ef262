"""A small edge proxy whose every request passes through SENSORS inspection sensors.

`GET /work` runs BASE_MS of CPU (parsing, routing) plus SENSOR_MS per sensor
(each inspects the request), then answers. With `SENSORS=0` and `SENSORS=10`
it is the edge seed's feature comparison in miniature: the comparison's
feature cost should come out near SENSOR_MS of CPU per request per sensor.
CPU time is measured with `time.thread_time`, so throttling does not shorten
the work. Standard library only.

Run: `PORT=8080 SENSORS=10 python edge_sensors.py`.
"""

from __future__ import annotations

import asyncio
import os
import time

from tinyhttp import Request, Response, serve

BASE_SECONDS = float(os.environ.get("BASE_MS", "2")) / 1000
SENSOR_SECONDS = float(os.environ.get("SENSOR_MS", "0.2")) / 1000
SENSORS = int(os.environ.get("SENSORS", "0"))


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
        spins = burn(BASE_SECONDS)
        for _ in range(SENSORS):  # one inspection per sensor
            spins += burn(SENSOR_SECONDS)
        return Response(200, b'{"spins":%d}' % spins)
    return Response(404, b"{}")


if __name__ == "__main__":
    asyncio.run(serve(handle))
