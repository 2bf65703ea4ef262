"""`target.fromDeployment`: what is copied from a Deployment's container, what the spec
keeps, and what is refused naming it (issue 55, item 3)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from plimsoll.api.target import Target
from plimsoll.decide.from_deployment import (
    ContainerShape,
    DeploymentCopyError,
    container_shape,
    copied_target,
)

APP: dict[str, Any] = {
    "name": "app",
    "image": "registry.example.com/shop/api:1.4.2",
    "command": ["/app/server"],
    "args": ["--listen=:9000"],
    "env": [
        {"name": "LOG_LEVEL", "value": "info"},
        {"name": "DB_URL", "value": "postgres://db:5432/shop"},
        {"name": "API_KEY", "valueFrom": {"secretKeyRef": {"name": "shop-keys", "key": "api"}}},
        {"name": "FLAGS", "valueFrom": {"configMapKeyRef": {"name": "shop-flags", "key": "all"}}},
    ],
    "ports": [{"name": "http", "containerPort": 9000}, {"containerPort": 9100}],
    "readinessProbe": {"httpGet": {"path": "/ready", "port": 9000}},
    "resources": {"requests": {"cpu": "250m"}, "limits": {"memory": "1Gi"}},
}


def _deployment(*containers: dict[str, Any], **pod: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "api", "namespace": "team-a"},
        "spec": {"template": {"spec": {"containers": list(containers), **pod}}},
    }


def _target(**fields: Any) -> Target:
    return Target.model_validate(
        {"fromDeployment": {"name": "api"}, "resources": {"cpu": "1", "memory": "512Mi"}, **fields}
    )


def test_the_image_command_env_port_and_readiness_are_copied_and_the_shape_is_the_specs() -> None:
    target = copied_target(_target(), _deployment(APP))
    assert target.from_deployment is None
    assert target.image == "registry.example.com/shop/api:1.4.2"
    assert (target.command, target.args) == (["/app/server"], ["--listen=:9000"])
    assert target.env == {"LOG_LEVEL": "info", "DB_URL": "postgres://db:5432/shop"}
    api_key, flags = target.value_from["API_KEY"], target.value_from["FLAGS"]
    assert api_key.secret_key_ref is not None
    assert (api_key.secret_key_ref.name, api_key.secret_key_ref.key) == ("shop-keys", "api")
    assert flags.config_map_key_ref is not None
    assert flags.config_map_key_ref.name == "shop-flags"
    assert (target.port, target.readiness_path) == (9000, "/ready")
    assert target.resources is not None
    assert (target.resources.cpu, target.resources.memory) == (1.0, 512 * 2**20)  # never 250m


def test_what_the_spec_sets_wins_over_the_deployment() -> None:
    target = copied_target(
        _target(
            env={"LOG_LEVEL": "warn"},
            port=9100,
            readinessPath="/healthz",
            args=[],
            upstreamEnv="DB_URL",
        ),
        _deployment(APP),
    )
    assert target.env["LOG_LEVEL"] == "warn"
    assert (target.port, target.readiness_path, target.args) == (9100, "/healthz", [])
    # The upstream variable is swapped for the mock's URL, not copied.
    assert target.upstream_env == "DB_URL"
    assert "DB_URL" not in target.env


def test_the_variables_plimsoll_fills_are_swapped_not_copied() -> None:
    app = copy.deepcopy(APP)
    app["env"] += [{"name": "UPSTREAM_URL", "value": "http://payments:80"}]
    app["env"] += [{"name": "PORT", "value": "9000"}, {"name": "AUTH_URL", "value": "http://a"}]
    target = copied_target(_target(), _deployment(app), swapped={"AUTH_URL"})
    assert {"UPSTREAM_URL", "PORT", "AUTH_URL"}.isdisjoint(target.env)
    assert target.env["LOG_LEVEL"] == "info"


def test_a_named_container_is_chosen_among_several_and_an_unnamed_choice_is_refused() -> None:
    sidecar = {"name": "proxy", "image": "envoyproxy/envoy:v1.31"}
    assert (
        copied_target(
            _target(fromDeployment={"name": "api", "container": "app"}), _deployment(sidecar, APP)
        ).image
        == APP["image"]
    )
    with pytest.raises(DeploymentCopyError, match=r"2 containers \(proxy, app\): name the one"):
        copied_target(_target(), _deployment(sidecar, APP))
    with pytest.raises(DeploymentCopyError, match=r"has no container 'web' \(it has proxy, app\)"):
        copied_target(
            _target(fromDeployment={"name": "api", "container": "web"}), _deployment(sidecar, APP)
        )


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (
            {"volumes": [{"name": "data", "hostPath": {"path": "/var/lib"}}]},
            "volumes are not copied",
        ),
        ({"envFrom": [{"secretRef": {"name": "all-keys"}}]}, "envFrom is not copied"),
        (
            {"env": [{"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]},
            "env NODE is read from the pod's own fieldRef",
        ),
        ({"image": ""}, "has no image"),
        ({"image": "shop api:latest"}, "the copy is not a valid target"),
    ],
)
def test_what_cannot_be_copied_safely_is_refused_naming_it(
    change: dict[str, Any], words: str
) -> None:
    app = copy.deepcopy(APP)
    pod: dict[str, Any] = {}
    for key, value in change.items():
        if key == "volumes":
            pod[key] = value
        else:
            app[key] = value
    with pytest.raises(DeploymentCopyError) as raised:
        copied_target(_target(), _deployment(app, **pod))
    message = str(raised.value)
    assert message.startswith("spec.target.fromDeployment (deployment api), container app: ")
    assert words in message


def test_the_model_refuses_from_deployment_beside_image_command_or_url() -> None:
    for extra in ({"image": "x:1"}, {"command": ["python", "app.py"]}, {"url": "http://a:80/"}):
        with pytest.raises(ValueError, match="fromDeployment"):
            _target(**extra)
    with pytest.raises(ValueError, match="resources"):
        Target.model_validate({"fromDeployment": {"name": "api"}})


def test_the_shape_is_the_containers_limits_else_its_requests() -> None:
    """`plimsoll init --deployment` writes the shape production runs the pod at."""
    limited = {"name": "app", "image": "a:1", "resources": {"limits": {"cpu": "2", "memory": "1Gi"},
               "requests": {"cpu": "500m", "memory": "256Mi"}}}  # fmt: skip
    requested = {"name": "side", "image": "s:1", "resources": {"requests": {"cpu": "100m"}}}
    assert container_shape(_deployment(limited), None) == ContainerShape("app", "2", "1Gi")
    # Requests where no limit is set; a value neither gives stays unset for the user.
    assert container_shape(_deployment(limited, requested), "side") == ContainerShape(
        "side", "100m", None
    )
    with pytest.raises(DeploymentCopyError, match="name the one to test"):
        container_shape(_deployment(limited, requested), None)
