"""A real Kubernetes node beside the control plane: containerd, CNI, kubelet, kube-proxy.

Who calls it: the real-node end-to-end test (`test_real_node.py`, through the
`real_node` fixture) and a developer (`scripts/real-node up|down`). `up` starts, in
one folder of its own and each by PID (recorded in `HOME/pids/`):

- a CNI bridge `plimsoll0` on 10.244.0.0/24 with the host's side at 10.244.0.1;
- a second kube-apiserver on that address (same etcd, certificates and port as the
  control plane's loopback one, a serving certificate that names 10.244.0.1 and the
  `kubernetes` ClusterIP, and the lease endpoint reconciler on), so that
  `default/kubernetes` has an endpoint a pod can route to and an operator pod's
  in-cluster config works;
- cluster DNS (`cluster_dns.py`) on 10.244.0.1:53, the kubelet's `clusterDNS`;
- containerd with its own root, state and socket, the pause image built from
  `pause.c`, and a runc wrapper that clamps oom_score_adj (`configs.RUNC_WRAPPER`);
- the kubelet (cgroup v1, cgroupfs) and kube-proxy (iptables mode);
- a Prometheus on 10.244.0.1 scraping the kubelet's `/metrics/cadvisor`.

`down` stops all of it by PID, removes the containers, mounts, network namespaces,
kube-proxy's rules and the bridge. Needs root (namespaces, cgroups, iptables).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path

from tests.realnode import configs, pause_image
from tests.realnode.configs import BRIDGE, GATEWAY, PAUSE_IMAGE, Layout

ROOT = Path(__file__).resolve().parents[2]
NODE_ASSETS = ROOT.parent / "shared" / "k8s" / "node"
PROMETHEUS = "/usr/bin/prometheus"
NEEDS = {
    "containerd": "containerd",
    "ctr": "containerd",
    "runc": "runc",
    "iptables": "iptables",
    "gcc": "gcc",
    "xz": "xz-utils",
    "openssl": "openssl",
    "ip": "iproute2",
}
NETNS = Path("/var/run/netns")


class NodeError(RuntimeError):
    """The node could not start; the message names the component and its log."""


@dataclass(frozen=True)
class NodeFacts:
    """What `up` leaves in HOME/node.json for the test and for `down`."""

    name: str
    home: str
    prometheus_url: str  # reachable from the host and from pods
    api_server: str  # the bridge-bound API server, for pods
    socket: str  # containerd's
    netns_before: list[str]


def missing_prerequisites() -> list[str]:
    """What this machine lacks for a real node (empty: it can run one)."""
    missing = [
        f"{tool} (Debian: {package})" for tool, package in NEEDS.items() if not shutil.which(tool)
    ]
    if not Path("/usr/lib/cni/bridge").exists():
        missing.append("/usr/lib/cni/bridge (Debian: containernetworking-plugins)")
    if not Path(PROMETHEUS).exists():
        missing.append(f"{PROMETHEUS} (Debian: prometheus)")
    if not (NODE_ASSETS / "kubelet.xz").exists():
        missing.append(f"{NODE_ASSETS}/kubelet.xz (../shared/k8s/node)")
    if os.geteuid() != 0:
        missing.append("root (network namespaces, cgroups and iptables)")
    return missing


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(what: str, check: object, seconds: float, log: Path | None = None) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            if check():  # type: ignore[operator]
                return
        time.sleep(0.3)
    tail = ""
    if log is not None and log.exists():
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-25:])
    raise NodeError(f"{what} not ready after {seconds:g} s; the last lines of {log}:\n{tail}")


class RealNode:
    def __init__(self, plane_folder: Path, kubeconfig: Path, home: Path, name: str = "node-1"):
        self.plane = plane_folder
        self.kubeconfig = kubeconfig
        self.home = home
        self.name = name
        self.pids = home / "pids"
        self.logs = home / "logs"
        # Kept while they run (a dropped Popen of a live process warns); `down` from
        # another process (scripts/real-node) has only the PID files.
        self._processes: dict[str, subprocess.Popen[bytes]] = {}

    # ---- processes -------------------------------------------------------------------
    def _start(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> None:
        log = (self.logs / f"{name}.log").open("ab")
        process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True, env={**os.environ, **(env or {})},
        )  # fmt: skip
        log.close()
        self._processes[name] = process
        (self.pids / f"{name}.pid").write_text(str(process.pid))

    def _alive(self, name: str) -> bool:
        pid_file = self.pids / f"{name}.pid"
        if not pid_file.exists():
            return False
        try:
            os.kill(int(pid_file.read_text()), 0)
        except ProcessLookupError:
            return False
        return True

    def _stop(self, name: str, grace: float = 10) -> None:
        pid_file = self.pids / f"{name}.pid"
        if not pid_file.exists():
            return
        pid = int(pid_file.read_text())
        process = self._processes.pop(name, None)

        def gone() -> bool:
            return process.poll() is not None if process is not None else _gone(pid)

        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + grace
            while not gone():
                if time.monotonic() > deadline:
                    os.kill(pid, signal.SIGKILL)
                    deadline = time.monotonic() + grace
                time.sleep(0.1)
        pid_file.unlink()

    def _ctr(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["ctr", "-a", str(self.layout.socket), "-n", "k8s.io", *args],
            capture_output=True, text=True, check=check, timeout=300,
        )  # fmt: skip

    # ---- up ---------------------------------------------------------------------------
    @property
    def layout(self) -> Layout:
        saved = self.home / "layout.json"
        data = json.loads(saved.read_text())
        data["home"] = Path(data["home"])
        return Layout(**data)

    def up(self, archives: list[Path] = ()) -> NodeFacts:  # type: ignore[assignment]
        missing = missing_prerequisites()
        if missing:
            raise NodeError("a real node needs: " + ", ".join(missing))
        if Path(f"/sys/class/net/{BRIDGE}").exists():
            raise NodeError(
                f"the bridge {BRIDGE} exists: another real node is up on this machine; "
                "`scripts/real-node down HOME` stops it"
            )
        for folder in ("pids", "logs", "bin", "containerd", "cni/net.d", "cni/ipam", "kubelet"):
            (self.home / folder).mkdir(parents=True, exist_ok=True)
        layout = Layout(
            home=self.home,
            name=self.name,
            kubelet_port=_free_port(),
            kubelet_healthz_port=_free_port(),
            proxy_metrics_port=_free_port(),
            proxy_healthz_port=_free_port(),
            prometheus_port=_free_port(),
        )
        (self.home / "layout.json").write_text(
            json.dumps({**asdict(layout), "home": str(layout.home)})
        )
        netns_before = sorted(os.listdir(NETNS)) if NETNS.exists() else []
        facts = NodeFacts(
            name=self.name,
            home=str(self.home),
            prometheus_url=f"http://{GATEWAY}:{layout.prometheus_port}",
            api_server=f"https://{GATEWAY}:{self._api_port()}",
            socket=str(layout.socket),
            netns_before=netns_before,
        )
        (self.home / "node.json").write_text(json.dumps(asdict(facts)))
        try:
            self._unpack("kubelet")
            self._unpack("kube-proxy")
            self._bridge()
            self._api_server()
            self._dns()
            self._containerd(layout)
            self._ctr(
                "images",
                "import",
                str(pause_image.build(NODE_ASSETS / "pause.c", self.home / "pause", PAUSE_IMAGE)),
            )
            for archive in archives:
                self.import_image(archive)
            self._kubelet(layout)
            self._kube_proxy(layout)
            self._prometheus(layout, facts.prometheus_url)
        except BaseException:
            self.down()
            raise
        return facts

    def import_image(self, archive: Path) -> None:
        self._ctr("images", "import", str(archive))

    def _unpack(self, name: str) -> None:
        target = self.home / "bin" / name
        sums = dict(
            reversed(line.split())
            for line in (NODE_ASSETS / "SHA256SUMS").read_text().splitlines()
            if line
        )
        if not target.exists():
            with (NODE_ASSETS / f"{name}.xz").open("rb") as packed, target.open("wb") as out:
                subprocess.run(["xz", "-dc"], stdin=packed, stdout=out, check=True)
            target.chmod(0o755)
        digest = hashlib.sha256(target.read_bytes()).hexdigest()
        if digest != sums[name]:
            target.unlink()
            raise NodeError(f"{name}: sha256 {digest} is not the one in {NODE_ASSETS}/SHA256SUMS")

    def _bridge(self) -> None:
        # Made before the CNI plugin would make it, so the API server, DNS and Prometheus
        # can bind the gateway address first; the plugin adopts a bridge of its name.
        subprocess.run(["ip", "link", "add", BRIDGE, "type", "bridge"], check=True)
        subprocess.run(["ip", "addr", "add", f"{GATEWAY}/24", "dev", BRIDGE], check=True)
        subprocess.run(["ip", "link", "set", BRIDGE, "up"], check=True)

    def _api_port(self) -> int:
        server = self._plane_apiserver_args()["--secure-port"]
        return int(server)

    def _plane_apiserver_argv(self) -> list[str]:
        pid = (self.plane / "run" / "kube-apiserver.pid").read_text().strip()
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1]

    def _plane_apiserver_args(self) -> dict[str, str]:
        args = {}
        for arg in self._plane_apiserver_argv()[1:]:
            key, _, value = arg.partition("=")
            args[key] = value
        return args

    def _api_server(self) -> None:
        pki = self.home / "pki"
        pki.mkdir(exist_ok=True)
        ca = self.plane / "pki"
        # The bridge's address and the `kubernetes` ClusterIP: what a pod dials.
        dns = ["kubernetes", "kubernetes.default", "kubernetes.default.svc"]
        dns.append("kubernetes.default.svc.cluster.local")
        names = ",".join([f"IP:{GATEWAY}", "IP:10.0.0.1", *(f"DNS:{d}" for d in dns)])
        subprocess.run(
            ["openssl", "genrsa", "-out", str(pki / "apiserver.key"), "2048"],
            check=True,
            capture_output=True,
        )
        request = subprocess.run(
            ["openssl", "req", "-new", "-key", str(pki / "apiserver.key"),
             "-subj", "/CN=kube-apiserver"],
            check=True, capture_output=True,
        )  # fmt: skip
        (pki / "ext.cnf").write_text(f"subjectAltName={names}\nextendedKeyUsage=serverAuth\n")
        subprocess.run(
            ["openssl", "x509", "-req", "-CA", str(ca / "ca.crt"), "-CAkey", str(ca / "ca.key"),
             "-CAcreateserial", "-days", "30", "-sha256", "-extfile", str(pki / "ext.cnf"),
             "-out", str(pki / "apiserver.crt")],
            input=request.stdout, check=True, capture_output=True,
        )  # fmt: skip
        argv = self._plane_apiserver_argv()
        replaced = {
            "--bind-address": GATEWAY,
            "--advertise-address": GATEWAY,
            # The loopback server keeps `none`; this one writes default/kubernetes's
            # endpoints (its own address and the shared port) and keeps them fresh.
            "--endpoint-reconciler-type": "lease",
            "--tls-cert-file": str(pki / "apiserver.crt"),
            "--tls-private-key-file": str(pki / "apiserver.key"),
        }
        out = [argv[0]]
        for arg in argv[1:]:
            key = arg.partition("=")[0]
            out.append(f"{key}={replaced[key]}" if key in replaced else arg)
        self._start("kube-apiserver", out)
        context = ssl.create_default_context(cafile=str(ca / "ca.crt"))
        url = f"https://{GATEWAY}:{self._api_port()}/readyz"
        _wait(
            "the bridge's kube-apiserver",
            lambda: urllib.request.urlopen(url, context=context, timeout=2).status == 200,
            90,
            self.logs / "kube-apiserver.log",
        )

    def _dns(self) -> None:
        self._start(
            "cluster-dns",
            [sys.executable, "-m", "tests.realnode.cluster_dns", "--address", GATEWAY,
             "--kubeconfig", str(self.kubeconfig)],
            env={"PYTHONPATH": str(ROOT)},
        )  # fmt: skip

        def answers() -> bool:
            probe = subprocess.run(
                [sys.executable, "-c", "from dnslib import DNSRecord; import sys;"
                 "q = DNSRecord.question('kubernetes.default.svc.cluster.local');"
                 f"r = DNSRecord.parse(q.send('{GATEWAY}', 53, timeout=1));"
                 "sys.exit(0 if r.rr else 1)"],
                capture_output=True, timeout=5,
            )  # fmt: skip
            return probe.returncode == 0

        _wait("cluster DNS", answers, 30, self.logs / "cluster-dns.log")

    def _containerd(self, layout: Layout) -> None:
        default = subprocess.run(
            ["containerd", "config", "default"], check=True, capture_output=True, text=True
        ).stdout
        config = self.home / "containerd" / "config.toml"
        config.write_text(configs.containerd_config(default, layout))
        layout.runc_wrapper.write_text(configs.RUNC_WRAPPER)
        layout.runc_wrapper.chmod(0o755)
        (layout.cni_conf_dir / "10-plimsoll.conflist").write_text(configs.cni_config(layout))
        self._start("containerd", ["containerd", "--config", str(config)])
        _wait(
            "containerd",
            lambda: self._ctr("version", check=False).returncode == 0,
            30,
            self.logs / "containerd.log",
        )

    def _kubelet(self, layout: Layout) -> None:
        (self.home / "resolv.conf").write_text(
            "nameserver 127.0.0.53\n"
        )  # upstream for non-cluster pods; unused
        config = self.home / "kubelet" / "config.json"
        config.write_text(configs.kubelet_config(layout))
        self._start(
            "kubelet",
            [str(self.home / "bin" / "kubelet"), f"--config={config}",
             f"--kubeconfig={self.kubeconfig}",
             f"--hostname-override={self.name}", f"--root-dir={self.home / 'kubelet' / 'root'}",
             f"--node-ip={GATEWAY}",
             # cAdvisor's own flag: without it, it looks for /run/containerd/containerd.sock
             # and publishes only pod-level cgroups, with no container or image labels.
             f"--containerd={layout.socket}", "--v=1"],
        )  # fmt: skip
        _wait("the kubelet's Node Ready", self._node_ready, 120, self.logs / "kubelet.log")

    def _node_ready(self) -> bool:
        out = subprocess.run(
            [str(self.plane / "bin" / "kubectl"), f"--kubeconfig={self.kubeconfig}", "get", "node",
             self.name, "-o", "jsonpath={.status.conditions[?(@.type=='Ready')].status}"],
            capture_output=True, text=True, timeout=20,
        )  # fmt: skip
        return out.stdout.strip() == "True"

    def _kube_proxy(self, layout: Layout) -> None:
        self._start(
            "kube-proxy",
            [str(self.home / "bin" / "kube-proxy"), f"--kubeconfig={self.kubeconfig}",
             f"--hostname-override={self.name}", "--proxy-mode=iptables",
             "--cluster-cidr=10.244.0.0/16",
             f"--metrics-bind-address=127.0.0.1:{layout.proxy_metrics_port}",
             f"--healthz-bind-address=127.0.0.1:{layout.proxy_healthz_port}",
             # A container: the host's conntrack table is not ours to resize.
             "--conntrack-max-per-core=0", "--conntrack-tcp-timeout-established=0",
             "--conntrack-tcp-timeout-close-wait=0", "--v=1"],
        )  # fmt: skip
        url = f"http://127.0.0.1:{layout.proxy_healthz_port}/healthz"
        _wait(
            "kube-proxy",
            lambda: urllib.request.urlopen(url, timeout=2).status == 200,
            60,
            self.logs / "kube-proxy.log",
        )

    def _prometheus(self, layout: Layout, url: str) -> None:
        folder = self.home / "prometheus"
        shutil.rmtree(folder, ignore_errors=True)  # a new node's series only
        folder.mkdir()
        (folder / "prometheus.yml").write_text(configs.prometheus_config(layout, "1s"))
        self._start(
            "prometheus",
            [PROMETHEUS, f"--config.file={folder / 'prometheus.yml'}",
             f"--storage.tsdb.path={folder / 'data'}",
             f"--web.listen-address={GATEWAY}:{layout.prometheus_port}", "--log.level=warn"],
        )  # fmt: skip

        def scraped() -> bool:
            with urllib.request.urlopen(f"{url}/api/v1/targets", timeout=2) as answer:
                active = json.loads(answer.read())["data"]["activeTargets"]
            return bool(active) and all(t["health"] == "up" for t in active)

        _wait("Prometheus scraping the kubelet", scraped, 60, self.logs / "prometheus.log")

    # ---- down -------------------------------------------------------------------------
    def down(self) -> None:
        facts_file = self.home / "node.json"
        netns_before = (
            set(json.loads(facts_file.read_text())["netns_before"])
            if facts_file.exists()
            else set()
        )
        self._stop("kubelet")
        if self._alive("containerd"):
            self._remove_containers()
        self._stop("kube-proxy")
        proxy = self.home / "bin" / "kube-proxy"
        if proxy.exists():
            subprocess.run(
                [str(proxy), "--cleanup", "--proxy-mode=iptables"], capture_output=True, timeout=60
            )
        self._stop("containerd")
        for name in ("prometheus", "cluster-dns", "kube-apiserver"):
            self._stop(name)
        self._unmount()
        if NETNS.exists():
            for name in set(os.listdir(NETNS)) - netns_before:
                if name.startswith("cni-"):
                    subprocess.run(["umount", str(NETNS / name)], capture_output=True)
                    with contextlib.suppress(OSError):
                        (NETNS / name).unlink()
        if Path(f"/sys/class/net/{BRIDGE}").exists():
            subprocess.run(["ip", "link", "delete", BRIDGE], check=False)
        _remove_kubelet_chains()
        _remove_kubepods_cgroups()

    def _remove_containers(self) -> None:
        tasks = self._ctr("tasks", "list", "-q", check=False).stdout.split()
        for task in tasks:
            self._ctr("tasks", "kill", "-s", "SIGKILL", task, check=False)
        deadline = time.monotonic() + 20
        for task in tasks:
            while time.monotonic() < deadline:
                if self._ctr("tasks", "delete", task, check=False).returncode == 0:
                    break
                time.sleep(0.3)
        for container in self._ctr("containers", "list", "-q", check=False).stdout.split():
            self._ctr("containers", "delete", container, check=False)

    def _unmount(self) -> None:
        home = str(self.home.resolve())
        mounts = [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()]
        for point in sorted((m for m in mounts if m.startswith(home)), key=len, reverse=True):
            subprocess.run(["umount", "-l", point], capture_output=True)


def _gone(pid: int) -> bool:
    """Ended (and reaped, when it is our child: a zombie still answers kill 0)."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        return done == pid
    except ChildProcessError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False


