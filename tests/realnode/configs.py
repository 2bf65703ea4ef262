"""The configuration files of a real node: containerd, CNI, the kubelet, Prometheus.

`tests/realnode/node.py` writes them into the node's folder before it starts each
process. Kept apart (pure text from a `Layout`) so every setting that this machine
needed has one place and one comment saying why (see ../shared/k8s/README.md,
"A real node").
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

# Not podman's 10.88.0.0/16 (cni-podman0, left by the image tests): a second bridge on
# that subnet answers "no route to host". Inside the control plane's --cluster-cidr.
POD_SUBNET = "10.244.0.0/24"
GATEWAY = "10.244.0.1"  # the bridge's own address: the API server, DNS and Prometheus
BRIDGE = "plimsoll0"
CLUSTER_DOMAIN = "cluster.local"
PAUSE_IMAGE = "localhost/plimsoll-pause:1"


@dataclass(frozen=True)
class Layout:
    """Where one node keeps its files and which ports it took."""

    home: Path
    name: str
    kubelet_port: int
    kubelet_healthz_port: int
    proxy_metrics_port: int
    proxy_healthz_port: int
    prometheus_port: int

    @property
    def socket(self) -> Path:
        return self.home / "containerd" / "containerd.sock"

    @property
    def cni_conf_dir(self) -> Path:
        return self.home / "cni" / "net.d"

    @property
    def runc_wrapper(self) -> Path:
        return self.home / "bin" / "runc-clamp"


def containerd_config(default: str, layout: Layout) -> str:
    """`containerd config default` with this node's own root, state and sockets, the
    locally built pause image, the Debian CNI plugins and the runc wrapper."""
    c = layout.home / "containerd"
    text = default
    replacements = {
        r'(?m)^root = ".*"$': f'root = "{c / "root"}"',
        r'(?m)^state = ".*"$': f'state = "{c / "state"}"',
        r'(?m)^(\s*)address = "/run/containerd/containerd.sock"$': (
            rf'\1address = "{layout.socket}"'
        ),
        r'(?m)^(\s*)sandbox_image = ".*"$': rf'\1sandbox_image = "{PAUSE_IMAGE}"',
        r'(?m)^(\s*)bin_dir = ".*"$': r'\1bin_dir = "/usr/lib/cni"',
        r'(?m)^(\s*)conf_dir = ".*"$': rf'\1conf_dir = "{layout.cni_conf_dir}"',
        # cgroupfs, as the kubelet's cgroupDriver: this machine has cgroup v1 and no systemd.
        r"(?m)^(\s*)SystemdCgroup = .*$": r"\1SystemdCgroup = false",
        r'(?m)^(\s*)BinaryName = ".*"$': rf'\1BinaryName = "{layout.runc_wrapper}"',
    }
    for pattern, replacement in replacements.items():
        text, count = re.subn(pattern, replacement, text)
        if count == 0:
            raise ValueError(f"containerd's default config has no line matching {pattern}")
    # The ttrpc socket defaults to the gRPC one's path + ".ttrpc"; the debug and metrics
    # addresses are empty by default, so nothing else listens.
    return text


# This sandbox lacks CAP_SYS_RESOURCE: no process may lower its oom_score_adj below 0,
# and runc's init dies ("can't get final child's PID from pipe: EOF") when the kubelet
# asks for -998 (sandboxes) or -997 (Guaranteed pods). A real node has the capability.
RUNC_WRAPPER = """#!/bin/sh
# Clamps process.oomScoreAdj to >= 0 in the bundle's config.json, then runs runc.
bundle=""
prev=""
create=0
for arg in "$@"; do
  [ "$prev" = "--bundle" ] || [ "$prev" = "-b" ] && bundle="$arg"
  [ "$arg" = "create" ] || [ "$arg" = "run" ] && create=1
  prev="$arg"
done
if [ "$create" = 1 ] && [ -n "$bundle" ] && [ -f "$bundle/config.json" ]; then
  python3 - "$bundle/config.json" <<'EOF'
