"""`helm test`'s NetworkPolicy probe (issue 52, item 5), as the chart renders it: a
policy that admits the probe on one port of a listener and nothing on the other, the
listener, its Service and the probe, each a test hook in Helm's order, all under the
restricted Pod Security Standard. The probe's behaviour is tested on sockets
(tests/cli/test_network_probe.py) and on a real node (tests/realnode)."""

from __future__ import annotations

from typing import Any

from tests.charts.helm import hooks, objects, of_kind, one


def _probe_command(items: list[dict[str, Any]]) -> list[str]:
    pod = one(items, "Pod")
    return [str(word) for word in pod["spec"]["containers"][0]["command"]]


def test_the_hooks_are_helm_tests_applied_policy_first_and_removed_once_passed() -> None:
    items = hooks()
    kinds = [i["kind"] for i in items]
    assert (kinds[0], kinds[-1]) == ("NetworkPolicy", "Pod")
    assert {i["kind"] for i in items} == {"NetworkPolicy", "Deployment", "Service", "Pod"}
    for item in items:
        annotations = item["metadata"]["annotations"]
        assert annotations["helm.sh/hook"] == "test"
        assert annotations["helm.sh/hook-delete-policy"] == "before-hook-creation,hook-succeeded"


def test_the_release_itself_carries_none_of_them() -> None:
    names = {i["metadata"]["name"] for i in objects()}
    assert not {i["metadata"]["name"] for i in hooks()} & names


def test_the_policy_admits_the_probe_on_the_first_port_only() -> None:
    items = hooks()
    policy = one(items, "NetworkPolicy")["spec"]
    listener = one(items, "Deployment")["spec"]["template"]
    probe = one(items, "Pod")
    assert policy["podSelector"]["matchLabels"].items() <= listener["metadata"]["labels"].items()
    assert policy["policyTypes"] == ["Ingress"]
    [rule] = policy["ingress"]
    [peer] = rule["from"]
    assert peer["podSelector"]["matchLabels"].items() <= probe["metadata"]["labels"].items()
    assert [p["port"] for p in rule["ports"]] == [8080]
    # The listener serves both ports; the probe asks for the admitted one, then the other.
    listen = [str(w) for w in listener["spec"]["containers"][0]["command"]]
    assert listen[-3:] == ["listen", "8080", "8081"]
    service = one(items, "Service")
    assert _probe_command(items)[-4:] == ["check", service["metadata"]["name"], "8080", "8081"]
    assert {p["targetPort"] for p in service["spec"]["ports"]} == {8080, 8081}


def test_every_pod_runs_restricted_in_the_operators_image_without_a_token() -> None:
    items = hooks()
    operator_image = one(objects(), "Deployment")["spec"]["template"]["spec"]["containers"][0][
        "image"
    ]
    pods = [one(items, "Pod")["spec"], one(items, "Deployment")["spec"]["template"]["spec"]]
    for pod in pods:
        assert pod["automountServiceAccountToken"] is False
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        [container] = pod["containers"]
        assert container["image"] == operator_image
        context = container["securityContext"]
        assert context["allowPrivilegeEscalation"] is False
        assert context["capabilities"] == {"drop": ["ALL"]}
        assert container["resources"]["limits"]


def test_no_probe_without_the_chart_s_network_policies() -> None:
    assert hooks({"networkPolicy": {"enabled": False}}) == []
    assert of_kind(hooks(), "Pod")
