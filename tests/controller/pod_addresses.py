"""Pod addresses outside loopback for the test kubelet: each one a /32 on the `lo` interface.

The test kubelet's pods listen on 127.0.0.x by default. An EndpointSlice may not hold
a loopback address (the API server answers "may not be in the loopback range"), so for
those pods the real controller manager writes no slices. A test that needs the real
slices (traffic that follows them around a lost pod) gives its kubelets a prefix such
as 10.251.37.: each pod then gets an address there, added to `lo`, so it stays on
this host like loopback, and is removed when the pod goes. `claim` is atomic across
kubelets and sessions: `ip addr add` fails when the address is already there.
"""

from __future__ import annotations

import random
import subprocess


def random_prefix() -> str:
    """A /24 of 10.251.0.0/16 for one test's pods (the real node's pods use 10.244/16)."""
    return f"10.251.{random.randrange(1, 255)}."


def claim(ip: str) -> bool:
    """Add `ip` to `lo`; False when it is there already (someone else's pod)."""
    added = subprocess.run(["ip", "addr", "add", f"{ip}/32", "dev", "lo"], capture_output=True)
    return added.returncode == 0


def release(ip: str) -> None:
    subprocess.run(["ip", "addr", "del", f"{ip}/32", "dev", "lo"], capture_output=True)