import json, sys
path = sys.argv[1]
with open(path) as f:
    config = json.load(f)
process = config.get("process", {})
if process.get("oomScoreAdj", 0) < 0:
    process["oomScoreAdj"] = 0
    with open(path, "w") as f:
        json.dump(config, f)
EOF
fi
exec /usr/sbin/runc "$@"
"""


def cni_config(layout: Layout) -> str:
    """A bridge network with host-local addresses; its IPAM state stays in the node."""
    return json.dumps(
        {
            "cniVersion": "1.0.0",
            "name": "plimsoll-node",
            "plugins": [
                {
                    "type": "bridge",
                    "bridge": BRIDGE,
                    "isGateway": True,
                    # Pods talk to the host (API server, DNS, Prometheus) and to each
                    # other; nothing leaves the machine, so no masquerade to the outside.
                    "ipMasq": False,
                    "hairpinMode": True,
                    "ipam": {
                        "type": "host-local",
                        "subnet": POD_SUBNET,
                        "gateway": GATEWAY,
                        "dataDir": str(layout.home / "cni" / "ipam"),
                        "routes": [{"dst": "0.0.0.0/0"}],
                    },
                },
                {"type": "portmap", "capabilities": {"portMappings": True}},
            ],
        },
        indent=2,
    )


def kubelet_config(layout: Layout) -> str:
    config = {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "failCgroupV1": False,  # this machine has cgroup v1
        "cgroupDriver": "cgroupfs",
        "failSwapOn": False,
        "containerRuntimeEndpoint": f"unix://{layout.socket}",
        # The bridge's address, the node's InternalIP: the API server reaches it for
        # `kubectl logs`, and the host's Prometheus scrapes /metrics/cadvisor here,
        # anonymously (insecure_skip_verify on the kubelet's self-signed certificate).
        "address": GATEWAY,
        "port": layout.kubelet_port,
        "healthzBindAddress": "127.0.0.1",
        "healthzPort": layout.kubelet_healthz_port,
        "readOnlyPort": 0,
        "authentication": {
            "anonymous": {"enabled": True},
            "webhook": {"enabled": False},
        },
        "authorization": {"mode": "AlwaysAllow"},
        "clusterDNS": [GATEWAY],
        "clusterDomain": CLUSTER_DOMAIN,
        "resolvConf": str(layout.home / "resolv.conf"),
        # A machine shared with other work: evict only when it is really full.
        "evictionHard": {
            "memory.available": "100Mi",
            "nodefs.available": "1%",
            "imagefs.available": "1%",
        },
        "imageGCHighThresholdPercent": 100,
        "imageGCLowThresholdPercent": 99,
        "serializeImagePulls": False,
        "registerNode": True,
        "staticPodPath": "",
        "rotateCertificates": False,
        "serverTLSBootstrap": False,
        "maxPods": 50,
        # kube-proxy owns the NAT rules; the kubelet's KUBE-FIREWALL (a DROP for
        # non-loopback sources to 127.0.0.0/8) would outlive the node on a shared host.
        "makeIPTablesUtilChains": False,
    }
    return json.dumps(config, indent=2)


def prometheus_config(layout: Layout, scrape_interval: str) -> str:
    """The kubelet's cAdvisor endpoint, as a cluster's Prometheus scrapes it (no
    kube-state-metrics: restarts and OOM kills come from the pods' status)."""
    return json.dumps(
        {
            "global": {"scrape_interval": scrape_interval, "scrape_timeout": scrape_interval},
            "scrape_configs": [
                {
                    "job_name": "kubelet-cadvisor",
                    "scheme": "https",
                    "metrics_path": "/metrics/cadvisor",
                    "tls_config": {"insecure_skip_verify": True},
                    "honor_labels": True,
                    "static_configs": [
                        {
                            "targets": [f"{GATEWAY}:{layout.kubelet_port}"],
                            "labels": {"node": layout.name},
                        }
                    ],
                }
            ],
        },
        indent=2,
    )
