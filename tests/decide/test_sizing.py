"""Sizing reproduces the edge seed's whole worked example from its own inputs."""

import math

import pytest

from plimsoll.api.sizing import SizingInput, SizingSpec, StoreSizing
from plimsoll.decide.sizing import nice_down, nice_up, plan_deployment

# The seed's scenario: 2 vCPU pods at 5,300 rps per vCPU run at 60%, 20k peak doubling
# in a year, three zones, 200 ms upstream p99, 10k streams at 72 KiB, 100 KiB per call in
# flight, 1 GiB pods, a 10 ms budget, an office NAT at 300 rps, 1M client IPs a minute
# into Valkey (1.55 calls per request, 21 µs each, 124 B per key, 2 minute keys plus 5%
# for login, 1-2 ms p99), and 400 B access log lines.
SEED = SizingSpec(
    peak=20_000,
    growth=2,
    utilisation="60%",
    zones=3,
    upstream_latency="200ms",
    streams=10_000,
    memory_per_stream="72Ki",
    memory_per_in_flight="100Ki",
    pod_memory="1Gi",
    latency_budget="10ms",
    busiest_client=300,
    log_bytes_per_request=400,
    log_budget="1M",
    store=StoreSizing(
        name="valkey",
        calls_per_request=1.55,
        cpu_per_call="21us",
        bytes_per_key=124,
        clients_per_minute=1_000_000,
        key_lifetime="2m",
        extra_keys="5%",
        p99="2ms",
    ),
)


def _seed(**changes: object) -> SizingInput:
    return SizingInput.model_validate(
        {**SEED.model_dump(), "per_pod": 2 * 5300, "unit": "rps", **changes}
    )


def test_the_edge_seeds_worked_example_row_by_row() -> None:
    result = plan_deployment(_seed())
    rows = {line.item: line.result for line in result.lines}
    # Edge pods: 40k ÷ 6.36k → 7; losing 1 of 3 zones must leave 7 → 4 per zone.
    assert result.pods == 12
    assert result.pods_per_zone == 4
    assert rows["placement"] == "12 pods, 4 per zone"
    assert result.pods_after_zone_loss == 8
    assert result.load_per_pod_after_loss == 5000
    # MAX_STREAMS: 10k ÷ 8 = 1,250, × 2 = 2,500; 2,500 × 72 KiB ≈ 180 MiB of the 1 GiB pod.
    assert result.streams_per_pod == 1250
    assert result.stream_cap == 2500
    assert "≈ 176 MiB of the 1,024 MiB pod" in next(
        line.derivation for line in result.lines if line.item == "stream cap"
    )
    # MAX_INFLIGHT: 5k rps × 0.2 s = 1,000 concurrent, × 2 for bursts.
    assert result.in_flight_per_pod == 2000
    # Both caps at 72 KiB and 100 KiB fit the 1 GiB pod.
    assert result.memory_per_pod_bytes == 2500 * 72 * 1024 + 2000 * 100 * 1024
    assert result.fits_pod_memory is True
    # Valkey CPU: 62k calls/s × 21 µs = 1.3 cores, each shard under 50% → 3 shards.
    assert result.store_shards == 3
    assert rows["valkey CPU"] == "3-shard cluster"
    # Valkey memory: 2.1M keys × 124 B ≈ 260 MB, × 1.5 ≈ 400 MB.
    assert result.store_memory_bytes == pytest.approx(390.6e6, rel=1e-6)
    # VALKEY_TIMEOUT: inside the 10 ms budget, above the 1-2 ms store p99.
    assert result.store_timeout == pytest.approx(0.005)
    assert rows["valkey timeout"] == "5 ms"
    # Backstop: the NAT's 300 rps can land on one pod → limit 1000/s, burst 2000.
    assert (result.backstop_per_second, result.backstop_burst) == (1000, 2000)
    # LOG_SAMPLE_RATE: 40k × 400 B = 16 MB/s unsampled → 0.05.
    assert result.log_sample_rate == pytest.approx(0.05)
    assert list(rows) == [
        "pods for the load",
        "placement",
        "stream cap",
        "in-flight cap",
        "pod memory",
        "valkey CPU",
        "valkey memory",
        "valkey timeout",
        "backstop",
        "access log sampling",
    ]


def test_caps_that_outgrow_the_pod_are_called_out() -> None:
    result = plan_deployment(_seed(pod_memory="256Mi"))
    assert result.fits_pod_memory is False
    memory = next(line for line in result.lines if line.item == "pod memory")
    assert memory.result.startswith("does NOT fit")


def test_a_store_slower_than_half_the_budget_gets_no_timeout() -> None:
    store = {**SEED.store.model_dump(), "p99": "8ms"} if SEED.store else {}
    result = plan_deployment(_seed(store=store))
    assert result.store_timeout is None
    assert "none fits" in next(line.result for line in result.lines if "timeout" in line.item)


def test_rows_without_their_inputs_are_left_out() -> None:
    result = plan_deployment(SizingInput(per_pod=8859, unit="users", peak=5000, utilisation="100%"))
    assert result.pods == 1
    assert [line.item for line in result.lines] == ["pods for the load"]
    assert result.in_flight_per_pod is None
    assert result.store_shards is None


def test_more_load_never_needs_fewer_pods() -> None:
    pods = [
        plan_deployment(SizingInput(per_pod=1000, peak=peak, zones=3)).pods
        for peak in range(100, 20000, 700)
    ]
    assert pods == sorted(pods)


@pytest.mark.parametrize(
    ("value", "up", "down"),
    [(600, 1000, 500), (1000, 1000, 1000), (0.0625, 0.1, 0.05), (130, 200, 100), (2.5, 5, 2)],
)
def test_settings_round_to_one_two_five(value: float, up: float, down: float) -> None:
    assert nice_up(value) == pytest.approx(up)
    assert nice_down(value) == pytest.approx(down)


def test_modeled_users_at_their_memory_must_fit_the_pod() -> None:
    # 2,000 users over 3 zones at 20 per pod and 60%: 12 per pod, 167 pods, 84 per zone,
    # 168 left after a zone loss carrying 2,000 ÷ 168 ≈ 11.9 users each.
    sizing = SizingInput(
        per_pod=20,
        unit="users",
        peak=2000,
        zones=3,
        memory_per_user="1Mi",
        pod_memory="16Mi",
    )
    result = plan_deployment(sizing)
    assert (result.pods, result.pods_per_zone, result.pods_after_zone_loss) == (252, 84, 168)
    assert result.memory_per_pod_bytes == math.ceil(2000 / 168 * 2**20)
    assert result.fits_pod_memory is True
    tight = plan_deployment(sizing.model_copy(update={"pod_memory": 8 * 2**20}))
    assert tight.fits_pod_memory is False
