"""The /proc fallback: CPU time and resident memory of an unpinned process group.

Used where the target could not be pinned (no root, read-only cgroupfs) and for the
mock, the generators and the services, which run unpinned. The group is a POSIX
process group, the one the local platform starts each piece in, so children a
piece forks are counted with it.

Processes come and go between readings, and a sum of their CPU times would drop
when one exits; `ProcGroupReader` keeps its own cumulative counter that only adds
each process's growth since the last reading, so the counter stays monotonic as a
cgroup's does and `samples.summarise` treats both alike. CPU a process burns
between its last reading and its exit is lost: at a 250 ms interval, a negligible
share of a trial. Memory is RSS (anonymous + file-backed resident pages), the
closest /proc has to a working set; the usage says `source="proc"` so the report can
tell the two apart.
"""

from __future__ import annotations

import os
from pathlib import Path

from plimsoll.metrics.samples import Sample
from plimsoll.metrics.schedstat import thread_run_delay_ns

_TICKS = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


class ProcGroupGoneError(RuntimeError):
    """No process of the group is left to read."""


def _stat_fields(text: str) -> list[str]:
    # The command name (field 2) may hold spaces and parentheses: split after its last ')'.
    return text[text.rindex(")") + 2 :].split()


class ProcGroupReader:
    def __init__(self, pgid: int, proc: Path = Path("/proc")) -> None:
        self.pgid = pgid
        self._proc = proc
        self._last: dict[int, int] = {}  # pid -> utime + stime ticks at the last reading
        self._ticks = 0  # cumulative ticks over every process ever seen in the group
        self._last_wait: dict[int, int] = {}  # pid -> run-queue wait (ns) at the last reading
        self._wait_ns = 0  # cumulative, kept monotonic like the ticks
        self._wait_known = False

    def read(self, at: float) -> Sample:
        current: dict[int, int] = {}
        rss_pages = 0
        for entry in self._proc.iterdir():
            if not entry.name.isdigit():
                continue
            try:
                fields = _stat_fields((entry / "stat").read_text())
            except (OSError, ValueError):
                continue  # exited while we looked
            # After the name: state(3) ppid(4) pgrp(5) ... utime(14) stime(15) ... rss(24)
            if int(fields[2]) != self.pgid:
                continue
            current[int(entry.name)] = int(fields[11]) + int(fields[12])
            rss_pages += int(fields[21])
        if not current:
            raise ProcGroupGoneError(f"no process is left in process group {self.pgid}")
        for pid, ticks in current.items():
            self._ticks += max(ticks - self._last.get(pid, 0), 0)
        self._last = current
        waits: dict[int, int] = {}
        for pid in current:
            wait = thread_run_delay_ns(pid, self._proc)
            if wait is not None:
                waits[pid] = wait
                self._wait_ns += max(wait - self._last_wait.get(pid, 0), 0)
        self._wait_known = self._wait_known or bool(waits)
        self._last_wait = waits
        return Sample(
            at=at,
            cpu_seconds=self._ticks / _TICKS,
            working_set_bytes=rss_pages * _PAGE,
            cpu_wait_seconds=self._wait_ns / 1e9 if self._wait_known else None,
            cpu_wait_source="schedstat" if self._wait_known else None,
        )
