"""Sizing reproduces the edge seed's worked example from its own inputs."""

from plimsoll.api.sizing import SizingInput
from plimsoll.decide.sizing import plan


def test_the_edge_seeds_worked_example() -> None:
    # 2 vCPU pods at 5,300 rps per vCPU, 60% target CPU, 20k peak doubling in a
    # year, three zones, 200 ms upstream p99, 10k streams at 72 KiB each.
    result = plan(
        SizingInput(
            per_pod=2 * 5300,
            peak=20_000,
            growth=2,
            utilisation="60%",
            zones=3,
            upstream_latency="200ms",
            streams=10_000,
            memory_per_stream="72Ki",
        )
    )
    assert result.pods == 12
    assert result.pods_per_zone == 4
    assert result.pods_after_zone_loss == 8
    assert result.load_per_pod_after_loss == 5000
    assert result.in_flight_per_pod == 2000  # 5k rps × 0.2 s × 2 for bursts
    assert result.streams_per_pod == 1250
    assert result.memory_per_pod_bytes == 1250 * 72 * 1024
    assert [line.item for line in result.lines][:2] == ["pods for the load", "placement"]


def test_one_zone_needs_no_spare() -> None:
    result = plan(SizingInput(per_pod=8859, unit="users", peak=5000, utilisation="100%"))
    assert result.pods == 1
    assert result.in_flight_per_pod is None


def test_more_load_never_needs_fewer_pods() -> None:
    pods = [
        plan(SizingInput(per_pod=1000, peak=peak, zones=3)).pods for peak in range(100, 20000, 700)
    ]
    assert pods == sorted(pods)
