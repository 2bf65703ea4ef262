"""Children's names per variant: plain without variants, distinct and DNS-safe with them."""

from __future__ import annotations

import re

from plimsoll.kube import names

_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def test_a_run_without_variants_keeps_the_plain_names() -> None:
    assert names.target_pod_name() == "target"
    assert names.mock_pod_name(0) == "mock-0"
    assert names.generator_pod_name(2) == "generator-2"
    assert names.child_name(names.MOCK_SERVICE) == "plimsoll-mock"


def test_each_variant_gets_its_own_names() -> None:
    assert names.target_pod_name("postgres") == "target-postgres"
    assert names.mock_pod_name(0, "postgres") == "mock-0-postgres"
    assert names.generator_pod_name(1, "embedded") == "generator-1-embedded"
    assert names.service_pod_name("db", "postgres") == "svc-db-postgres"


def test_long_variant_names_are_cut_but_stay_distinct() -> None:
    a, b = "sensors-enabled-on-each-edge-1", "sensors-enabled-on-each-edge-2"
    assert len(a) == 30  # the longest a variant's name may be
    slug_a, slug_b = names.variant_slug(a), names.variant_slug(b)
    assert slug_a != slug_b
    assert len(slug_a) <= 12
    assert _LABEL.match(slug_a)
    # A 40-character setup step of a 30-character variant still fits a DNS label.
    job = names.child_name("setup-" + "s" * 40, a)
    assert len(job) <= 63, job
    assert _LABEL.match(job), job
    cut = names.child_name("x" * 70, "b")
    assert cut.endswith("-b")
    assert len(cut) == 63


def test_the_metric_patterns_pick_only_their_variants_pods() -> None:
    def picks(pattern: str, name: str) -> bool:
        return re.fullmatch(pattern, name) is not None  # PromQL's =~ is anchored

    assert picks(names.mock_pod_pattern("a"), "mock-3-a")
    assert not picks(names.mock_pod_pattern("a"), "mock-3-1-a")  # variant "1-a"'s
    assert not picks(names.mock_pod_pattern(), "mock-0-a")  # no variants: plain only
    assert picks(names.generator_pod_pattern("b"), names.generator_pod_name(12, "b"))
    assert not picks(names.target_pod_pattern("b"), "target-a")
    assert picks(names.target_pod_pattern(), "target")


def test_a_run_owns_its_namespace_whatever_the_variant_but_only_its_variants_pods() -> None:
    light = names.RunIdentity("ns", "r1", "uid-1", "pair", "default", variant="light")
    heavy = names.RunIdentity("ns", "r1", "uid-1", "pair", "default", variant="heavy")
    other_run = names.RunIdentity("ns", "r2", "uid-1", "pair", "default", variant="light")
    assert heavy.owns_run(light.labels())  # the namespace the variants share
    assert not heavy.owns(light.labels(names.ROLE_TARGET))  # light's target is not heavy's
    assert light.owns(light.labels(names.ROLE_TARGET))
    assert not other_run.owns_run(light.labels())
    assert not light.owns(None)
