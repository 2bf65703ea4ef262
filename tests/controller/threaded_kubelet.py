"""The test kubelet on a thread of its own, for synchronous tests (`test_real_cluster.py`).

`RealKubelet` is asyncio code; a module-scoped, synchronous fixture runs it on
its own event loop in a daemon thread, with its own admin client, and stops it
(processes, cgroups, the Node) when the module is done.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import Future
from pathlib import Path

from tests.controller.admin_api import AdminApi
from tests.controller.control_plane import ControlPlane
from tests.controller.real_kubelet import RealKubelet


class ThreadedKubelet:
    def __init__(self, plane: ControlPlane, workdir: Path) -> None:
        self.plane, self.workdir = plane, workdir
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.kubelet: RealKubelet | None = None

    def start(self) -> RealKubelet:
        self.thread.start()
        return self._run(self._start()).result(timeout=60)

    async def _start(self) -> RealKubelet:
        self.kubelet = RealKubelet(AdminApi(self.plane), self.workdir)
        await self.kubelet.start()
        return self.kubelet

    def stop(self) -> None:
        if self.kubelet is not None:
            self._run(self._stop(self.kubelet)).result(timeout=60)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()

    @staticmethod
    async def _stop(kubelet: RealKubelet) -> None:
        await kubelet.stop()
        await kubelet.api.aclose()

    def _run(self, coroutine: object) -> Future[RealKubelet]:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop)  # type: ignore[arg-type]
