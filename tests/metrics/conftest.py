"""Fixtures for the metrics tests: real v1 cgroups, a pinned CPU burner, a real Prometheus.

`prometheus` starts the Debian package's server (`/usr/bin/prometheus`) on an
ephemeral loopback port with a temporary TSDB; it is written so the operator tests
can reuse it (`from tests.metrics.conftest import ...` or a conftest import).
The cgroup fixture fails, with the reason, where cgroups cannot be written: the
metrics are not proven on a machine that cannot pin, so a skip would hide that.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from plimsoll.metrics.cgroup import CgroupPaths
from tests.localrun import marked_processes

CGROUP_ROOT = Path("/sys/fs/cgroup")
PROMETHEUS = os.environ.get("PLIMSOLL_PROMETHEUS", "/usr/bin/prometheus")

# A bounded CPU burner holding `mib` MiB of touched memory; it prints "ready" once the
# memory is resident so the tests measure a steady state.
BURNER = """
import sys, time
mib, seconds = int(sys.argv[1]), float(sys.argv[2])
held = bytearray(b"\\x01" * (mib << 20))
print("ready", flush=True)
deadline = time.monotonic() + seconds
while time.monotonic() < deadline:
    pass
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class ScratchCgroup:
    """A v1 cgroup made for one test, nested under this process's own groups."""

    paths: CgroupPaths
    dirs: list[Path]
    processes: list[subprocess.Popen[str]] = field(default_factory=list)

    def spawn_burner(self, *, mib: int = 48, seconds: float = 60.0) -> subprocess.Popen[str]:
        """Start the burner in its own process group, moved into this cgroup before it
        runs a line of Python (the shell joins the group, then execs)."""
        joins = " ".join(f"echo $$ > {d}/cgroup.procs;" for d in self.dirs)
        proc = subprocess.Popen(
            [
                "sh",
                "-c",
                f'{joins} exec "$0" -c "$1" "$2" "$3"',
                sys.executable,
                BURNER,
                str(mib),
                str(seconds),
            ],
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self.processes.append(proc)
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.strip() == "ready", f"burner did not start (exit {proc.poll()})"
        return proc


def _own_group(controller: str) -> Path:
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(","):
            return CGROUP_ROOT / controller / path.lstrip("/")
    raise AssertionError(f"this process is in no cgroup v1 {controller!r} hierarchy")


MakeCgroup = Callable[..., ScratchCgroup]
StartPrometheus = Callable[..., Awaitable["PrometheusServer"]]


@pytest.fixture
def cgroup_v1() -> Iterator[MakeCgroup]:
    made: list[ScratchCgroup] = []

    def make(*, cpu: float | None = 0.5, memory: int | None = None) -> ScratchCgroup:
        name = f"plimsoll-test-{uuid.uuid4().hex[:8]}"
        dirs = {c: _own_group(c) / name for c in ("cpu", "cpuacct", "memory")}
        try:
            for d in dirs.values():
                d.mkdir()
            if cpu is not None:
                (dirs["cpu"] / "cpu.cfs_period_us").write_text("100000")
                (dirs["cpu"] / "cpu.cfs_quota_us").write_text(str(round(cpu * 100000)))
            if memory is not None:
                (dirs["memory"] / "memory.limit_in_bytes").write_text(str(memory))
        except OSError as exc:
            pytest.fail(
                f"cannot create a cgroup v1 group under {CGROUP_ROOT} ({exc}): the cgroup "
                "metrics tests need root and a writable cpu, cpuacct and memory hierarchy"
            )
        group = ScratchCgroup(
            CgroupPaths(1, dirs["cpu"], dirs["memory"], cpuacct_dir=dirs["cpuacct"]),
            list(dirs.values()),
        )
        made.append(group)
        return group

    yield make
    for group in made:
        for proc in group.processes:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
            if proc.stdout:
                proc.stdout.close()
        for d in group.dirs:
            for _ in range(50):  # the kernel frees a group a moment after its last task
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.05)


@dataclass
class PrometheusServer:
    url: str
    process: subprocess.Popen[bytes]
    home: Path

    def log(self) -> str:
        return (self.home / "prometheus.log").read_text()[-2000:]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def left_behind(mark: str, servers: list[PrometheusServer]) -> list[int]:
    """The run's processes still alive (marked `mark`), the test's own Prometheus aside."""
    ours = {server.process.pid for server in servers}
    return [pid for pid in marked_processes(mark) if pid not in ours]


def launch_prometheus(
    home: Path, targets: list[str], scrape_interval: str = "1s"
) -> PrometheusServer:
    """Start the real server scraping `targets` (host:port), without waiting for it."""
    if not Path(PROMETHEUS).exists():
        pytest.fail(f"{PROMETHEUS} is missing: install the Debian package 'prometheus'")
    home.mkdir(parents=True, exist_ok=True)
    listed = ", ".join(f"'{t}'" for t in targets)
    (home / "prometheus.yml").write_text(
        f"global:\n  scrape_interval: {scrape_interval}\n  scrape_timeout: {scrape_interval}\n"
        "scrape_configs:\n  - job_name: plimsoll\n    honor_labels: true\n"
        f"    static_configs:\n      - targets: [{listed}]\n"
    )
    port = free_port()
    log = (home / "prometheus.log").open("wb")
    process = subprocess.Popen(
        [
            PROMETHEUS,
            f"--config.file={home / 'prometheus.yml'}",
            f"--storage.tsdb.path={home / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--log.level=warn",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    log.close()
    return PrometheusServer(f"http://127.0.0.1:{port}", process, home)


async def start_prometheus(
    home: Path, targets: list[str], scrape_interval: str = "1s"
) -> PrometheusServer:
    """Start the real server scraping `targets`; return once each target was scraped."""
    server = launch_prometheus(home, targets, scrape_interval)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            pytest.fail(f"prometheus exited: {server.log()}")
        if await asyncio.to_thread(_all_scraped, server.url, len(targets)):
            return server
        await asyncio.sleep(0.1)
    server.stop()
    pytest.fail(f"prometheus did not scrape {targets} within 15 s")


def _all_scraped(url: str, count: int) -> bool:
    # Prometheus hands new targets to its scrapers only every 5 s after start-up, so
    # "ready" is not enough: wait until every target has been scraped once, and up.
    with contextlib.suppress(httpx.HTTPError, KeyError, ValueError):
        response = httpx.get(f"{url}/api/v1/targets", timeout=1)
        active = response.json()["data"]["activeTargets"]
        return len(active) == count and all(t["health"] == "up" for t in active)
    return False


@pytest.fixture
def prometheus(tmp_path: Path) -> Iterator[StartPrometheus]:
    """A factory: `await prometheus(["127.0.0.1:PORT"])` starts a server scraping those
    targets every second and returns once each was scraped (awaited, so an exporter on
    the test's own event loop can answer); every server is stopped at teardown."""
    servers: list[PrometheusServer] = []

    async def start(targets: list[str], scrape_interval: str = "1s") -> PrometheusServer:
        server = await start_prometheus(
            tmp_path / f"prometheus-{len(servers)}", targets, scrape_interval
        )
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()
        shutil.rmtree(server.home, ignore_errors=True)
