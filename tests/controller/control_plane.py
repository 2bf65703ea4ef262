"""A real Kubernetes control plane for the operator tests, one per test session.

`../shared/k8s/control-plane` (beside the repository: CI's checkout and the
developers' worktrees have it, a user's fresh clone does not) starts etcd,
kube-apiserver, kube-controller-manager and kube-scheduler on loopback, with no
kubelet (`real_kubelet.py` plays that part). `start` brings one up in its own
folder and `stop` takes it down with `--wipe`. Where the control plane is absent
the tests that need it skip with a reason that says how to run them, except in
CI (`CI=true`), where such a skip would hide that they never ran: there it fails.
"""

from __future__ import annotations

import base64
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.localrun import ROOT

CONTROL_PLANE = ROOT.parent / "shared" / "k8s" / "control-plane"
HOW_TO_RUN = (
    f"needs the real Kubernetes control plane {CONTROL_PLANE} (the repository's sibling "
    "`shared/k8s`, present in CI and the development worktrees), absent here; "
    "for a kind or k3d cluster see PLIMSOLL_E2E_KUBECONFIG in the README"
)


def require_control_plane() -> None:
    """Skip without the control plane; in CI, fail instead (a skip there proves nothing)."""
    if CONTROL_PLANE.exists():  # read at call time: a test points it elsewhere
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true but the real-API-server tests cannot run: {HOW_TO_RUN}")
    pytest.skip(HOW_TO_RUN)


@dataclass(frozen=True)
class ControlPlane:
    folder: Path
    kubeconfig: Path

    @property
    def server(self) -> str:
        return str(self._config()["clusters"][0]["cluster"]["server"])

    def _config(self) -> dict[str, Any]:
        return dict(yaml.safe_load(self.kubeconfig.read_text()))

    def credentials(self) -> tuple[Path, Path, Path]:
        """(CA, client certificate, client key) of the admin user, as files for httpx/ssl."""
        config = self._config()
        user = config["users"][0]["user"]
        files = []
        for name, data in [
            ("ca.crt", config["clusters"][0]["cluster"]["certificate-authority-data"]),
            ("admin.crt", user["client-certificate-data"]),
            ("admin.key", user["client-key-data"]),
        ]:
            path = self.folder.parent / f"{self.folder.name}-{name}"  # outside: wiped whole
            if not path.exists():
                path.write_bytes(base64.b64decode(data))
            files.append(path)
        return files[0], files[1], files[2]

    def kubectl(
        self, *args: str, stdin: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """`kubectl` as the cluster's admin; with `check`, a failure raises with its stderr."""
        result = subprocess.run(
            [str(self.folder / "bin" / "kubectl"), f"--kubeconfig={self.kubeconfig}", *args],
            input=stdin, text=True, capture_output=True, timeout=120,
        )  # fmt: skip
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed: {result.stderr}")
        return result

    def wait_established(self, *crds: str, limit: float = 60.0) -> None:
        """Until each CRD is Established. Not `kubectl wait`: kubectl 1.36 fails at once,
        not waits, on a CRD so new that it has no `status.conditions` yet ("<nil> is of
        the type <nil>", seen in CI), and its jsonpath filter fails the same way ("<nil> is
        not array or slice"): so a failed read means not yet, until the deadline."""
        established = '{.status.conditions[?(@.type=="Established")].status}'
        deadline = time.monotonic() + limit
        for crd in crds:
            while True:
                read = self.kubectl(
                    "get", f"crd/{crd}", "-o", f"jsonpath={established}", check=False
                )
                if read.returncode == 0 and read.stdout == "True":
                    break
                if time.monotonic() > deadline:
                    raise AssertionError(
                        f"crd/{crd} not Established after {limit:g} s: {read.stderr or read.stdout}"
                    )
                time.sleep(0.2)

    def token_kubeconfig(self, path: Path, namespace: str, account: str) -> Path:
        """A kubeconfig that authenticates as a ServiceAccount with a TokenRequest token,
        as the operator's pod does with its mounted token."""
        token = self.kubectl("create", "token", account, "-n", namespace, "--duration=2h")
        config = self._config()
        config["users"] = [{"name": account, "user": {"token": token.stdout.strip()}}]
        config["contexts"] = [
            {
                "name": account,
                "context": {"cluster": config["clusters"][0]["name"], "user": account},
            }
        ]
        config["current-context"] = account
        path.write_text(yaml.safe_dump(config))
        return path


# `control-plane up` judges a component dead when /proc/PID/exe is not yet its binary.
# Right after its `setsid NAME &` the child can still be the forking shell, so on a
# busy host it sometimes reports "kube-controller-manager exited" with an empty log
# and then stops the very process it judged gone (stop 37's CI). `up` undoes all it
# started on failure, so one more attempt starts clean; a real failure fails thrice.
_UP_ATTEMPTS = 3


def start(folder: Path) -> ControlPlane:
    for _ in range(_UP_ATTEMPTS):
        up = subprocess.run(
            [str(CONTROL_PLANE), "up", str(folder)], stdout=subprocess.PIPE, text=True, timeout=600
        )
        if up.returncode == 0:
            return ControlPlane(folder, Path(up.stdout.strip().removeprefix("KUBECONFIG=")))
    raise AssertionError(f"control-plane up failed {_UP_ATTEMPTS} times; its stderr above says why")


def stop(plane: ControlPlane) -> None:
    subprocess.run(
        [str(CONTROL_PLANE), "down", "--wipe", str(plane.folder)], check=True, timeout=120
    )