def _remove_kubelet_chains() -> None:
    """The kubelet's own iptables chains (its canaries, KUBE-FIREWALL), which
    `kube-proxy --cleanup` leaves."""
    for tool in ("iptables", "ip6tables"):
        for table, chain, parents in [
            ("filter", "KUBE-FIREWALL", ("INPUT", "OUTPUT")),
            ("filter", "KUBE-KUBELET-CANARY", ()),
            ("nat", "KUBE-KUBELET-CANARY", ()),
            ("mangle", "KUBE-KUBELET-CANARY", ()),
        ]:
            for parent in parents:
                subprocess.run([tool, "-t", table, "-D", parent, "-j", chain], capture_output=True)
            subprocess.run([tool, "-t", table, "-F", chain], capture_output=True)
            subprocess.run([tool, "-t", table, "-X", chain], capture_output=True)


def _remove_kubepods_cgroups() -> None:
    """The kubelet's QoS cgroups (`/kubepods` in each v1 hierarchy), once empty."""
    for hierarchy in Path("/sys/fs/cgroup").iterdir():
        top = hierarchy / "kubepods"
        if not top.is_dir():
            continue
        for folder in sorted(
            (p for p in top.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True
        ):
            with contextlib.suppress(OSError):
                folder.rmdir()
        with contextlib.suppress(OSError):
            top.rmdir()
