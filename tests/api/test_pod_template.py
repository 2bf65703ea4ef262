"""The target's podTemplate allow-list: what a CapacityTest may not ask of the cluster,
each rejected with its path, and what it may, reaching the pod without weakening it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from plimsoll.api.pod_template import MAX_DEPTH, template_problems
from plimsoll.api.resource import SpecError, load_capacity_test
from plimsoll.kube import manifests
from plimsoll.kube.names import RunIdentity, run_namespace_name

RUN = RunIdentity(
    namespace=run_namespace_name("t", "0123abcd"),
    run_id="0123abcd",
    owner_uid="uid",
    owner_name="t",
    owner_namespace="default",
)


def spec_with(template: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "plimsoll.dev/v1alpha1",
        "kind": "CapacityTest",
        "metadata": {"name": "t"},
        "spec": {
            "target": {
                "image": "app:1",
                "resources": {"cpu": "1", "memory": "512Mi"},
                "podTemplate": template,
            },
            "workload": {"mix": [{"name": "get", "path": "/"}]},
        },
    }


HOSTILE = [
    ({"spec": {"hostNetwork": True}}, "podTemplate.spec.hostNetwork: is not allowed"),
    ({"spec": {"hostPID": True}}, "podTemplate.spec.hostPID: is not allowed"),
    ({"spec": {"hostIPC": True}}, "podTemplate.spec.hostIPC: is not allowed"),
    ({"spec": {"nodeName": "control-plane-1"}}, "podTemplate.spec.nodeName: is not allowed"),
    (
        {"spec": {"containers": [{"name": "target", "securityContext": {"privileged": True}}]}},
        "podTemplate.spec.containers[0].securityContext: is not allowed",
    ),
    (
        {"spec": {"containers": [{"name": "target", "resources": {"limits": {"cpu": "64"}}}]}},
        "podTemplate.spec.containers[0].resources: is not allowed",
    ),
    (
        {"spec": {"initContainers": [{"name": "x", "image": "busybox"}]}},
        "podTemplate.spec.initContainers: is not allowed",
    ),
    (
        {"spec": {"containers": [{"name": "sidecar", "env": []}]}},
        "only the 'target' container may be changed",
    ),
    (
        {"spec": {"volumes": [{"name": "root", "hostPath": {"path": "/"}}]}},
        "podTemplate.spec.volumes[0].hostPath: is not allowed",
    ),
    (
        {"spec": {"securityContext": {"runAsUser": 0}}},
        "podTemplate.spec.securityContext.runAsUser: must be a non-root id",
    ),
    ({"spec": {"securityContext": None}}, "podTemplate.spec.securityContext: must be an object"),
    (
        {"spec": {"tolerations": [{"operator": "Exists"}]}},
        "podTemplate.spec.tolerations[0]: needs an explicit 'key'",
    ),
    (
        {"spec": {"priorityClassName": "system-node-critical"}},
        "is a system priority class",
    ),
    (
        {
            "spec": {
                "containers": [
                    {
                        "name": "target",
                        "env": [
                            {"name": "X", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}
                        ],
                    }
                ]
            }
        },
        "podTemplate.spec.containers[0].env[0].valueFrom.fieldRef: is not allowed",
    ),
    # Control-plane placement, by toleration, by label, by affinity (issue 33).
    (
        {
            "spec": {
                "tolerations": [
                    {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}
                ],
                "nodeSelector": {"node-role.kubernetes.io/control-plane": ""},
            }
        },
        "podTemplate.spec.tolerations[0].key: places the target on a control-plane node",
    ),
    (
        {
            "spec": {
                "tolerations": [{"key": "node-role.kubernetes.io/master", "operator": "Exists"}]
            }
        },
        "podTemplate.spec.tolerations[0].key: places the target on a control-plane node",
    ),
    (
        {"spec": {"nodeSelector": {"node-role.kubernetes.io/control-plane": ""}}},
        "podTemplate.spec.nodeSelector.node-role.kubernetes.io/control-plane: places",
    ),
    (
        {
            "spec": {
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {
                                    "matchExpressions": [
                                        {
                                            "key": "node-role.kubernetes.io/control-plane",
                                            "operator": "Exists",
                                        }
                                    ]
                                }
                            ]
                        }
                    }
                }
            }
        },
        "podTemplate.spec.affinity.nodeAffinity: places the target on a control-plane node",
    ),
    # The run's own control-token Secret, by any of the three ways a pod reads a Secret.
    (
        {"spec": {"volumes": [{"name": "t", "secret": {"secretName": "plimsoll-control-token"}}]}},
        "podTemplate.spec.volumes[0].secret.secretName: may not name the run's control-token",
    ),
    (
        {
            "spec": {
                "containers": [
                    {
                        "name": "target",
                        "env": [
                            {
                                "name": "T",
                                "valueFrom": {
                                    "secretKeyRef": {
                                        "name": "plimsoll-control-token-b-4f2a",
                                        "key": "token",
                                    }
                                },
                            }
                        ],
                    }
                ]
            }
        },
        "podTemplate.spec.containers[0].env[0].valueFrom.secretKeyRef.name: may not name",
    ),
    (
        {
            "spec": {
                "containers": [
                    {
                        "name": "target",
                        "envFrom": [{"secretRef": {"name": "plimsoll-control-token"}}],
                    }
                ]
            }
        },
        "podTemplate.spec.containers[0].envFrom[0].secretRef.name: may not name",
    ),
    # Issue 52, item 4: the gaps a security review found in the model's own list.
    (
        {"spec": {"securityContext": {"runAsUser": True}}},
        "podTemplate.spec.securityContext.runAsUser: must be a non-root id, a whole number 1 "
        "or more (found true/false)",
    ),
    (
        {"spec": {"securityContext": {"supplementalGroups": [1000, 0]}}},
        "podTemplate.spec.securityContext.supplementalGroups[1]: must be a non-root group id",
    ),
    (
        {"spec": {"securityContext": {"supplementalGroups": [False]}}},
        "podTemplate.spec.securityContext.supplementalGroups[0]: must be a non-root group id",
    ),
    (
        {"spec": {"nodeSelector": {"node-role.kubernetes.io/etcd": "true"}}},
        "podTemplate.spec.nodeSelector.node-role.kubernetes.io/etcd: places the target on a "
        "control-plane node",
    ),
    (
        {
            "spec": {
                "affinity": {
                    "podAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "labelSelector": {"matchLabels": {"component": "kube-apiserver"}},
                                "namespaces": ["kube-system"],
                                "topologyKey": "kubernetes.io/hostname",
                            }
                        ]
                    }
                }
            }
        },
        "podTemplate.spec.affinity.podAffinity: names other namespaces (namespaces)",
    ),
    (
        {
            "spec": {
                "affinity": {
                    "podAntiAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "weight": 1,
                                "podAffinityTerm": {
                                    "labelSelector": {"matchLabels": {"app": "db"}},
                                    "namespaceSelector": {},
                                    "topologyKey": "kubernetes.io/hostname",
                                },
                            }
                        ]
                    }
                }
            }
        },
        "podTemplate.spec.affinity.podAntiAffinity: names other namespaces (namespaceSelector)",
    ),
    ({"metadata": {"ownerReferences": []}}, "podTemplate.metadata.ownerReferences: is not allowed"),
    ({"status": {}}, "podTemplate.status: is not allowed"),
]


@pytest.mark.parametrize(("template", "needle"), HOSTILE, ids=[h[1][:48] for h in HOSTILE])
def test_a_hostile_template_is_rejected_naming_the_field(
    template: dict[str, Any], needle: str
) -> None:
    with pytest.raises(SpecError) as caught:
        load_capacity_test(spec_with(template))
    text = "; ".join(caught.value.problems)
    assert "spec.target.podTemplate" in text
    assert needle in text


def test_a_template_nested_10000_levels_is_refused_without_recursion() -> None:
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(10_000):
        node["a"] = {}
        node = node["a"]
    problems = template_problems({"metadata": {"annotations": deep}})
    assert problems == [f"podTemplate: is nested more than {MAX_DEPTH} levels deep"]


def test_an_oversized_template_is_refused() -> None:
    big = {"metadata": {"annotations": {f"k{i}": "v" * 100 for i in range(500)}}}
    assert template_problems(big) == ["podTemplate: is larger than 16 KiB"]


def test_allowed_fields_reach_the_pod_and_plimsolls_settings_win() -> None:
    template = {
        "metadata": {"labels": {"team": "edge"}, "annotations": {"note": "x"}},
        "spec": {
            "nodeSelector": {"pool": "perf"},
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": "zone", "operator": "In", "values": ["a"]}
                                ]
                            }
                        ]
                    }
                }
            },
            "tolerations": [{"key": "perf", "operator": "Exists", "effect": "NoSchedule"}],
            "imagePullSecrets": [{"name": "registry"}],
            "priorityClassName": "perf-tests",
            "securityContext": {"runAsUser": 1000, "fsGroup": 1000},
            "volumes": [{"name": "conf", "configMap": {"name": "app-conf"}}],
            "containers": [
                {
                    "name": "target",
                    "env": [
                        {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}
                    ],
                    "volumeMounts": [{"name": "conf", "mountPath": "/etc/app", "readOnly": True}],
                }
            ],
        },
    }
    spec = load_capacity_test(spec_with(template)).spec
    pod = manifests.target_pod(RUN, spec)
    assert pod["metadata"]["labels"]["team"] == "edge"
    assert pod["spec"]["nodeSelector"] == {"pool": "perf"}
    assert pod["spec"]["priorityClassName"] == "perf-tests"
    assert pod["spec"]["securityContext"]["runAsUser"] == 1000
    assert pod["spec"]["securityContext"]["runAsNonRoot"] is True
    [container] = pod["spec"]["containers"]
    assert {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}} in container[
        "env"
    ]
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["resources"] == {
        "requests": {"cpu": "1", "memory": "512Mi"},
        "limits": {"cpu": "1", "memory": "512Mi"},
    }


def test_plimsoll_validate_names_the_field_too(tmp_path: Any) -> None:
    import yaml

    from tests.localrun import plimsoll

    path = tmp_path / "hostile.yaml"
    path.write_text(yaml.safe_dump(spec_with({"spec": {"hostNetwork": True}})))
    result = plimsoll("validate", str(path))
    assert result.returncode == 2  # an invalid spec, as `plimsoll run`
    assert "spec.target.podTemplate" in result.stdout + result.stderr
    assert "hostNetwork: is not allowed" in result.stdout + result.stderr


def test_the_crd_schema_types_exactly_the_allow_listed_fields_and_bounds_depth() -> None:
    """`api/pod_template_schema.py` (the CRD) and `api/pod_template.py` (the model's
    allow-list) name the same fields; no part of the schema is free-form, so the API
    server refuses a template nested deeper than the schema (a 1,100-level one is
    refused on the real server: tests/controller/test_apiserver_deep_objects.py)."""
    from plimsoll.api import pod_template as allow
    from plimsoll.api.pod_template_schema import POD_TEMPLATE_SCHEMA, schema_depth

    spec = POD_TEMPLATE_SCHEMA["properties"]["spec"]["properties"]
    assert set(POD_TEMPLATE_SCHEMA["properties"]) == {"metadata", "spec"}
    assert set(spec) == allow.POD_SPEC_FIELDS
    assert set(spec["affinity"]["properties"]) == allow.AFFINITY_KINDS
    container = spec["containers"]["items"]["properties"]
    assert set(container) == allow.CONTAINER_FIELDS
    assert set(spec["securityContext"]["properties"]) == allow.POD_SECURITY_FIELDS
    volume = set(spec["volumes"]["items"]["properties"])
    assert volume == {"name", *allow.VOLUME_SOURCES}
    env_from = container["env"]["items"]["properties"]["valueFrom"]["properties"]
    assert set(env_from) == allow.ENV_SOURCES
    assert "x-kubernetes-preserve-unknown-fields" not in json.dumps(POD_TEMPLATE_SCHEMA)
    assert schema_depth(POD_TEMPLATE_SCHEMA) <= allow.MAX_DEPTH
