"""The Kubernetes platform's objects: valid against Kubernetes' schemas, restricted-compliant,
pinned, labelled for adoption, and merged with the user's pod template."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import kubernetes_validate
import pytest

from plimsoll.api.resource import load_capacity_test
from plimsoll.api.spec import CapacityTestSpec
from plimsoll.api.target import PodShape
from plimsoll.kube import boundaries, manifests, names, network_policies
from plimsoll.kube.control_ingress import generator_ingress_policy
from plimsoll.kube.names import Images, RunIdentity, run_namespace_name
from plimsoll.kube.pod_specs import merge_template

K8S_VERSION = "1.33"
RUN = RunIdentity(
    namespace=run_namespace_name("quick", "0123abcd"),
    run_id="0123abcd",
    owner_uid="5b0c6c4e-1111-2222-3333-444455556666",
    owner_name="quick",
    owner_namespace="default",
)


def _spec() -> CapacityTestSpec:
    return load_capacity_test(
        {
            "apiVersion": "plimsoll.dev/v1alpha1",
            "kind": "CapacityTest",
            "metadata": {"name": "quick"},
            "spec": {
                "target": {
                    "image": "ghcr.io/example/app:1",
                    "resources": {"cpu": "1500m", "memory": "512Mi"},
                    "env": {"MODE": "fast"},
                    "setup": [{"name": "seed", "command": ["seed", "--rows", "1000"]}],
                    "podTemplate": {
                        "metadata": {"labels": {"team": "edge"}},
                        "spec": {
                            "securityContext": {"runAsUser": 1000},
                            "containers": [
                                {"name": "target", "env": [{"name": "EXTRA", "value": "1"}]}
                            ],
                        },
                    },
                },
                "services": [
                    {
                        "name": "valkey",
                        "image": "valkey/valkey:8",
                        "port": 6379,
                        "resources": {"cpu": "1", "memory": "256Mi"},
                        "targetEnv": {"VALKEY_URL": "redis://{host}:{port}"},
                    },
                ],
                "upstream": {"routes": [{"name": "work", "path": "/work"}], "replicas": 2},
                "upstreams": [
                    {
                        "name": "auth",
                        "envVar": "AUTH_URL",
                        "routes": [{"name": "check", "path": "/check"}],
                    },
                ],
                "workload": {"mix": [{"name": "work", "path": "/work"}]},
                "generators": {"replicas": 2, "resources": {"cpu": "2", "memory": "1Gi"}},
            },
        }
    ).spec


def all_objects(run: RunIdentity = RUN) -> list[dict[str, Any]]:
    spec, images, RUN = _spec(), Images(), run  # noqa: N806 (the same builders per variant)
    return [
        manifests.namespace(RUN),
        boundaries.limit_range(RUN),
        boundaries.resource_quota(RUN, [spec], manifests.KNOWN_SHAPES),
        manifests.mock_config_map(RUN, spec.upstream),
        *(manifests.mock_pod(RUN, i, spec.upstream, images.mock) for i in range(2)),
        manifests.cluster_service(RUN, "plimsoll-mock", "mock", spec.upstream.port),
        manifests.named_mock_config_map(RUN, spec.upstreams[0]),
        manifests.mock_pod(RUN, 0, spec.upstreams[0].upstream(), images.mock, "auth"),
        manifests.cluster_service(RUN, "plimsoll-mock-auth", "mock-auth", 8765),
        manifests.dependency_pod(RUN, spec.services[0]),
        manifests.dependency_service(RUN, spec.services[0]),
        manifests.target_pod(RUN, spec),
        manifests.setup_job(RUN, spec.target.setup[0], spec),
        *(manifests.generator_pod(RUN, i, spec.generators, images.generator) for i in range(2)),
        network_policies.generator_network_policy(RUN, spec),
        manifests.control_token_secret(RUN, "t0ken"),
        network_policies.run_egress_policy(RUN),
        network_policies.run_ingress_policy(RUN),
        generator_ingress_policy(RUN, None),
    ]


def pod_specs(obj: dict[str, Any]) -> list[dict[str, Any]]:
    if obj["kind"] == "Pod":
        return [obj["spec"]]
    if obj["kind"] == "Job":
        return [obj["spec"]["template"]["spec"]]
    return []


@pytest.mark.parametrize("obj", all_objects(), ids=lambda o: f"{o['kind']}-{o['metadata']['name']}")
def test_every_object_is_valid_kubernetes(obj: dict[str, Any]) -> None:
    kubernetes_validate.validate(obj, K8S_VERSION, strict=True)


def test_each_variants_objects_have_names_of_their_own_and_refer_to_each_other() -> None:
    light, heavy = (replace(RUN, variant=v) for v in ("light", "heavy"))
    shared = {"Namespace", "ResourceQuota", "LimitRange"}  # one per run namespace
    children = [o for o in all_objects(light) if o["kind"] not in shared]
    names = {(o["kind"], o["metadata"]["name"]) for o in children}
    others = {(o["kind"], o["metadata"]["name"]) for o in all_objects(heavy)} - {
        (o["kind"], o["metadata"]["name"]) for o in all_objects(heavy) if o["kind"] in shared
    }
    assert not names & others  # with cleanup: Never both sets stay side by side
    assert ("Pod", "target-light") in names
    assert ("Pod", "mock-1-light") in names
    for obj in children:
        assert len(obj["metadata"]["name"]) <= 63
        assert light.owns(obj["metadata"]["labels"])
        assert not heavy.owns(obj["metadata"]["labels"])
        kubernetes_validate.validate(obj, K8S_VERSION, strict=True)
    # What refers to another object by name names this variant's own.
    by_name = {o["metadata"]["name"]: o for o in children}
    mock = by_name["mock-0-light"]["spec"]["containers"][0]["env"][1]["valueFrom"]
    assert ("ConfigMap", mock["configMapKeyRef"]["name"]) in names
    generator = by_name["generator-0-light"]["spec"]["containers"][0]["env"][1]["valueFrom"]
    assert ("Secret", generator["secretKeyRef"]["name"]) in names
    env = {
        e["name"]: e.get("value") for e in by_name["target-light"]["spec"]["containers"][0]["env"]
    }
    assert f"redis://valkey-light.{RUN.namespace}.svc:6379" in env.values()
    assert env["UPSTREAM_URL"] == f"http://plimsoll-mock-light.{RUN.namespace}.svc:8765"
    assert ("Service", "valkey-light") in names
    assert ("Service", "plimsoll-mock-light") in names


@pytest.mark.parametrize("obj", all_objects(), ids=lambda o: f"{o['kind']}-{o['metadata']['name']}")
def test_every_object_carries_the_run_labels_for_adoption(obj: dict[str, Any]) -> None:
    assert RUN.owns(obj["metadata"]["labels"])


def test_every_pod_meets_pod_security_restricted() -> None:
    checked = 0
    for obj in all_objects():
        for spec in pod_specs(obj):
            pod_ctx = spec["securityContext"]
            assert pod_ctx["runAsNonRoot"] is True
            assert pod_ctx["seccompProfile"]["type"] == "RuntimeDefault"
            for container in spec["containers"]:
                ctx = container["securityContext"]
                assert ctx["allowPrivilegeEscalation"] is False
                assert ctx["capabilities"]["drop"] == ["ALL"]
                assert ctx.get("privileged") is not True
                assert "hostNetwork" not in spec
                assert "hostPID" not in spec
                checked += 1
    assert checked == 8  # three mocks, a service, the target, a setup job, two generators


def test_no_pod_of_a_run_gets_an_api_token() -> None:
    specs = [spec for obj in all_objects() for spec in pod_specs(obj)]
    assert len(specs) == 8
    assert all(spec["automountServiceAccountToken"] is False for spec in specs)
    labels = manifests.namespace(RUN)["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted"


def test_our_images_have_read_only_root_filesystems_and_are_not_pulled_again() -> None:
    for obj in all_objects():
        if obj["kind"] == "Pod" and obj["metadata"]["labels"]["plimsoll.dev/role"] in (
            "mock",
            "generator",
        ):
            assert obj["spec"]["containers"][0]["securityContext"]["readOnlyRootFilesystem"] is True
            # Imported into the node (kind load, ctr import), never pulled again: a
            # registry-less node would fail an `Always` pull (a `latest` tag's default).
            assert obj["spec"]["containers"][0]["imagePullPolicy"] == "IfNotPresent"


def test_target_is_guaranteed_with_upstream_and_services_injected_and_template_merged() -> None:
    target = manifests.target_pod(RUN, _spec())
    container = target["spec"]["containers"][0]
    assert (
        container["resources"]["requests"]
        == container["resources"]["limits"]
        == {"cpu": "1500m", "memory": "512Mi"}
    )
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["UPSTREAM_URL"] == f"http://plimsoll-mock.{RUN.namespace}.svc:8765"
    assert env["VALKEY_URL"] == f"redis://valkey.{RUN.namespace}.svc:6379"
    assert env["AUTH_URL"] == f"http://plimsoll-mock-auth.{RUN.namespace}.svc:8765"
    assert env["MODE"] == "fast"
    assert env["EXTRA"] == "1"  # the template's env merged by name
    assert target["spec"]["securityContext"]["runAsUser"] == 1000
    assert target["metadata"]["labels"]["team"] == "edge"
    assert RUN.owns(target["metadata"]["labels"])


def test_generators_keep_away_from_the_target_and_the_policy_admits_only_target_and_mock() -> None:
    spec = _spec()
    generator = manifests.generator_pod(RUN, 0, spec.generators, "gen:1")
    terms = generator["spec"]["affinity"]["podAntiAffinity"][
        "preferredDuringSchedulingIgnoredDuringExecution"
    ]
    assert (
        terms[0]["podAffinityTerm"]["labelSelector"]["matchLabels"]["plimsoll.dev/role"] == "target"
    )
    assert generator["spec"]["containers"][0]["command"][-1] == "2"  # a worker per core
    egress = network_policies.generator_network_policy(RUN, spec)["spec"]["egress"]
    roles = [r["to"][0]["podSelector"]["matchLabels"]["plimsoll.dev/role"] for r in egress[:2]]
    assert roles == ["target", "mock"]


def test_generator_pods_spread_over_the_nodes_and_still_schedule_on_one() -> None:
    generator = manifests.generator_pod(RUN, 3, _spec().generators, "gen:1")
    [spread] = generator["spec"]["topologySpreadConstraints"]
    assert (spread["topologyKey"], spread["maxSkew"]) == ("kubernetes.io/hostname", 1)
    assert spread["whenUnsatisfiable"] == "ScheduleAnyway"  # more pods than nodes: still run
    selector = spread["labelSelector"]["matchLabels"]
    assert selector["plimsoll.dev/role"] == "generator"
    assert selector.items() <= generator["metadata"]["labels"].items()  # counts its own kind


def test_namespace_name_fits_a_dns_label() -> None:
    name = run_namespace_name("a" * 80, "0123abcdef")
    assert len(name) <= 63
    assert name.startswith("plimsoll-aaa")
    assert name.endswith("-0123abcd")


def test_merge_template_merges_named_lists_and_replaces_others() -> None:
    base = {
        "containers": [{"name": "a", "image": "x", "args": ["1"]}],
        "tolerations": [{"key": "k"}],
    }
    merged = merge_template(base, {"containers": [{"name": "a", "args": ["2"]}], "tolerations": []})
    assert merged == {"containers": [{"name": "a", "image": "x", "args": ["2"]}], "tolerations": []}


def test_generators_read_the_control_token_from_the_runs_secret() -> None:
    spec = _spec()
    pod = manifests.generator_pod(RUN, 0, spec.generators, Images().generator)
    [container] = pod["spec"]["containers"]
    [token_env] = [e for e in container["env"] if e["name"] == "PLIMSOLL_CONTROL_TOKEN"]
    secret = manifests.control_token_secret(RUN, "t0ken")
    ref = token_env["valueFrom"]["secretKeyRef"]
    assert ref["name"] == secret["metadata"]["name"]
    assert secret["stringData"][ref["key"]] == "t0ken"
    assert RUN.owns(secret["metadata"]["labels"])  # adopted by a resumed run, deleted with it


def test_the_run_namespace_admits_only_its_own_pods() -> None:
    """Issue 52, item 5: another tenant's pods cannot reach the run's target, mock or
    services; the operator reaches the generators through their own policy."""
    policy = network_policies.run_ingress_policy(RUN)
    assert policy["metadata"]["namespace"] == RUN.namespace
    spec = policy["spec"]
    assert spec["podSelector"] == {}  # every pod of the namespace, generators included
    assert spec["policyTypes"] == ["Ingress"]
    assert spec["ingress"] == [{"from": [{"podSelector": {}}]}]  # from this namespace only
    control = generator_ingress_policy(RUN, [{"podSelector": {"matchLabels": {"a": "b"}}}])
    assert control["spec"]["ingress"][0]["ports"][0]["port"] == names.GENERATOR_PORT


def test_the_run_namespace_denies_egress_but_inside_and_dns() -> None:
    policy = network_policies.run_egress_policy(RUN)["spec"]
    assert policy["policyTypes"] == ["Egress"]
    # Every pod but the generators (which have their own, narrower policy: they add up).
    [expression] = policy["podSelector"]["matchExpressions"]
    assert expression == {"key": "plimsoll.dev/role", "operator": "NotIn", "values": ["generator"]}
    inside, dns = policy["egress"]
    assert inside == {"to": [{"podSelector": {}}]}  # this namespace only
    assert dns["to"][0]["namespaceSelector"]["matchLabels"] == {
        "kubernetes.io/metadata.name": "kube-system"
    }
    assert {p["port"] for p in dns["ports"]} == {53}


def _with_url(url: str) -> CapacityTestSpec:
    spec = _spec()
    target = spec.target.model_copy(
        update={"url": url, "image": None, "setup": [], "pod_template": None}
    )
    return spec.model_copy(update={"target": target})


def test_generators_reach_an_external_targets_address_and_nothing_else() -> None:
    spec = _with_url("https://10.20.30.40:8443/api")
    target_rule, mock_rule, _ = network_policies.generator_network_policy(RUN, spec)["spec"][
        "egress"
    ]
    assert target_rule == {
        "to": [{"ipBlock": {"cidr": "10.20.30.40/32"}}],
        "ports": [{"protocol": "TCP", "port": 8443}],
    }
    assert mock_rule["to"][0]["podSelector"]["matchLabels"]["plimsoll.dev/role"] == "mock"
    assert network_policies.external_target_warning(spec) is None


def test_an_external_host_name_narrows_to_its_port_and_says_so() -> None:
    spec = _with_url("http://api.perf.example:8080")
    target_rule = network_policies.generator_network_policy(RUN, spec)["spec"]["egress"][0]
    assert target_rule == {"ports": [{"protocol": "TCP", "port": 8080}]}
    warning = network_policies.external_target_warning(spec)
    assert warning is not None
    assert "port 8080 on any address" in warning


def test_a_mock_with_a_shape_is_pinned_to_it_and_one_without_only_asks_for_room() -> None:
    spec = _spec()
    plain = manifests.mock_pod(RUN, 0, spec.upstream, "mock:1")
    (container,) = plain["spec"]["containers"]
    assert "limits" not in container["resources"]  # no shape: no quota, never saturated
    shape = PodShape.model_validate({"cpu": "250m", "memory": "128Mi"})
    shaped = spec.upstream.model_copy(update={"resources": shape})
    (container,) = manifests.mock_pod(RUN, 0, shaped, "mock:1")["spec"]["containers"]
    amounts = {"cpu": "250m", "memory": "128Mi"}
    assert container["resources"] == {"requests": amounts, "limits": amounts}
    kubernetes_validate.validate(
        manifests.mock_pod(RUN, 0, shaped, "mock:1"), K8S_VERSION, strict=True
    )


def test_a_named_mock_has_its_own_pods_config_and_service() -> None:
    spec, images = _spec(), Images()
    named = spec.upstreams[0]
    pod = manifests.mock_pod(RUN, 0, named.upstream(), images.mock, named.name)
    assert pod["metadata"]["name"] == "mock-auth-0"
    role = pod["metadata"]["labels"]["plimsoll.dev/role"]
    assert role == "mock-auth"
    [env] = [e for e in pod["spec"]["containers"][0]["env"] if e["name"] == "PLIMSOLL_MOCK_CONFIG"]
    config_map = manifests.named_mock_config_map(RUN, named)
    assert env["valueFrom"]["configMapKeyRef"]["name"] == config_map["metadata"]["name"]
    served = json.loads(next(iter(config_map["data"].values())))
    # The mock reads only what it serves: its name and variable are the spec's business.
    assert [r["path"] for r in served["routes"]] == ["/check"]
    assert "name" not in served
    assert "envVar" not in served
    service = manifests.cluster_service(RUN, "plimsoll-mock-auth", role, named.port)
    assert service["spec"]["selector"] == RUN.selector("mock-auth")
    # The default mock's Service selects the default mock's pods only.
    default = manifests.mock_pod(RUN, 0, spec.upstream, images.mock)
    assert default["metadata"]["labels"]["plimsoll.dev/role"] == "mock"


def test_the_target_may_reach_every_named_mock() -> None:
    # The run's egress policy admits every pod of the namespace for all but the
    # generators: the target reaches mock-auth on its port like the default mock.
    policy = network_policies.run_egress_policy(RUN)["spec"]
    target_labels = manifests.target_pod(RUN, _spec())["metadata"]["labels"]
    [expression] = policy["podSelector"]["matchExpressions"]
    assert target_labels["plimsoll.dev/role"] not in expression["values"]
    assert {"to": [{"podSelector": {}}]} in policy["egress"]


def _quantity(text: str) -> float:
    units = {"m": 1e-3, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30}
    for suffix, factor in units.items():
        if text.endswith(suffix):
            return float(text[: -len(suffix)]) * factor
    return float(text)


def test_the_quota_admits_every_pod_of_the_run_and_bounds_it_near_what_it_declared() -> None:
    objects = all_objects()
    [quota] = [o for o in objects if o["kind"] == "ResourceQuota"]
    [defaults] = [o for o in objects if o["kind"] == "LimitRange"]
    default_request = defaults["spec"]["limits"][0]["defaultRequest"]
    pods = [spec for obj in objects for spec in pod_specs(obj)]
    requested = {"cpu": 0.0, "memory": 0.0}
    for pod in pods:
        for container in pod["containers"]:
            # As the API server's LimitRanger admits it: a missing request gets the default.
            asked = {**default_request, **container.get("resources", {}).get("requests", {})}
            for resource in requested:
                requested[resource] += _quantity(asked[resource])
    hard = quota["spec"]["hard"]
    assert len(pods) <= int(hard["pods"]) <= len(pods) + 2
    for resource, total in requested.items():
        bound = _quantity(hard[f"requests.{resource}"])
        assert total <= bound, (resource, total, bound)
        assert bound <= total * 2, (resource, total, bound)  # not an open door either
    # 1.5 + 1 + 3 x 0.5 (two mock replicas, one auth mock) + 2 x 2 + 0.1 (setup) = 8.1
    # cores, x 1.25, plus the largest pod (2).
    assert hard == {"pods": "10", "requests.cpu": "12125m", "requests.memory": "5664Mi"}


def test_the_defaults_give_requests_only_so_nothing_unpinned_is_throttled() -> None:
    [limit] = boundaries.limit_range(RUN)["spec"]["limits"]
    assert set(limit) == {"type", "defaultRequest"}  # no default, max: they would set limits
    quota = boundaries.resource_quota(RUN, [_spec()], manifests.KNOWN_SHAPES)
    assert not any(k.startswith("limits.") for k in quota["spec"]["hard"])


def test_the_default_mock_serves_the_floor_on_the_next_port_and_generators_may_reach_it() -> None:
    spec = _spec()
    pod = manifests.mock_pod(RUN, 0, spec.upstream, "mock:1")
    container = pod["spec"]["containers"][0]
    port = spec.upstream.port
    assert container["command"][-2:] == ["--floor-port", str(port + 1)]
    assert {"name": "floor", "containerPort": port + 1} in container["ports"]
    mock_rule = network_policies.generator_network_policy(RUN, spec)["spec"]["egress"][1]
    assert mock_rule["ports"] == [
        {"protocol": "TCP", "port": port},
        {"protocol": "TCP", "port": port + 1},
    ]
    # A mock image of the user's may not serve one: its /healthz stands in.
    own = spec.upstream.model_copy(update={"image": "their-mock:2"})
    assert (
        "--floor-port"
        not in manifests.mock_pod(RUN, 0, own, "mock:1")["spec"]["containers"][0]["command"]
    )
