"""The exporter's text exposition and its HTTP endpoint, over files laid out like cgroups."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest

from plimsoll.metrics.cgroup import CgroupPaths
from plimsoll.metrics.exporter import CadvisorExporter, ExportedContainer, render

MIB = 1 << 20


@pytest.fixture
def v2_group(tmp_path: Path) -> CgroupPaths:
    (tmp_path / "cpu.stat").write_text("usage_usec 1500000\nnr_periods 30\nnr_throttled 6\n")
    (tmp_path / "cpu.max").write_text("100000 100000\n")
    (tmp_path / "memory.current").write_text(str(64 * MIB))
    (tmp_path / "memory.stat").write_text(f"inactive_file {4 * MIB}\n")
    (tmp_path / "memory.events").write_text("oom_kill 2\n")
    (tmp_path / "memory.max").write_text(str(512 * MIB))
    return CgroupPaths(2, tmp_path, tmp_path)


def test_a_pinned_container_is_shown_under_cadvisor_names(v2_group: CgroupPaths) -> None:
    target = ExportedContainer(
        "run-1",
        "target-0",
        "target",
        paths=v2_group,
        restarts=1,
        last_terminated_reason="OOMKilled",
    )
    text = render([target])
    labels = '{namespace="run-1",pod="target-0",container="target"}'
    for line in (
        f"container_cpu_usage_seconds_total{labels} 1.5",
        f"container_cpu_cfs_periods_total{labels} 30",
        f"container_cpu_cfs_throttled_periods_total{labels} 6",
        f"container_memory_working_set_bytes{labels} {60 * MIB}",
        f"container_oom_events_total{labels} 2",
        f"container_spec_cpu_quota{labels} 100000",
        f"container_spec_cpu_period{labels} 100000",
        f"container_spec_memory_limit_bytes{labels} {512 * MIB}",
        f"kube_pod_container_status_restarts_total{labels} 1",
        'kube_pod_container_status_last_terminated_reason{namespace="run-1",pod="target-0",'
        'container="target",reason="OOMKilled"} 1',
        "# TYPE container_cpu_usage_seconds_total counter",
        "# TYPE container_memory_working_set_bytes gauge",
    ):
        assert line in text.splitlines()


def test_an_unpinned_process_and_a_vanished_group(tmp_path: Path) -> None:
    me = ExportedContainer("run-1", "mock-0", 'mo"ck', pgid=os.getpgid(0))
    gone = ExportedContainer(
        "run-1", "target-0", "target", paths=CgroupPaths(2, tmp_path / "gone", tmp_path / "gone")
    )
    lines = render([me, gone]).splitlines()
    assert lines[0].startswith("# run-1/target-0/target unreadable: cannot read")
    cpu = next(x for x in lines if x.startswith("container_cpu_usage_seconds_total{"))
    assert 'container="mo\\"ck"' in cpu
    assert float(cpu.rsplit(" ", 1)[1]) > 0
    assert not any("container_spec_cpu_quota{" in x for x in lines)  # no quota: left out
    assert not any('pod="target-0"' in x for x in lines if not x.startswith("#"))


def test_a_container_needs_one_way_to_be_read(v2_group: CgroupPaths) -> None:
    with pytest.raises(ValueError, match="exactly one of paths or pgid"):
        ExportedContainer("n", "p", "c")
    with pytest.raises(ValueError, match="exactly one of paths or pgid"):
        ExportedContainer("n", "p", "c", paths=v2_group, pgid=1)


async def test_it_serves_metrics_on_loopback_only(v2_group: CgroupPaths) -> None:
    exporter = CadvisorExporter([ExportedContainer("n", "p", "c", paths=v2_group)])
    url = await exporter.start()
    try:
        assert url.startswith("http://127.0.0.1:")
        async with httpx.AsyncClient() as client:
            ok = await client.get(url)
            other = await client.get(url.replace("/metrics", "/"))
        assert ok.status_code == 200
        assert ok.headers["content-type"].startswith("text/plain; version=0.0.4")
        assert (
            'container_cpu_usage_seconds_total{namespace="n",pod="p",container="c"} 1.5' in ok.text
        )
        assert other.status_code == 404
    finally:
        await exporter.stop()
    with pytest.raises(RuntimeError, match="not started"):
        _ = exporter.url
