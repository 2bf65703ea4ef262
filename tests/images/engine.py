"""Running Plimsoll's images with podman the way their pods run them.

Used by the image tests (tests/images/conftest.py, test_containers.py). The
flags podman needs on these machines come from scripts/podman-flags, the file
scripts/build-images sources too, so the build and the tests agree. A pod's
container (as `plimsoll.kube.manifests` builds it) becomes a `podman run`: its
command with `$(VAR)` expanded as the kubelet does, its env with the ConfigMap
and downward-API references resolved, and its security context as podman
flags: the user, a read-only root, no capabilities, no privilege escalation,
and `/tmp` (an emptyDir in the pod) as a tmpfs.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]
FLAGS = ROOT / "scripts" / "podman-flags"


def flags(name: str) -> list[str]:
    """One of scripts/podman-flags' arrays: podman_global_flags or podman_run_flags."""
    script = f'. "{FLAGS}"; printf "%s\\n" "${{{name}[@]}}"'
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True)
    return out.stdout.split()


def podman_command() -> list[str] | None:
    """podman with its global flags, or None when this machine has no podman."""
    binary = shutil.which("podman")
    return None if binary is None else [binary, *flags("podman_global_flags")]


def podman(*args: str, timeout: float = 60) -> str:
    command = podman_command()
    assert command is not None
    done = subprocess.run(
        [*command, *args], capture_output=True, text=True, timeout=timeout, check=False
    )
    if done.returncode != 0:
        raise AssertionError(f"podman {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def _expand(value: str, env: dict[str, str]) -> str:
    """$(VAR) references, expanded from the container's env as the kubelet does."""
    return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: env.get(m[1], m[0]), value)


def _env(container: dict[str, Any], pod_ip: str, config_maps: dict[str, Any]) -> dict[str, str]:
    env = {}
    for item in container.get("env", []):
        source = item.get("valueFrom")
        if source is None:
            env[item["name"]] = item["value"]
        elif source.get("fieldRef", {}).get("fieldPath") == "status.podIP":
            env[item["name"]] = pod_ip
        elif "configMapKeyRef" in source:
            ref = source["configMapKeyRef"]
            env[item["name"]] = config_maps[ref["name"]]["data"][ref["key"]]
        elif "secretKeyRef" in source:  # the run's control token, as the operator writes it
            ref = source["secretKeyRef"]
            env[item["name"]] = config_maps[ref["name"]]["stringData"][ref["key"]]
        else:
            raise AssertionError(f"no translation for env source {source}")
    return env


def security_flags(pod: dict[str, Any], container: dict[str, Any]) -> list[str]:
    """The pod's security context as podman flags; a field with no translation fails."""
    pod_context = pod["spec"].get("securityContext", {})
    context = {**pod_context, **container.get("securityContext", {})}
    flags = ["--user", f"{context['runAsUser']}:{context['runAsGroup']}"]
    if context.get("readOnlyRootFilesystem"):
        flags.append("--read-only")
    if context.get("capabilities", {}).get("drop") == ["ALL"]:
        flags.append("--cap-drop=all")
    if context.get("allowPrivilegeEscalation") is False:
        flags += ["--security-opt", "no-new-privileges"]
    for mount in container.get("volumeMounts", []):
        volume = next(v for v in pod["spec"]["volumes"] if v["name"] == mount["name"])
        assert "emptyDir" in volume, f"no translation for volume {volume}"
    # Every pod of ours has /tmp as an emptyDir (kube.pod_specs.tmp_volume).
    if any(v["name"] == "tmp" for v in pod["spec"].get("volumes", [])):
        flags += ["--tmpfs", "/tmp:rw,size=64m,mode=1777"]
    return flags


@dataclass(frozen=True)
class Network:
    name: str
    subnet_prefix: str  # "10.89.3." for 10.89.3.0/24

    def address(self, host: int) -> str:
        return f"{self.subnet_prefix}{host}"


def network_of(name: str) -> Network:
    subnets = json.loads(podman("network", "inspect", name))[0]["subnets"]
    subnet = subnets[0]["subnet"]
    assert subnet.endswith(".0/24"), subnet
    return Network(name, subnet.removesuffix("0/24"))


@contextmanager
def pod_container(
    pod: dict[str, Any],
    image: str,
    network: Network,
    host: int,
    config_maps: dict[str, Any] | None = None,
) -> Iterator[str]:
    """Runs the pod's only container on `network` at .`host`; yields its address."""
    (container,) = pod["spec"]["containers"]
    address = network.address(host)
    env = _env(container, address, config_maps or {})
    command = [_expand(part, env) for part in container["command"]]
    name = f"{pod['metadata']['name']}-{network.name}"
    env_flags = [flag for key, value in env.items() for flag in ("--env", f"{key}={value}")]
    podman(
        "run", "--detach", "--rm", "--name", name,
        "--network", network.name, "--ip", address,
        *flags("podman_run_flags"),
        *security_flags(pod, container),
        *env_flags,
        "--entrypoint", command[0], image, *command[1:],
    )  # fmt: skip
    try:
        yield address
    finally:
        subprocess.run(
            [*(podman_command() or []), "rm", "--force", "--time", "0", name],
            capture_output=True,
            timeout=60,
            check=False,
        )


def logs(pod: dict[str, Any], network: Network) -> str:
    return podman("logs", f"{pod['metadata']['name']}-{network.name}")


def wait_healthy(url: str, deadline_s: float = 30) -> httpx.Response:
    """GET url until it answers 200, at most deadline_s seconds."""
    end = time.monotonic() + deadline_s
    last: Exception | str = "no answer"
    while time.monotonic() < end:
        try:
            answer = httpx.get(url, timeout=2)
            if answer.status_code == 200:
                return answer
            last = f"status {answer.status_code}"
        except httpx.HTTPError as exc:
            last = exc
        time.sleep(0.2)
    raise AssertionError(f"{url} did not become healthy in {deadline_s} s: {last}")
