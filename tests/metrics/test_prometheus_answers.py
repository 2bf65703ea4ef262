"""How the Prometheus source reads awkward answers, and how it discovers the interval.

A small Prometheus-shaped HTTP server on loopback plays the answers a real server
gives in those cases (hard to provoke on demand from the real one); the source talks
to it over real HTTP as it would to Prometheus. Time is fake: the
source's clock and sleep are injected, so retries and the settle delay cost nothing.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from plimsoll.api.spec import PromQLBound
from plimsoll.api.step import ResourceUsage
from plimsoll.metrics.prometheus import PrometheusSource
from plimsoll.metrics.promql import Selector
from plimsoll.metrics.source import Window

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
WINDOW = Window(T0, T0 + timedelta(seconds=10))

Answer = tuple[int, Any]  # HTTP status, JSON body


def vector(*values: str) -> Answer:
    return 200, {
        "status": "success",
        "data": {
            "resultType": "vector",
            "result": [
                {"metric": {"i": str(i)}, "value": [T0.timestamp(), v]}
                for i, v in enumerate(values)
            ],
        },
    }


class FakePrometheus:
    """Answers each query with the first matching rule: (predicate on query text, answers);
    a rule's answers are used in turn, the last one repeating."""

    def __init__(self) -> None:
        self.rules: list[tuple[Callable[[str], bool], list[Answer]]] = []
        self.asked: list[dict[str, str]] = []
        self.url = ""

    def on(self, predicate: Callable[[str], bool], *answers: Answer) -> None:
        self.rules.append((predicate, list(answers)))

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).decode()
        target = head.split(" ", 2)[1]
        params = {k: v[0] for k, v in parse_qs(urlsplit(target).query).items()}
        params["path"] = urlsplit(target).path
        self.asked.append(params)
        status, body = 404, {"status": "error", "error": "no rule"}
        for predicate, answers in self.rules:
            if predicate(params.get("query", "")):
                status, body = answers.pop(0) if len(answers) > 1 else answers[0]
                break
        data = json.dumps(body).encode()
        writer.write(
            f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n".encode()
            + data
        )
        await writer.drain()
        writer.close()


@pytest.fixture
async def fake() -> AsyncIterator[FakePrometheus]:
    prom = FakePrometheus()
    server = await asyncio.start_server(prom.serve, "127.0.0.1", 0)
    prom.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    yield prom
    server.close()
    await server.wait_closed()


class FakeTime:
    def __init__(self, now: float) -> None:
        self.now = now
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 3))
        self.now += seconds


def source(fake: FakePrometheus, time: FakeTime, **kwargs: Any) -> PrometheusSource:
    return PrometheusSource(
        fake.url,
        {"target": Selector("ns", "t-.*")},
        scrape_interval=1.0,
        clock=time.clock,
        sleep=time.sleep,
        **kwargs,
    )


def healthy(fake: FakePrometheus) -> None:
    fake.on(lambda q: q.startswith("sum(increase(container_cpu_usage"), vector("0.5"))
    fake.on(lambda q: "irate(container_cpu" in q, vector("0.6"))
    fake.on(lambda q: "avg_over_time(container_memory" in q, vector("105"))
    fake.on(lambda q: "max_over_time(container_memory" in q, vector("110"))
    fake.on(lambda q: "cfs_throttled" in q, vector("0.25"))
    fake.on(lambda q: "spec_cpu_quota" in q, vector("0.5"))
    fake.on(lambda q: "memory_limit" in q, vector("536870912"))
    fake.on(lambda q: "vector(0)" in q, vector("0"))
    fake.on(lambda q: "restarts_total" in q, vector("1"))


async def test_a_window_is_read_after_the_settle_delay(fake: FakePrometheus) -> None:
    healthy(fake)
    time = FakeTime(WINDOW.end.timestamp() + 0.5)
    usage = (await source(fake, time).usage(WINDOW))["target"]
    assert time.slept == [1.5]  # settle defaults to one scrape interval plus a second
    assert usage.missing == []
    assert (usage.cpu_mean_cores, usage.cpu_peak_cores, usage.throttled_ratio) == (0.5, 0.6, 0.25)
    assert (usage.memory_mean_bytes, usage.memory_max_bytes) == (105, 110)
    assert (usage.cpu_limit_cores, usage.memory_limit_bytes) == (0.5, 512 << 20)
    assert (usage.restarts, usage.oom_kills) == (1, 0)
    # Every figure is one instant query at the window's end, over the whole window.
    assert {a["path"] for a in fake.asked} == {"/api/v1/query"}
    assert {a["time"] for a in fake.asked} == {f"{WINDOW.end.timestamp():.3f}"}
    assert usage.queries[0].endswith("[10s])) / 10")


class HostBeside:
    """The local platform's whole-host reading, which Prometheus holds no series of."""

    def __init__(self) -> None:
        self.windows: list[Window] = []

    async def usage(self, window: Window) -> dict[str, ResourceUsage]:
        self.windows.append(window)
        return {
            "host": ResourceUsage(source="proc", cpu_mean_cores=1.25),
            "target": ResourceUsage(source="cgroup", cpu_mean_cores=9.0),
        }


