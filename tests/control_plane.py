"""The real Kubernetes control plane of `../shared/k8s` for the tests that need one.

`ControlPlane.up()` starts etcd and kube-apiserver (with the controller manager
and the scheduler) as processes on loopback in a folder of the test's own, and
`down()` stops them keeping the data, so a test can take the API server away and
bring it back. Where `../shared/k8s` is absent (a fresh clone) `available()` is
False and the tests skip, saying why.
"""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONTROL_PLANE = ROOT.parent / "shared" / "k8s" / "control-plane"
ABSENT = f"needs the real Kubernetes control plane {CONTROL_PLANE}; it is absent here"


def available() -> bool:
    return CONTROL_PLANE.exists()


@dataclass
class ControlPlane:
    folder: Path
    kubeconfig: str = ""

    def up(self) -> str:
        done = subprocess.run(
            [CONTROL_PLANE, "up", self.folder],
            stdout=subprocess.PIPE,
            text=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, "control-plane up failed; its stderr says why"
        self.kubeconfig = done.stdout.strip().removeprefix("KUBECONFIG=")
        return self.kubeconfig

    def down(self, *, wipe: bool = False) -> None:
        flags = ["--wipe"] if wipe else []
        subprocess.run([CONTROL_PLANE, "down", *flags, self.folder], check=True, timeout=120)

    def kubectl(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.folder / "bin" / "kubectl"), "--kubeconfig", self.kubeconfig, *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            env={**os.environ, "KUBECONFIG": ""},
        )

    def install_crd(self, text: str) -> None:
        """Apply the CRD and wait until it is established (its conditions appear a moment
        after the apply, so the wait itself is retried)."""
        crd = self.folder / "crd.yaml"
        crd.write_text(text)
        applied = self.kubectl("apply", "-f", str(crd))
        assert applied.returncode == 0, applied.stderr
        deadline = time.monotonic() + 30
        while True:
            waited = self.kubectl(
                "wait",
                "--for=condition=established",
                "--timeout=10s",
                "crd/capacitytests.plimsoll.dev",
            )
            if waited.returncode == 0:
                return
            assert time.monotonic() < deadline, waited.stderr
            time.sleep(0.5)
