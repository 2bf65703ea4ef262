"""The admin's allow-lists for a podTemplate (issue 52, item 4): by default no priority
class, no toleration, no label or annotation, and nodes chosen only by the well-known
labels of a class of node; each refusal names the field and the chart value."""

from __future__ import annotations

from typing import Any

import pytest

from plimsoll.decide.pod_template_policy import (
    CLASS_OF_NODE_LABELS,
    TemplatePolicy,
    template_policy_problems,
)

ROOT = "spec.target.podTemplate"


def _problems(template: dict[str, Any], policy: TemplatePolicy | None = None) -> list[str]:
    return template_policy_problems(template, policy or TemplatePolicy(), ROOT)


def test_a_template_of_allowed_things_passes_and_none_is_nothing() -> None:
    assert _problems({}) == []
    assert template_policy_problems(None, TemplatePolicy(), ROOT) == []
    zone = {"spec": {"nodeSelector": {"topology.kubernetes.io/zone": "eu-west-1a"}}}
    assert _problems(zone) == []
    env_only = {"spec": {"containers": [{"name": "target", "env": [{"name": "A", "value": "1"}]}]}}
    assert _problems(env_only) == []


@pytest.mark.parametrize(
    ("template", "words"),
    [
        (
            {"spec": {"priorityClassName": "team-critical"}},
            f"{ROOT}.spec.priorityClassName: 'team-critical' is not a priority class the "
            "cluster's admin allows",
        ),
        (
            {"spec": {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}]}},
            f"{ROOT}.spec.tolerations[0].key: 'nvidia.com/gpu' is not a taint",
        ),
        (
            {"spec": {"nodeSelector": {"kubernetes.io/hostname": "node-7"}}},
            f"{ROOT}.spec.nodeSelector.kubernetes.io/hostname: chooses nodes by "
            "'kubernetes.io/hostname'",
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
                                                "key": "kubernetes.io/hostname",
                                                "operator": "In",
                                                "values": ["node-7"],
                                            }
                                        ]
                                    }
                                ]
                            }
                        }
                    }
                }
            },
            f"{ROOT}.spec.affinity.nodeAffinity: chooses nodes by 'kubernetes.io/hostname'",
        ),
        (
            {
                "metadata": {
                    "annotations": {
                        "container.apparmor.security.beta.kubernetes.io/target": "unconfined"
                    }
                }
            },
            f"{ROOT}.metadata.annotations.container.apparmor.security.beta.kubernetes.io/target:"
            " not under a prefix",
        ),
        (
            {"metadata": {"labels": {"sidecar.istio.io/inject": "true"}}},
            f"{ROOT}.metadata.labels.sidecar.istio.io/inject: not under a prefix",
        ),
    ],
)
def test_by_default_each_is_refused_naming_the_field_and_the_value(
    template: dict[str, Any], words: str
) -> None:
    problems = _problems(template)
    assert len(problems) == 1, problems
    assert problems[0].startswith(words), problems[0]
    assert "chart's podTemplate values" in problems[0]


def test_what_the_admin_allows_passes() -> None:
    policy = TemplatePolicy.from_values(
        {
            "priorityClasses": ["perf-tests"],
            "tolerationKeys": ["perf"],
            "nodeLabels": ["pool"],
            "metadataPrefixes": ["perf.example.com/", "team"],
        }
    )
    template = {
        "metadata": {"labels": {"team": "edge"}, "annotations": {"perf.example.com/run": "x"}},
        "spec": {
            "priorityClassName": "perf-tests",
            "tolerations": [{"key": "perf", "operator": "Exists"}],
            "nodeSelector": {"pool": "perf"},
        },
    }
    assert _problems(template, policy) == []
    # The node labels are the admin's list, not added to the default's.
    zone = {"spec": {"nodeSelector": {"topology.kubernetes.io/zone": "a"}}}
    assert len(_problems(zone, policy)) == 1


def test_the_default_node_labels_choose_a_kind_of_node_never_one_node() -> None:
    assert "kubernetes.io/hostname" not in CLASS_OF_NODE_LABELS
    assert not any(label.startswith("node-role.") for label in CLASS_OF_NODE_LABELS)


@pytest.mark.parametrize(
    ("values", "words"),
    [
        ({"priorityClass": ["x"]}, "podTemplate.priorityClass: not a setting"),
        ({"tolerationKeys": "perf"}, "podTemplate.tolerationKeys: must be a list of names"),
        ({"nodeLabels": [""]}, "podTemplate.nodeLabels: must be a list of names"),
    ],
)
def test_bad_values_are_named(values: dict[str, Any], words: str) -> None:
    with pytest.raises(ValueError, match=words):
        TemplatePolicy.from_values(values)
