"""Local processes the platform starts: process groups, readiness, log tails, ports.

Used by `plimsoll.platforms.local.platform`. Every process runs in its own session (a
process group led by it), so stopping it signals the whole group: a shell
wrapper, a server's worker processes and anything they fork go together, and
nothing is left orphaned. Output goes to a log file per process, whose last
lines are what the user sees when a process dies early.

Each process also gets a parent-death signal: if the runner dies without stopping
it (SIGKILL, a crash), the kernel sends it SIGKILL. What it forked itself is found
by the next run (`plimsoll.platforms.local.leftovers`).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import os
import signal
import socket
import time
from collections.abc import Sequence
from pathlib import Path

import httpx

from plimsoll.platforms.base import PlatformError

_TERM_GRACE = 5.0
TAIL_LINES = 20
_PR_SET_PDEATHSIG = 1


def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    return ctypes.CDLL(name, use_errno=True) if name else None


_LIBC = _libc()  # loaded before any fork: the child only calls into it


def _die_with_parent() -> None:
    """In the child, between fork and exec: SIGKILL when the runner's thread dies.
    Kept across exec (the cgroup shell's `exec` too); Linux only, elsewhere a no-op."""
    if _LIBC is not None:
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def free_port(host: str = "127.0.0.1") -> int:
    """A port nobody listens on now (the kernel's choice; a race is possible but rare)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class PortHold:
    """A port kept from everyone else until its process is about to listen on it: bound,
    not listening, so a connect is refused (nobody serves there yet) and no other bind
    of ours or the kernel's gets it (a port from `free_port` is free only for a moment,
    and the kernel hands the same one out again)."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host = host
        self._sock: socket.socket | None = None
        self.port = self.hold()

    def hold(self, port: int = 0) -> int:
        """Bind `port` (any free one for 0) and keep it; the port held."""
        self.release()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind((self.host, port))
        self._sock = sock
        return int(sock.getsockname()[1])

    def release(self) -> None:
        """Let the port go, for its own process to bind at once."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None


def cpu_list(cpus: set[int] | None) -> str:
    """The CPUs a process is pinned to, for the placement lines: "2,3", or "any"."""
    return ",".join(str(c) for c in sorted(cpus)) if cpus else "any"


class ManagedProcess:
    """One started command, its process group and its log."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        env: dict[str, str],
        log_path: Path,
        *,
        cgroup_procs: Sequence[Path] = (),
        cpus: set[int] | None = None,
    ) -> None:
        self.name = name
        self.argv = list(argv)
        self.env = env
        self.log_path = log_path
        self.cgroup_procs = list(cgroup_procs)
        self.cpus = cpus
        self.process: asyncio.subprocess.Process | None = None
        self.started_at = 0.0

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    @property
    def returncode(self) -> int | None:
        return self.process.returncode if self.process is not None else None

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.returncode is None

    def _command(self) -> list[str]:
        if not self.cgroup_procs:
            return self.argv
        # The shell joins the cgroups before it execs the command, so every byte the
        # command allocates is charged to its limit from the first instruction on.
        script = (
            'IFS=:; for f in $PLIMSOLL_CGROUP_PROCS; do echo $$ > "$f" || exit 97; done; '
            'unset PLIMSOLL_CGROUP_PROCS; exec "$@"'
        )
        return ["/bin/sh", "-c", script, "plimsoll-pin", *self.argv]

    async def start(self) -> None:
        env = dict(self.env)
        if self.cgroup_procs:
            env["PLIMSOLL_CGROUP_PROCS"] = ":".join(str(p) for p in self.cgroup_procs)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            try:
                self.process = await asyncio.create_subprocess_exec(
                    *self._command(),
                    env=env,
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=log,
                    stderr=asyncio.subprocess.STDOUT,
                    start_new_session=True,
                    preexec_fn=_die_with_parent,
                )
            except OSError as exc:
                raise PlatformError(f"{self.name}: cannot run {self.argv[0]!r}: {exc}") from exc
        self.started_at = time.monotonic()
        if self.cpus:
            with contextlib.suppress(OSError):  # it may already have exited: readiness says so
                os.sched_setaffinity(self.process.pid, self.cpus)

    def tail(self, lines: int = TAIL_LINES) -> list[str]:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return []
        return text.splitlines()[-lines:]

    def died_message(self, what: str) -> str:
        tail = "\n".join(f"    {line}" for line in self.tail()) or "    (no output)"
        return (
            f"{self.name} {what} (exit code {self.returncode}); "
            f"its last log lines ({self.log_path}):\n{tail}"
        )

    async def kill(self) -> None:
        """SIGKILL to the group at once, as a fault does (`trial.faults`); waits for it."""
        if self.process is None or self.process.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        await self.process.wait()

    async def stop(self) -> None:
        """SIGTERM to the group, SIGKILL after a grace period; waits until it is gone."""
        if self.process is None:
            return
        pgid = self.process.pid  # it leads its own session, so its pid is the group id
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGTERM)
        try:
            async with asyncio.timeout(_TERM_GRACE):  # not wait_for: see restarter
                await self.process.wait()
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signal.SIGKILL)
            await self.process.wait()
        # Members that outlived the leader (double forks keep the group id) go too.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)


async def wait_ready(
    process: ManagedProcess,
    *,
    url: str | None = None,
    port: int | None = None,
    within: float,
) -> None:
    """Until `url` answers 2xx (or `port` accepts a connection); a death or a timeout
    raises `PlatformError` with the process's last log lines."""
    deadline = time.monotonic() + within
    async with httpx.AsyncClient(timeout=2.0) as client:
        while True:
            if not process.running:
                raise PlatformError(process.died_message("exited before it was ready"))
            if await _answers(client, url, port):
                return
            if time.monotonic() > deadline:
                where = url or f"127.0.0.1:{port}"
                raise PlatformError(
                    process.died_message(f"was not ready at {where} within {within:g}s")
                )
            await asyncio.sleep(0.1)


async def _answers(client: httpx.AsyncClient, url: str | None, port: int | None) -> bool:
    if url is not None:
        try:
            response = await client.get(url)
        except httpx.HTTPError:
            return False
        return response.is_success
    if port is None:
        return True
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        return False
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return True
