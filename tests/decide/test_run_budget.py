"""A run's budget: the sum of what its spec declares, the largest variant counted."""

from __future__ import annotations

from typing import Any

from plimsoll.api.resource import load_capacity_test
from plimsoll.api.spec import CapacityTestSpec
from plimsoll.api.target import PodShape
from plimsoll.decide.run_budget import KnownShapes, run_budget

SHAPES = KnownShapes(
    mock=PodShape(cpu=0.5, memory=256 << 20),
    generator=PodShape(cpu=1, memory=512 << 20),
    undeclared=PodShape(cpu=0.1, memory=128 << 20),
)


def spec(**extra: Any) -> CapacityTestSpec:
    body = {
        "target": {"image": "app:1", "resources": {"cpu": "1", "memory": "1Gi"}},
        "upstream": {"routes": [{"name": "work", "path": "/work"}]},
        "workload": {"mix": [{"name": "work", "path": "/work"}]},
        **extra,
    }
    resource = {"apiVersion": "plimsoll.dev/v1alpha1", "kind": "CapacityTest"}
    return load_capacity_test({**resource, "metadata": {"name": "t"}, "spec": body}).spec


def views(test_spec: CapacityTestSpec) -> list[CapacityTestSpec]:
    """Every variant's spec, as the runner hands them to the budget."""
    return list(test_spec.variant_specs().values())


def test_the_budget_is_the_declared_shapes_with_headroom() -> None:
    budget = run_budget(views(spec()), SHAPES)
    # target 1 + mock 0.5 + generator 1 = 2.5 cores, x 1.25, plus the largest pod (1);
    # 1792 MiB x 1.25 plus the largest (1 GiB) = 3264 MiB. Pods: 3 and 2 of headroom.
    assert (budget.pods, budget.cpu, budget.memory) == (5, 4.125, 3264 << 20)


def test_the_largest_variant_counts_not_the_first() -> None:
    small = run_budget(views(spec()), SHAPES)
    varied = run_budget(
        views(spec(variants=[{"name": "big", "resources": {"cpu": "4", "memory": "8Gi"}}])), SHAPES
    )
    assert varied.cpu > small.cpu + 3
    assert varied.memory > small.memory + 7 * 2**30
    assert varied.pods == small.pods  # one target at a time


def test_each_resource_is_bounded_by_its_own_largest_variant() -> None:
    # The CPU-heaviest shape is not the memory-heaviest: both must fit (the real API
    # server refused 500m / 2Gi under a quota sized from 1 CPU / 512Mi).
    shapes = [{"cpu": "1", "memory": "512Mi"}, {"cpu": "500m", "memory": "2Gi"}]
    budget = run_budget(views(spec(shapes={"explicit": shapes})), SHAPES)
    # CPU from the first: (1 + 0.5 + 1) x 1.25 + 1; memory from the second:
    # (2048 + 256 + 512) MiB x 1.25 + 2048 MiB.
    assert budget.cpu == round(2.5 * 1.25 + 1, 3)
    assert budget.memory == int((2816 << 20) * 1.25) + (2048 << 20)
    assert budget.pods == 5


def test_generators_sized_during_the_run_count_at_max_replicas() -> None:
    fixed = run_budget(views(spec()), SHAPES)
    auto = run_budget(views(spec(generators={"replicas": "auto", "maxReplicas": 4})), SHAPES)
    # Three more generator pods of 1 CPU / 512 MiB than the one a fixed spec starts.
    assert auto.pods == fixed.pods + 3
    assert auto.cpu == round((2.5 + 3) * 1.25 + 1, 3)
    assert auto.memory == int(((1792 + 3 * 512) << 20) * 1.25) + (1024 << 20)


def test_an_external_target_has_no_pod_and_undeclared_pods_get_the_default() -> None:
    external = spec(target={"url": "http://10.0.0.1:8080"})
    assert run_budget(views(external), SHAPES).pods == 4  # mock, generator, headroom 2
    services = [{"name": "db", "image": "postgres:17", "port": 5432}]
    with_db = run_budget(views(spec(services=services)), SHAPES)
    assert with_db.pods == 6
    assert with_db.cpu == round((2.5 + 0.1) * 1.25 + 1, 3)


def test_kept_variants_count_together_and_so_does_every_mock() -> None:
    variants = [{"name": "a"}, {"name": "b"}]
    always = run_budget(views(spec(variants=variants)), SHAPES)
    kept = run_budget(views(spec(variants=variants, cleanup="Never")), SHAPES)
    # cleanup: Never keeps the first variant's three pods while the second runs.
    assert (always.pods, kept.pods) == (5, 8)
    assert kept.cpu == round(2 * 2.5 * 1.25 + 1, 3)
    named = [{"name": "auth", "envVar": "AUTH_URL", "resources": {"cpu": "2", "memory": "1Gi"}}]
    with_auth = run_budget(views(spec(upstreams=named)), SHAPES)
    assert with_auth.pods == 6
    assert with_auth.cpu == round((2.5 + 2) * 1.25 + 2, 3)
