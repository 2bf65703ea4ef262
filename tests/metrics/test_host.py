"""The whole host's busy CPU from /proc/stat: this machine's, and a fixture's arithmetic."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from plimsoll.metrics.cgroup import CgroupReadError
from plimsoll.metrics.host import read_host_sample

TICKS = os.sysconf("SC_CLK_TCK")


def test_user_nice_system_and_steal_count_and_idle_and_interrupts_do_not(
    tmp_path: Path,
) -> None:
    stat = tmp_path / "stat"
    #                user nice system idle iowait irq softirq steal guest guest_nice
    stat.write_text(
        f"cpu  {TICKS * 3} {TICKS} {TICKS * 2} 99999 500 700 800 {TICKS} 0 0\n"
        "cpu0 1 2 3 4 5 6 7 8 0 0\n"
    )
    sample = read_host_sample(at=3.0, stat=stat)
    assert sample.at == 3.0
    assert sample.cpu_seconds == pytest.approx(7.0)


def test_an_unreadable_stat_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(CgroupReadError, match="cannot read"):
        read_host_sample(at=0.0, stat=tmp_path / "absent")
    (tmp_path / "odd").write_text("intr 1 2 3\n")
    with pytest.raises(CgroupReadError, match="no aggregate 'cpu' line"):
        read_host_sample(at=0.0, stat=tmp_path / "odd")


def test_this_hosts_busy_cpu_only_grows() -> None:
    first = read_host_sample(at=0.0)
    total = sum(range(200_000))  # a little CPU of our own in between
    second = read_host_sample(at=1.0)
    assert total > 0
    assert second.cpu_seconds >= first.cpu_seconds > 0