async def test_a_source_beside_adds_the_roles_prometheus_does_not_hold(
    fake: FakePrometheus,
) -> None:
    healthy(fake)
    beside = HostBeside()
    time = FakeTime(WINDOW.end.timestamp())
    usage = await source(fake, time, beside=beside).usage(WINDOW)
    assert beside.windows == [WINDOW]
    assert usage["host"].cpu_mean_cores == 1.25
    # A role Prometheus answers stays Prometheus's.
    assert usage["target"].source == "prometheus"
    assert usage["target"].cpu_mean_cores == 0.5


async def test_empty_nan_or_several_series_are_missing_never_zero(
    fake: FakePrometheus,
) -> None:
    fake.on(lambda q: q.startswith("sum(increase(container_cpu_usage"), vector())
    fake.on(lambda q: "irate(container_cpu" in q, vector())
    fake.on(lambda q: "cfs_throttled" in q, vector("NaN"))
    fake.on(lambda q: "restarts_total" in q and "vector(0)" not in q, vector("0", "1"))
    fake.on(lambda q: True, vector("0"))
    time = FakeTime(WINDOW.end.timestamp() + 5)
    usage = (await source(fake, time).usage(WINDOW))["target"]
    assert (usage.cpu_mean_cores, usage.cpu_peak_cores, usage.throttled_ratio) == (None,) * 3
    assert [m.split(" (query: ")[0] for m in usage.missing] == [
        "no data",  # the mean; the peak is not required
        "NaN, e.g. 0/0: nothing counted",
        "2 series where one was expected; aggregate it, e.g. with sum()",
    ]
    assert time.slept == []  # already settled


async def test_temporary_errors_are_retried_with_backoff_then_named(
    fake: FakePrometheus,
) -> None:
    healthy(fake)
    fake.rules.insert(
        0,
        (
            lambda q: q.startswith("sum(increase(container_cpu_usage"),
            [
                (503, {"status": "error", "error": "overloaded"}),
                (503, {"status": "error", "error": "overloaded"}),
                vector("0.5"),
            ],
        ),
    )
    time = FakeTime(WINDOW.end.timestamp() + 5)
    usage = (await source(fake, time, attempts=3, backoff=0.5).usage(WINDOW))["target"]
    assert usage.missing == []
    assert usage.cpu_mean_cores == 0.5
    assert time.slept == [0.5, 1.0]


async def test_a_bad_query_is_not_retried(fake: FakePrometheus) -> None:
    healthy(fake)
    fake.on(
        lambda q: q == "sum(broken",
        (400, {"status": "error", "errorType": "bad_data", "error": "parse error"}),
    )
    time = FakeTime(WINDOW.end.timestamp() + 5)
    bounds = [
        PromQLBound(name="broken", query="sum(broken", below=1),
        PromQLBound(
            name="limit",
            query='max(container_spec_memory_limit_bytes{namespace="$namespace"})',
            below=1,
        ),
    ]
    values, missing = await source(fake, time).evaluate_with_reasons(bounds, WINDOW, "ns")
    assert values == {"broken": None, "limit": 536870912.0}
    assert len(missing) == 1
    assert missing[0].startswith(f"broken: Prometheus at {fake.url}/api/v1/query answered HTTP 400")
    assert "(bad_data)" in missing[0]
    assert "parse error" not in missing[0]
    assert missing[0].endswith("(query: sum(broken)")
    assert time.slept == []
    asked = [a["query"] for a in fake.asked]
    assert asked.count("sum(broken") == 1
    assert 'max(container_spec_memory_limit_bytes{namespace="ns"})' in asked


async def test_an_unreachable_server_is_named_in_every_role(fake: FakePrometheus) -> None:
    time = FakeTime(WINDOW.end.timestamp() + 5)
    dead = PrometheusSource(
        "http://127.0.0.1:9",
        {"target": Selector("ns"), "mock": Selector("ns", "mock-.*")},
        scrape_interval=1.0,
        attempts=3,
        backoff=0.2,
        clock=time.clock,
        sleep=time.sleep,
    )
    usage = await dead.usage(WINDOW)
    assert time.slept == [0.2, 0.4]  # the first query's retries, then fail fast
    for role in ("target", "mock"):
        assert len(usage[role].missing) == 9
        assert all("127.0.0.1:9 unreachable" in m for m in usage[role].missing)


async def test_the_scrape_interval_is_discovered_or_the_failure_named(
    fake: FakePrometheus,
) -> None:
    time = FakeTime(WINDOW.end.timestamp() + 5)
    undiscoverable = PrometheusSource(
        fake.url, {"target": Selector("ns")}, clock=time.clock, sleep=time.sleep
    )
    usage = (await undiscoverable.usage(WINDOW))["target"]
    assert usage.missing[0].startswith("cannot discover the scrape interval")


