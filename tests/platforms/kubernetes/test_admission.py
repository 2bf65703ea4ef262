"""What the Kubernetes platform refuses before it creates anything, all of it at once:
each problem names its field, and a spec with none starts."""

from __future__ import annotations

import copy

import pytest

from plimsoll.api import load_capacity_test
from plimsoll.api.spec import CapacityTestSpec
from plimsoll.kube.names import Images
from plimsoll.platforms.kubernetes import admission
from plimsoll.platforms.kubernetes.options import KubernetesOptions
from tests.api.test_spec_errors import MINIMAL


def _spec(**spec: object) -> CapacityTestSpec:
    document = copy.deepcopy(MINIMAL)
    document["spec"]["target"]["image"] = "shop/api:1"
    document["spec"]["target"].pop("command")
    document["spec"].update(spec)
    return load_capacity_test(document).spec


async def test_a_target_host_name_is_resolved_by_the_operator_for_real() -> None:
    assert "127.0.0.1" in await admission.resolved("http://localhost:8080/")
    assert await admission.resolved("http://10.0.0.7/") == []  # a literal: nothing to ask
    assert await admission.resolved("http://no-such-host.invalid/") == []


def test_the_api_server_is_known_by_its_url_and_its_service_ip(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
    assert admission.api_server_hosts("https://10.0.0.9:6443") == {"10.0.0.9", "10.96.0.1"}
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST")
    assert admission.api_server_hosts("https://k8s.example:6443") == {"k8s.example"}


async def test_every_problem_is_named_at_once() -> None:
    options = KubernetesOptions(images=Images())
    spec = _spec(
        metrics={"prometheusUrl": "http://elsewhere:9090"},
        generators={"image": "someone/else:1"},
        workload={
            "model": "replay",
            "mix": [{"name": "get", "path": "/"}],
            "replay": {"log": "/var/log/access.json"},
        },
    )
    problems = await admission.start_problems(spec, options, {"10.96.0.1"})
    text = "\n".join(problems)
    assert len(problems) == 3, problems
    assert "metrics.prometheusUrl" in text
    assert "spec.generators.image" in text
    assert "workload.model 'replay' is not built yet on Kubernetes" in text


async def test_a_plain_spec_has_no_problem() -> None:
    assert await admission.start_problems(_spec(), KubernetesOptions(), set()) == []
