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

A record makes the next run, which is root when it pins, kill processes: so only this
user's own records count (issue 52; a shared `$TMPDIR/plimsoll-runs` let anyone plant
one naming any pid). The records live in a directory only this user owns and may
write (`$XDG_RUNTIME_DIR/plimsoll-runs`, else `$TMPDIR/plimsoll-runs-<uid>`, or under
`PLIMSOLL_STATE_DIR`), made mode 0700 and refused, naming it, when someone else owns
it or it is a link; each record is read only when it is a regular file this user
owns that no one else may write; and only this user's processes carrying the run's
mark, and processes in cgroups this user created, are killed.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import stat
import tempfile
import time
from pathlib import Path

from plimsoll.platforms.local import pinning

RUN_MARK_ENV = "PLIMSOLL_LOCAL_RUN"
STATE_DIR_ENV = "PLIMSOLL_STATE_DIR"


RUN_ID_PATTERN = re.compile(r"^[a-z0-9][-a-z0-9.]{0,252}$")  # a CR name and a hex suffix


class LeftoversError(RuntimeError):
    """The records' directory cannot be trusted; the message names it and the fix."""


def state_dir() -> Path:
    """Where this user's runs are recorded (not checked: `private_state_dir` does)."""
    if os.environ.get(STATE_DIR_ENV):
        return Path(os.environ[STATE_DIR_ENV]) / "plimsoll-runs"
    if os.environ.get("XDG_RUNTIME_DIR"):  # per user, mode 0700, made by the login
        return Path(os.environ["XDG_RUNTIME_DIR"]) / "plimsoll-runs"
    return Path(tempfile.gettempdir()) / f"plimsoll-runs-{os.getuid()}"


def _only_mine(info: os.stat_result) -> bool:
    return info.st_uid == os.getuid() and not info.st_mode & 0o022


def private_state_dir() -> Path:
    """`state_dir()`, made if missing, mode 0700; refused when it is a link or someone
    else owns it (they could plant records, or take ours away)."""
    directory = state_dir()
    with contextlib.suppress(FileExistsError):
        directory.parent.mkdir(parents=True, exist_ok=True)
        directory.mkdir(mode=0o700)
    info = directory.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise LeftoversError(
            f"{directory} is not a directory owned by you (uid {os.getuid()}): another "
            f"user could plant run records there; remove it, or set {STATE_DIR_ENV} to a "
            "directory only you own"
        )
    if info.st_mode & 0o077:
        directory.chmod(0o700)  # ours: close it before reading anything in it
    return directory


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
    path = private_state_dir() / f"{run_id}.json"
    record = {
        "runId": run_id,
        "runnerPid": os.getpid(),
        "runnerStart": _start_time(os.getpid()),
        "cgroupRoot": str(cgroup_root) if cgroup_root else None,
    }
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
    with os.fdopen(os.open(path, flags, 0o600), "w") as file:
        file.write(json.dumps(record))
    return path


def forget(run_id: str) -> None:
    with contextlib.suppress(OSError):
        (state_dir() / f"{run_id}.json").unlink()


def read_record(path: Path) -> dict[str, object] | str:
    """A record this user wrote, or why it is not read (never through a link, never
    one another user owns or may write)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        return f"skipped {path}: {exc.strerror}"
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode) or not _only_mine(info):
            return (
                f"skipped {path}: owned by uid {info.st_uid} or writable by others, "
                "not a record of yours"
            )
        try:
            record = json.loads(file.read(64 * 1024))
        except ValueError:
            return f"skipped {path}: not a run record"
    run_id = record.get("runId") if isinstance(record, dict) else None
    if not isinstance(run_id, str) or not RUN_ID_PATTERN.match(run_id):
        return f"skipped {path}: no valid runId"
    return dict(record)


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
            if entry.stat().st_uid != os.getuid():
                continue  # root reads every environment: kill only this user's
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
                if (
                    run_dir.is_dir()
                    and not run_dir.is_symlink()
                    and _ours(run_dir.name, run_id)
                    and run_dir.stat().st_uid == os.getuid()  # a cgroup this user made
                ):
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
    """Reap every run of this user's whose runner is gone; what was done, as text."""
    done: list[str] = []
    directory = private_state_dir()
    for path in sorted(directory.glob("*.json")):
        record = read_record(path)
        if isinstance(record, str):
            done.append(record)
            continue
        if _runner_alive(record):
            continue
        root = record.get("cgroupRoot")
        done.extend(reap_run(str(record["runId"]), Path(root) if isinstance(root, str) else None))
        with contextlib.suppress(OSError):
            path.unlink()
    return done