async def test_a_too_short_window_is_missing_with_the_minimum(fake: FakePrometheus) -> None:
    time = FakeTime(WINDOW.end.timestamp() + 5)
    short = Window(T0, T0 + timedelta(seconds=2.5))
    usage = (await source(fake, time).usage(short))["target"]
    assert "needs at least 3s (3 scrape intervals)" in usage.missing[0]
    assert fake.asked == []


def spaced(*times: float) -> Answer:
    return 200, {
        "status": "success",
        "data": {
            "resultType": "matrix",
            "result": [{"metric": {}, "values": [[T0.timestamp() + t, "1"] for t in times]}],
        },
    }


async def test_the_interval_is_the_spacing_of_the_targets_samples(fake: FakePrometheus) -> None:
    # One late scrape (at 45.4) and one missed (75) do not move the median gap of 15 s.
    fake.on(lambda q: q.endswith("[10m]"), spaced(0, 15, 30, 45.4, 60, 90, 105))
    time = FakeTime(T0.timestamp() + 110)
    found = PrometheusSource(fake.url, {"target": Selector("ns")}, clock=time.clock)
    assert await found.scrape_interval() == 15.0
    assert fake.asked[0]["query"] == (
        'container_cpu_usage_seconds_total{namespace="ns",pod=~".+",container!="",'
        'container!="POD"}[10m]'
    )


async def test_a_new_target_reads_the_busiest_series_spacing(fake: FakePrometheus) -> None:
    # The target has two samples so far; a long-lived container of the same job has many.
    fake.on(lambda q: 'namespace="ns"' in q, spaced(80, 110))
    busiest = {"namespace": "kube-system", "pod": "etcd-0", "container": "etcd"}
    fake.on(
        lambda q: q.startswith("topk(1, count_over_time("),
        (
            200,
            {
                "status": "success",
                "data": {
                    "resultType": "vector",
                    "result": [{"metric": busiest, "value": [T0.timestamp(), "20"]}],
                },
            },
        ),
    )
    fake.on(lambda q: 'pod="etcd-0"' in q, spaced(0, 30, 60, 90.2, 120))
    time = FakeTime(T0.timestamp() + 125)
    found = PrometheusSource(fake.url, {"target": Selector("ns")}, clock=time.clock)
    assert await found.scrape_interval() == 30.0
    assert [a["query"] for a in fake.asked][1:] == [
        "topk(1, count_over_time(container_cpu_usage_seconds_total[10m]))",
        'container_cpu_usage_seconds_total{container="etcd",namespace="kube-system",'
        'pod="etcd-0"}[10m]',
    ]


async def test_too_few_samples_anywhere_fall_back_to_the_servers_config(
    fake: FakePrometheus,
) -> None:
    fake.on(lambda q: q.endswith("[10m]"), spaced(0, 30))
    fake.on(lambda q: q.startswith("topk("), vector())
    config = {"status": "success", "data": {"yaml": "global:\n  scrape_interval: 30s\n"}}
    fake.on(lambda q: q == "", (200, config))
    time = FakeTime(T0.timestamp() + 40)
    found = PrometheusSource(fake.url, {"target": Selector("ns")}, clock=time.clock)
    assert await found.scrape_interval() == 30.0
    assert fake.asked[-1]["path"] == "/api/v1/status/config"


class StatusCounter:
    """A `RestartCounter` as the Kubernetes platform gives one: what the pods' status says."""

    def __init__(self, counts: tuple[int, int]) -> None:
        self.counts = counts
        self.asked: list[tuple[str, str | None, Window]] = []

    async def restarts(
        self, pod_regex: str, container: str | None, window: Window
    ) -> tuple[int, int]:
        self.asked.append((pod_regex, container, window))
        return self.counts


async def test_without_kube_state_metrics_restarts_come_from_the_pods_status(
    fake: FakePrometheus,
) -> None:
    healthy(fake)
    # A Prometheus that scrapes only cAdvisor: no kube_pod_container_status_* series at
    # all, so the restarts query is empty (and the OOM one's `or vector(0)` says 0).
    fake.rules.insert(0, (lambda q: "restarts_total" in q and "vector(0)" not in q, [vector()]))
    counter = StatusCounter((2, 1))
    time = FakeTime(WINDOW.end.timestamp() + 5)
    usage = (await source(fake, time, restarts=counter).usage(WINDOW))["target"]
    assert usage.missing == []
    assert (usage.restarts, usage.oom_kills) == (2, 1)
    assert counter.asked == [("t-.*", None, WINDOW)]
    # Without a counter the same answers leave the restarts missing, never a silent zero.
    usage = (await source(fake, FakeTime(WINDOW.end.timestamp() + 5)).usage(WINDOW))["target"]
    assert [m.split(" (query: ")[0] for m in usage.missing] == ["no data"]


async def test_kube_state_metrics_wins_when_present(fake: FakePrometheus) -> None:
    healthy(fake)
    counter = StatusCounter((5, 5))
    time = FakeTime(WINDOW.end.timestamp() + 5)
    usage = (await source(fake, time, restarts=counter).usage(WINDOW))["target"]
    assert (usage.restarts, usage.oom_kills) == (1, 0)
    assert counter.asked == []
