"""Running a trial on one or several worker processes (one per core).

With one process the trial runs on the control server's own loop. With N, the
request is split exactly (`plimsoll.shared.load_split`, by the rule the runner
split the level across generators), each share goes to a worker process over
a pipe, and the N results are merged with `plimsoll.shared.results`. A worker
is a spawned process running uvloop; it answers "start" with its result when
the trial ends, and "abort" by ending its trial early (the result then is the
partial one). Mid-trial it sends each timeline slice as it is cut ("slice"), so
`progress()` can tell a poll what the trial measured so far: the slices every
process has cut, side by side and not merged here (merging decodes histograms, and
this process's CPU belongs to the load; the runner merges them).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import multiprocessing
from multiprocessing.connection import Connection
from typing import Any

from plimsoll.api.timeline import TimelineSlice
from plimsoll.api.trial import TrialRequest, TrialResult
from plimsoll.shared.load_split import split_request
from plimsoll.shared.results import merge_results
from plimsoll_generator.floor import FloorProcess
from plimsoll_generator.trial import run_trial


def side_by_side(per_process: list[list[TimelineSlice]]) -> list[TimelineSlice]:
    """The slices every process has cut so far, concatenated: only as many per process as
    the slowest has cut, so the newest second is never one process's share alone."""
    cut = min((len(slices) for slices in per_process), default=0)
    return [s for slices in per_process for s in slices[:cut]]


class InProcess:
    """The trial on the caller's loop: no pipes, no copies."""

    def __init__(self) -> None:
        self.abort_event: asyncio.Event | None = None
        self.slices: list[TimelineSlice] = []
        self.floor = FloorProcess()

    async def start(self) -> None:
        """Start the floor process before the first trial, so its start-up is in none."""
        await self.floor.start()

    async def run(self, request: TrialRequest, trial_id: str) -> TrialResult:
        self.abort_event = asyncio.Event()
        self.slices = []
        return await run_trial(
            request, trial_id, self.abort_event, self.slices.append, floor=self.floor
        )

    def progress(self) -> list[TimelineSlice]:
        return list(self.slices)

    def abort(self) -> None:
        if self.abort_event is not None:
            self.abort_event.set()

    async def close(self) -> None:
        await self.floor.stop()


def _worker_main(conn: Connection) -> None:
    import uvloop

    uvloop.run(_worker_loop(conn))


async def _worker_loop(conn: Connection) -> None:
    loop = asyncio.get_running_loop()
    inbox: asyncio.Queue[Any] = asyncio.Queue()

    def readable() -> None:
        try:
            inbox.put_nowait(conn.recv())
        except EOFError:
            inbox.put_nowait(["exit"])
            loop.remove_reader(conn.fileno())

    loop.add_reader(conn.fileno(), readable)
    floor = FloorProcess()
    starting = asyncio.create_task(floor.start())  # before the first trial, as InProcess
    abort = asyncio.Event()
    running: asyncio.Task[TrialResult] | None = None
    while True:
        message = await inbox.get()
        if message[0] == "start":
            abort = asyncio.Event()
            request = TrialRequest.model_validate_json(message[2])

            def sent_on(cut: TimelineSlice) -> None:
                conn.send(["slice", cut.to_wire_json()])

            running = asyncio.create_task(
                run_trial(request, message[1], abort, sent_on, floor=floor)
            )
            running.add_done_callback(
                lambda task: conn.send(["result", task.result().to_wire_json()])
            )
        elif message[0] == "abort":
            abort.set()
        elif message[0] == "exit":
            abort.set()
            if running is not None:
                with contextlib.suppress(Exception):
                    await running
            starting.cancel()
            await floor.stop()
            return


class ProcessPool:
    """N spawned worker processes; one trial at a time across all of them."""

    def __init__(self, processes: int) -> None:
        context = multiprocessing.get_context("spawn")
        self.conns: list[Connection] = []
        self.procs: list[Any] = []
        self.slices: list[list[TimelineSlice]] = []
        for _ in range(processes):
            parent, child = context.Pipe()
            proc = context.Process(target=_worker_main, args=(child,), daemon=True)
            proc.start()
            child.close()
            self.conns.append(parent)
            self.procs.append(proc)

    async def run(self, request: TrialRequest, trial_id: str) -> TrialResult:
        loop = asyncio.get_running_loop()
        shares = split_request(request, len(self.conns))
        futures: list[asyncio.Future[TrialResult]] = []
        self.slices = [[] for _ in self.conns]
        for conn, share, slices in zip(self.conns, shares, self.slices, strict=True):
            future: asyncio.Future[TrialResult] = loop.create_future()
            futures.append(future)

            def readable(
                conn: Connection = conn,
                future: asyncio.Future[TrialResult] = future,
                slices: list[TimelineSlice] = slices,
            ) -> None:
                try:
                    kind, payload = conn.recv()
                    if kind == "slice":  # progress: the reader stays for the result
                        slices.append(TimelineSlice.model_validate_json(payload))
                        return
                    loop.remove_reader(conn.fileno())
                    future.set_result(TrialResult.model_validate(json.loads(payload)))
                except (EOFError, OSError) as exc:
                    loop.remove_reader(conn.fileno())
                    future.set_exception(RuntimeError(f"a worker process died: {exc}"))

            loop.add_reader(conn.fileno(), readable)
            conn.send(["start", trial_id, share.to_wire_json()])
        results = await asyncio.gather(*futures)
        return merge_results(results, trial_id)

    def progress(self) -> list[TimelineSlice]:
        return side_by_side(self.slices)

    def abort(self) -> None:
        for conn in self.conns:
            with contextlib.suppress(OSError):
                conn.send(["abort"])

    async def start(self) -> None:
        """Nothing to wait for: each worker starts its own floor process as it comes up."""

    async def close(self) -> None:
        for conn in self.conns:
            with contextlib.suppress(OSError):
                conn.send(["exit"])
        for proc in self.procs:
            proc.join(timeout=5)
            if proc.is_alive():
                proc.terminate()
