"""What a `plimsoll run` that died without stopping left behind, and the reaping of it.

`plimsoll run` stops its processes and removes its cgroups on the way out, after
Ctrl-C, SIGTERM and SIGHUP too (`plimsoll.cli.run`). A SIGKILL leaves no way out,
so three things make sure nothing of the run outlives it for long:

- every process it starts gets a parent-death signal (SIGKILL when the runner dies,
  `processes.ManagedProcess`), so the direct children go with it at once;
- every process carries `PLIMSOLL_LOCAL_RUN=<run id>` in its environment, which its
  own children (worker processes, a server's forks) inherit;
- the run registers itself here (`register`): its id, the runner's pid and start
  time, and the cgroup root it pins in. The next `plimsoll run` calls
  `reap_orphans`: for each registered run whose runner is gone, it kills every
  process carrying the run's mark or sitting in the run's cgroups, and removes the
  cgroups (`plimsoll/<run id>-*`).

Linux only, as the cgroups are. Reading other processes' environments needs the same
user or root, which the runs that pin are.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import tempfile
import time
from pathlib import Path

from plimsoll.platforms.local import pinning

RUN_MARK_ENV = "PLIMSOLL_LOCAL_RUN"
STATE_DIR_ENV = "PLIMSOLL_STATE_DIR"


def state_dir() -> Path:
    return Path(os.environ.get(STATE_DIR_ENV) or tempfile.gettempdir()) / "plimsoll-runs"


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks (/proc/PID/stat field 22): with the pid,
    it names one process even after the pid is reused."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


def register(run_id: str, cgroup_root: Path | None) -> Path:
    """Record this run (the calling process is its runner); `forget` undoes it."""
    directory = state_dir()
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{run_id}.json"
    record = {
        "runId": run_id,
        "runnerPid": os.getpid(),
        "runnerStart": _start_time(os.getpid()),
        "cgroupRoot": str(cgroup_root) if cgroup_root else None,
    }
    path.write_text(json.dumps(record))
    return path


def forget(run_id: str) -> None:
    with contextlib.suppress(OSError):
        (state_dir() / f"{run_id}.json").unlink()


def _ours(value: str, run_id: str) -> bool:
    """A platform's id is the run's id, or the run's id and a variant (`run-ab12cd-fast`)."""
    return value == run_id or value.startswith(f"{run_id}-")


def marked_processes(run_id: str) -> list[int]:
    """Every live process whose environment carries this run's mark."""
    found: list[int] = []
    needle = f"{RUN_MARK_ENV}=".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue  # gone, or not ours to read
        for item in environ.split(b"\0"):
            if item.startswith(needle) and _ours(
                item[len(needle) :].decode(errors="replace"), run_id
            ):
                found.append(int(entry.name))
                break
    return found


def run_cgroups(run_id: str, cgroup_root: Path | None) -> list[Path]:
    """The run's cgroup directories (every variant's, every role's), deepest first."""
    try:
        hierarchy = pinning.discover(cgroup_root)
    except pinning.CgroupsUnavailableError:
        return []
    found: list[Path] = []
    for base in dict.fromkeys([hierarchy.cpu, hierarchy.cpuacct, hierarchy.memory]):
        parent = base / "plimsoll"
        with contextlib.suppress(OSError):
            for run_dir in parent.iterdir():
                if run_dir.is_dir() and _ours(run_dir.name, run_id):
                    found.extend(p for p in run_dir.iterdir() if p.is_dir())
                    found.append(run_dir)
    return found


_GONE_WITHIN = 5.0  # seconds a SIGKILLed process may take to be gone (and reaped)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _kill(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + _GONE_WITHIN
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)


def reap_run(run_id: str, cgroup_root: Path | None) -> list[str]:
    """Kill what is left of `run_id` and remove its cgroups; what was done, as text."""
    done: list[str] = []
    marked = [pid for pid in marked_processes(run_id) if pid != os.getpid()]
    groups = run_cgroups(run_id, cgroup_root)
    pinned = [
        int(pid)
        for group in groups
        for pid in pinning.read_procs(group)
        if pid.isdigit() and int(pid) != os.getpid()
    ]
    victims = sorted({*marked, *pinned})
    _kill(victims)
    if victims:
        done.append(f"killed {len(victims)} processes left by run {run_id}")
    for group in groups:
        pinning.remove_when_empty(group)
        if group.exists():
            done.append(f"could not remove {group}")
    return done


def _runner_alive(record: dict[str, object]) -> bool:
    pid = record.get("runnerPid")
    if not isinstance(pid, int):
        return False
    return _start_time(pid) is not None and _start_time(pid) == record.get("runnerStart")


def reap_orphans() -> list[str]:
    """Reap every registered run whose runner is gone; what was done, as text."""
    done: list[str] = []
    directory = state_dir()
    if not directory.is_dir():
        return done
    for path in sorted(directory.glob("*.json")):
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(record, dict) or _runner_alive(record):
            continue
        run_id = str(record.get("runId") or path.stem)
        root = record.get("cgroupRoot")
        done.extend(reap_run(run_id, Path(root) if isinstance(root, str) else None))
        with contextlib.suppress(OSError):
            path.unlink()
    return done
