"""A control plane of a test's own, for a test that takes the API server away.

Most tests share the session's control plane (`tests/controller/control_plane.py`).
A test that stops the API server mid-test cannot: `ControlPlane.up()` starts etcd
and kube-apiserver (with the controller manager and the scheduler) on loopback in a
folder of the test's own, and `down()` stops them keeping the data, so the test can
bring the same cluster back.
"""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONTROL_PLANE = ROOT.parent / "shared" / "k8s" / "control-plane"


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
