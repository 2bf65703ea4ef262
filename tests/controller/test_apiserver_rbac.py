"""The operator in namespaced mode, with exactly the chart's RBAC, under PodSecurity.

Release `plimsoll-ns` of the chart (`watch.scope: namespaced`, namespaces team-a
and team-b) is installed once per session (`apiserver_fixtures.py`): a Role per
watched namespace for the CapacityTests, a ClusterRole for the run namespaces.
The operator logs in with a token of that release's ServiceAccount and runs
`-n team-a -n team-b` and, as the chart runs it, `--peering` (joining the
release's KopfPeering in each of them). A run there, with a user's podTemplate
and a setup Job, must succeed with no call refused (no 403 in its log), every pod and Job
admitted by PodSecurity `restricted` in the run namespace; a CapacityTest
outside the watched namespaces is left alone.
"""

from __future__ import annotations

import base64
import json
import subprocess
import uuid
from pathlib import Path

import pytest
import yaml

from plimsoll.api.env_source import CONSENT_LABEL
from tests.charts.helm import objects
from tests.controller.admin_api import wait_for
from tests.controller.apiserver_fixtures import RELEASE_NAMESPACE, ApiServer
from tests.controller.conftest import OperatorProcess, forbidden, quickstart
from tests.controller.real_kubelet import RealKubelet
from tests.controller.test_apiserver_runs import _deployment
from tests.metrics.conftest import start_prometheus

pytestmark = pytest.mark.slow
ACCOUNT = f"system:serviceaccount:{RELEASE_NAMESPACE}:plimsoll-ns"
ACCOUNTS = {  # release -> the user name its ServiceAccount's token authenticates as
    release: f"system:serviceaccount:{RELEASE_NAMESPACE}:{release}"
    for release in ("plimsoll", "plimsoll-ns")
}


GROUPS = {"jobs": "batch", "networkpolicies": "networking.k8s.io"}


def allowed(apiserver: ApiServer, user: str, verb: str, resource: str, namespace: str) -> bool:
    """A SubjectAccessReview, asked by the admin, for `user` as its token would be seen."""
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": user,
            "groups": [
                "system:serviceaccounts",
                f"system:serviceaccounts:{RELEASE_NAMESPACE}",
                "system:authenticated",
            ],
            "resourceAttributes": {
                "verb": verb,
                "group": GROUPS.get(resource.split("/")[0], ""),
                "resource": resource.split("/")[0],
                "subresource": resource.partition("/")[2],
                "namespace": namespace,
            },
        },
    }
    answer = apiserver.plane.kubectl("create", "-o", "json", "-f", "-", stdin=json.dumps(review))
    return bool(json.loads(answer.stdout)["status"].get("allowed"))


# What would make the operator cluster-admin in effect: pods (any secret, any token),
# secrets, and configmaps such as kube-system/aws-auth.
DANGEROUS = [
    ("create", "pods"),
    ("get", "secrets"),
    ("list", "secrets"),
    ("patch", "configmaps"),
    ("update", "configmaps"),
    ("create", "configmaps"),
    ("create", "pods/exec"),
]


@pytest.mark.parametrize("release", ["plimsoll", "plimsoll-ns"])
def test_the_operator_holds_no_pod_secret_or_configmap_rights_outside_run_namespaces(
    apiserver: ApiServer, release: str
) -> None:
    user = ACCOUNTS[release]
    for namespace in ("default", "kube-system", apiserver.namespace):
        granted = [
            (verb, resource, namespace)
            for verb, resource in DANGEROUS
            if allowed(apiserver, user, verb, resource, namespace)
        ]
        assert granted == [], f"{release} may {granted}"


@pytest.mark.parametrize("release", ["plimsoll", "plimsoll-ns"])
def test_the_operator_may_bind_only_its_run_role_and_then_do_its_job(
    apiserver: ApiServer, release: str
) -> None:
    user, namespace = ACCOUNTS[release], apiserver.namespace
    run_role = apiserver.installed.envs[release]["PLIMSOLL_RUN_ROLE"]
    assert run_role == f"{release}-run"

    def bind(role: str, name: str, *extra: str) -> subprocess.CompletedProcess[str]:
        return apiserver.plane.kubectl(
            "create", "rolebinding", name, f"--clusterrole={role}", f"--user={user}",
            "-n", namespace, f"--as={user}", *extra, check=False,
        )  # fmt: skip

    # RBAC escalation prevention: `bind` is granted on the run role only.
    for stronger in ("admin", "edit", "cluster-admin"):
        refused = bind(stronger, f"try-{stronger}", "--dry-run=server")
        assert refused.returncode != 0, f"{release} could bind {stronger}"
        assert "forbidden" in refused.stderr.lower(), refused.stderr
    assert not allowed(apiserver, user, "create", "pods", namespace)
    made = bind(run_role, run_role)
    assert made.returncode == 0, made.stderr
    for verb, resource in [
        ("create", "pods"),
        ("create", "secrets"),
        ("get", "secrets"),
        ("create", "networkpolicies"),
        ("create", "resourcequotas"),
        ("create", "limitranges"),
        ("create", "jobs"),
        ("delete", "pods"),
        ("patch", "networkpolicies"),  # server-side apply
        ("patch", "configmaps"),
    ]:
        assert allowed(apiserver, user, verb, resource, namespace), (verb, resource)
    # Still nothing it does not use, and nothing in the next namespace.
    assert not allowed(apiserver, user, "update", "configmaps", namespace)
    assert not allowed(apiserver, user, "watch", "secrets", namespace)
    assert not allowed(apiserver, user, "create", "pods/exec", namespace)
    assert not allowed(apiserver, user, "create", "pods/proxy", namespace)  # in-cluster chart
    assert not allowed(apiserver, user, "create", "pods", "default")


def test_the_namespaced_release_may_touch_capacitytests_only_where_it_watches(
    apiserver: ApiServer,
) -> None:
    def can(*args: str) -> str:
        result = apiserver.plane.kubectl("auth", "can-i", *args, f"--as={ACCOUNT}", check=False)
        return result.stdout.strip()

    assert can("patch", "capacitytests.plimsoll.dev/status", "-n", "team-a") == "yes"
    assert can("list", "capacitytests.plimsoll.dev", "-n", "team-b") == "yes"
    assert can("list", "capacitytests.plimsoll.dev", "-n", apiserver.namespace) == "no"
    assert can("list", "capacitytests.plimsoll.dev", "--all-namespaces") == "no"
    assert can("create", "namespaces") == "yes"  # each run's own namespace


async def test_namespaced_operator_runs_a_test_with_a_pod_template_and_a_setup_job(
    apiserver: ApiServer, node_kubelet: RealKubelet, tmp_path: Path
) -> None:
    logs = tmp_path / "operator-logs"
    logs.mkdir()
    kubeconfig = apiserver.installed.kubeconfigs["plimsoll-ns"]
    operator = OperatorProcess(
        kubeconfig,
        logs,
        scope=("-n", "team-a", "-n", "team-b"),
        env=apiserver.installed.envs["plimsoll-ns"],
    )
    prometheus = await start_prometheus(tmp_path / "prom", [node_kubelet.exporter.address], "500ms")
    name = f"ns-{apiserver.namespace}"  # team-a is shared by the session: a name of our own
    try:
        # A short lifetime: this replica is killed below, and its keep-alive must not
        # hold back a later namespaced operator of the session for long.
        peering = ("--peering=plimsoll-ns", "--peering-lifetime=10")
        # The template below uses a toleration, a label and an annotation: the admin allows
        # them (the chart's podTemplate values; by default none is allowed).
        permitted = {"tolerationKeys": ["perf"], "metadataPrefixes": ["team", "owner"]}
        env = {"POD_ID": "ns-replica", "PLIMSOLL_POD_TEMPLATE_POLICY": json.dumps(permitted)}
        operator.start(*peering, prometheus=prometheus.url, env=env)
        body = quickstart(name, prometheus.url, levels=[20])
        body["spec"]["target"]["podTemplate"] = {
            "metadata": {"labels": {"team": "perf"}, "annotations": {"owner": "perf-team"}},
            "spec": {"tolerations": [{"key": "perf", "operator": "Exists"}]},
        }
        body["spec"]["target"]["setup"] = [
            {"name": "seed", "command": ["python", "-c", "print('seeded')"]}
        ]
        await apiserver.apply(body, namespace="team-a")
        await apiserver.apply(quickstart("unwatched", None), namespace=apiserver.namespace)
        running = await wait_for(
            lambda: apiserver.phase_in(name, "Running", "Failed", namespace="team-a"), 90, "Running"
        )
        assert running["phase"] == "Running", json.dumps(running, indent=1) + operator.log()
        run_ns = await apiserver.api.get(f"/api/v1/namespaces/{running['namespace']}") or {}
        # Its rights there come from the RoleBinding it made first, to its run role only.
        binding_path = (
            f"/apis/rbac.authorization.k8s.io/v1/namespaces/{running['namespace']}"
            "/rolebindings/plimsoll-ns-run"
        )
        binding = await apiserver.api.get(binding_path) or {}
        assert binding["roleRef"]["name"] == "plimsoll-ns-run", binding
        assert allowed(apiserver, ACCOUNT, "create", "pods", running["namespace"])
        assert not allowed(apiserver, ACCOUNT, "create", "pods", "team-a")
        # The run's budget is in force there: the quota controller counts its pods.
        quota_path = f"/api/v1/namespaces/{running['namespace']}/resourcequotas/run-budget"
        quota = await apiserver.api.get(quota_path) or {}
        assert int(quota["status"]["used"]["pods"]) >= 3, quota
        assert int(quota["status"]["used"]["pods"]) <= int(quota["spec"]["hard"]["pods"])
        labels = run_ns["metadata"]["labels"]
        assert labels["pod-security.kubernetes.io/enforce"] == "restricted"
        for team in ("team-a", "team-b"):  # the keep-alive, through the Role's rights only
            path = f"/apis/kopf.dev/v1/namespaces/{team}/kopfpeerings/plimsoll-ns"
            peering_object = await apiserver.api.get(path) or {}
            assert "ns-replica" in (peering_object.get("status") or {}), (team, peering_object)
        pods_path = f"/api/v1/namespaces/{running['namespace']}/pods"
        target = await apiserver.api.items(pods_path, labelSelector="team=perf")
        assert len(target) == 1
        assert target[0]["metadata"]["annotations"]["owner"] == "perf-team"
        job_path = f"/apis/batch/v1/namespaces/{running['namespace']}/jobs"
        jobs = await apiserver.api.items(job_path)
        assert [j["status"].get("succeeded") for j in jobs] == [1], jobs
        status = await wait_for(
            lambda: apiserver.phase_in(name, "Succeeded", "Failed", namespace="team-a"),
            90,
            "a finished run",
        )
        assert status["phase"] == "Succeeded", json.dumps(status, indent=1) + operator.log()
        assert await apiserver.status("unwatched") == {}  # not ours to run
        await apiserver.remove_all(namespace="team-a")  # the finalizer, in namespaced mode
        assert await apiserver.namespace_gone(status["namespace"])
    finally:
        prometheus.stop()
        operator.kill()
        await apiserver.remove_all(namespace="team-a", limit=0)
    assert forbidden(operator) == [], operator.log()


async def test_a_pod_template_asking_for_the_host_network_is_refused_before_any_pod(
    apiserver: ApiServer,
) -> None:
    # The CRD types podTemplate's allowed fields only (issue 52), so the API server
    # stops it at admission: `kubectl apply` (strict field validation) refuses it naming
    # the field, and a client that asks for no validation has it pruned, so it never
    # reaches the operator. It never depends on the namespace's PodSecurity label (which
    # some clusters leave off); the model's allow-list refuses it too, for `plimsoll
    # validate` (tests/api/test_pod_template.py).
    body = quickstart("privileged", None)
    body["metadata"]["namespace"] = apiserver.namespace
    body["spec"]["target"]["podTemplate"] = {"spec": {"hostNetwork": True}}
    refused = apiserver.plane.kubectl("apply", "-f", "-", stdin=json.dumps(body), check=False)
    assert refused.returncode != 0, "kubectl apply accepted hostNetwork"
    assert 'unknown field "spec.target.podTemplate.spec.hostNetwork"' in refused.stderr
    stored = await apiserver.apply(body)
    assert stored["spec"]["target"]["podTemplate"] == {"spec": {}}, stored["spec"]["target"]


def _environments(pids: list[int]) -> list[bytes]:
    """What each process of the run was started with (the test kubelet runs them here)."""
    return [Path(f"/proc/{pid}/environ").read_bytes() for pid in pids]


async def test_a_value_from_secret_reaches_the_target_and_nowhere_else(
    apiserver: ApiServer, node_kubelet: RealKubelet, sa_operator: OperatorProcess, tmp_path: Path
) -> None:
    value = f"s3cr3t-{uuid.uuid4().hex}"
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "db",
            "namespace": apiserver.namespace,
            "labels": {CONSENT_LABEL: "true"},
        },
        "stringData": {"password": value},
    }
    apiserver.plane.kubectl("apply", "-f", "-", stdin=json.dumps(secret))
    user = ACCOUNTS["plimsoll"]
    assert not allowed(apiserver, user, "get", "secrets", apiserver.namespace)  # not yet
    prometheus = await start_prometheus(tmp_path / "prom", [node_kubelet.exporter.address], "500ms")
    try:
        sa_operator.start(prometheus=prometheus.url)
        body = quickstart("secretive", prometheus.url, levels=[20])
        ref = {"secretKeyRef": {"name": "db", "key": "password"}}
        body["spec"]["target"]["valueFrom"] = {"DB_PASSWORD": ref}
        await apiserver.apply(body)
        running = await wait_for(
            lambda: apiserver.phase_in("secretive", "Running", "Failed"), 90, "Running"
        )
        assert running["phase"] == "Running", json.dumps(running, indent=1) + sa_operator.log()
        environs = _environments(node_kubelet.pids(running["namespace"]))
        assert any(f"DB_PASSWORD={value}".encode() in e.split(b"\0") for e in environs)
        status = await wait_for(
            lambda: apiserver.phase_in("secretive", "Succeeded", "Failed"), 120, "a finished run"
        )
    finally:
        prometheus.stop()
    assert status["phase"] == "Succeeded", json.dumps(status, indent=1) + sa_operator.log()
    report = await apiserver.api.get(
        f"/api/v1/namespaces/{apiserver.namespace}/configmaps/secretive-report"
    )
    events = await apiserver.events("secretive")
    for where, text in [
        ("status", json.dumps(status)),
        ("report", json.dumps(report)),
        ("events", json.dumps(events)),
        ("operator log", sa_operator.log()),
    ]:
        assert value not in text, where
        assert base64.b64encode(value.encode()).decode() not in text, where
    report_spec = json.loads((report or {})["data"]["report.json"])["spec"]["target"]
    assert report_spec["valueFrom"] == {"DB_PASSWORD": ref}  # the reference, not the value
    # The operator read it through the references role it bound here for this spec.
    assert allowed(apiserver, user, "get", "secrets", apiserver.namespace)
    assert not allowed(apiserver, user, "get", "secrets", "default")


async def test_the_admission_policy_keeps_the_operator_to_its_own_namespaces(
    apiserver: ApiServer, node_kubelet: RealKubelet, sa_operator: OperatorProcess, tmp_path: Path
) -> None:
    """What RBAC cannot narrow (`rbac.admissionPolicy`, on by default): namespace
    delete/patch, binding the run role only where the namespace is labelled as
    Plimsoll's, and the report and references roles nowhere protected (kube-system, the
    release's namespace); a run still works, binding all it needs."""
    plane, user = apiserver.plane, ACCOUNTS["plimsoll"]
    policy = [
        o for o in objects({}, name="plimsoll") if o["kind"].startswith("ValidatingAdmissionPolicy")
    ]
    assert len(policy) == 2
    plane.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(policy))

    def as_operator(*args: str) -> subprocess.CompletedProcess[str]:
        return plane.kubectl(*args, f"--as={user}", "--dry-run=server", check=False)

    async def policy_refuses() -> subprocess.CompletedProcess[str] | None:
        result = as_operator("delete", "namespace", apiserver.namespace)
        return result if result.returncode != 0 else None

    try:
        # A policy takes effect once the API server has loaded it: ask until it answers.
        refused = await wait_for(policy_refuses, 30, "the policy in force")
        assert "only the namespaces it labels as its own" in refused.stderr
        assert (
            plane.kubectl("auth", "can-i", "delete", "namespaces", f"--as={user}").stdout.strip()
            == "yes"
        )
        bind = as_operator(
            "create", "rolebinding", "plimsoll-run", "--clusterrole=plimsoll-run",
            f"--serviceaccount={RELEASE_NAMESPACE}:plimsoll", "-n", apiserver.namespace,
        )  # fmt: skip
        assert bind.returncode != 0
        assert "bind its run role only in a namespace it labels" in bind.stderr

        def bind_role(role: str, namespace: str) -> subprocess.CompletedProcess[str]:
            return as_operator(
                "create", "rolebinding", role, f"--clusterrole={role}",
                f"--serviceaccount={RELEASE_NAMESPACE}:plimsoll", "-n", namespace,
            )  # fmt: skip

        # Each role the operator may bind, in a namespace foreign to it: refused by
        # the policy (RBAC alone, which grants `bind` on them cluster-wide, would allow it).
        for role in ("plimsoll-run", "plimsoll-report", "plimsoll-references"):
            for foreign in ("kube-system", RELEASE_NAMESPACE):
                refused = bind_role(role, foreign)
                assert refused.returncode != 0, f"{role} could be bound in {foreign}"
                assert "ValidatingAdmissionPolicy" in refused.stderr, refused.stderr
                assert "may bind its" in refused.stderr, refused.stderr
        # Where CapacityTests are served, the report and references roles are allowed,
        # and the run role in a namespace labelled as Plimsoll's (a run namespace).
        for role in ("plimsoll-report", "plimsoll-references"):
            allowed_here = bind_role(role, apiserver.namespace)
            assert allowed_here.returncode == 0, allowed_here.stderr
        run_namespace = f"{apiserver.namespace}-run"
        plane.kubectl("create", "namespace", run_namespace)
        try:
            plane.kubectl(
                "label", "namespace", run_namespace, "app.kubernetes.io/managed-by=plimsoll"
            )
            allowed_here = bind_role("plimsoll-run", run_namespace)
            assert allowed_here.returncode == 0, allowed_here.stderr
        finally:
            plane.kubectl("delete", "namespace", run_namespace, "--wait=false", check=False)
        relabel = as_operator(
            "label", "namespace", "kube-system", "app.kubernetes.io/managed-by=plimsoll"
        )
        assert relabel.returncode != 0, "it could make kube-system look like its own"
        # Issue 52, item 5: a namespace it creates or changes is its own and restricted, and
        # it binds roles only to itself, so a stolen token cannot make a privileged
        # namespace and bind its run role (pods, secrets) there for another subject.
        for enforce in ("privileged", None):
            labels = {"app.kubernetes.io/managed-by": "plimsoll"}
            if enforce:
                labels["pod-security.kubernetes.io/enforce"] = enforce
            made = plane.kubectl(
                "create", "-f", "-", f"--as={user}", "--dry-run=server",
                stdin=json.dumps(
                    {
                        "apiVersion": "v1",
                        "kind": "Namespace",
                        "metadata": {"name": f"{apiserver.namespace}-lax", "labels": labels},
                    }
                ),
                check=False,
            )  # fmt: skip
            assert made.returncode != 0, f"it could create a namespace with {labels}"
            assert "under the restricted Pod Security Standard" in made.stderr, made.stderr
        unlabelled = as_operator("create", "namespace", f"{apiserver.namespace}-bare")
        assert unlabelled.returncode != 0
        assert "only as its own" in unlabelled.stderr, unlabelled.stderr
        owned = f"{apiserver.namespace}-owned"
        plane.kubectl("create", "namespace", owned)
        try:
            plane.kubectl(
                "label", "namespace", owned, "app.kubernetes.io/managed-by=plimsoll",
                "pod-security.kubernetes.io/enforce=restricted",
            )  # fmt: skip
            loosened = as_operator(
                "label", "--overwrite", "namespace", owned,
                "pod-security.kubernetes.io/enforce=privileged",
            )  # fmt: skip
            assert loosened.returncode != 0, "it could loosen its own namespace's policy"
            assert "under the restricted Pod Security Standard" in loosened.stderr
            for subject in ("--serviceaccount=kube-system:default", "--user=mallory"):
                other = as_operator(
                    "create", "rolebinding", "plimsoll-run", "--clusterrole=plimsoll-run",
                    subject, "-n", owned,
                )  # fmt: skip
                assert other.returncode != 0, f"it could bind its run role to {subject}"
                assert "may bind roles only to itself" in other.stderr, other.stderr
        finally:
            plane.kubectl("delete", "namespace", owned, "--wait=false", check=False)
        # Issue 58, item 5: with its contract role bound, the operator may change a
        # Deployment's plimsoll.dev/ annotations and nothing else of it.
        namespace = apiserver.namespace
        deployments = f"/apis/apps/v1/namespaces/{namespace}/deployments"
        await apiserver.api.create(deployments, _deployment("shop-api", namespace))
        plane.kubectl(
            "create", "rolebinding", "plimsoll-contract", "--clusterrole=plimsoll-contract",
            f"--serviceaccount={RELEASE_NAMESPACE}:plimsoll", "-n", namespace,
        )  # fmt: skip
        ours = as_operator(
            "annotate", "deployment", "shop-api", "plimsoll.dev/capacity-state=unproven",
            "-n", namespace,
        )  # fmt: skip
        assert ours.returncode == 0, ours.stderr
        for change in (
            ["annotate", "deployment", "shop-api", "team.example/owner=mallory"],
            ["label", "deployment", "shop-api", "app.kubernetes.io/part-of=evil"],
            ["set", "image", "deployment/shop-api", "app=registry.example/evil:1"],
        ):
            refused = as_operator(*change, "-n", namespace)
            assert refused.returncode != 0, f"it could {' '.join(change)}"
            assert "only in its plimsoll.dev/ annotations" in refused.stderr, refused.stderr
        plane.kubectl("delete", "rolebinding", "plimsoll-contract", "-n", namespace)
        # A whole run, whose namespace the operator creates, binds in, and deletes, and
        # whose proven capacity it writes onto the Deployment it copied, as the policy lets it.
        prometheus = await start_prometheus(
            tmp_path / "prom", [node_kubelet.exporter.address], "500ms"
        )
        try:
            sa_operator.start(prometheus=prometheus.url)
            guarded = quickstart("guarded", prometheus.url, levels=[20, 400])
            guarded["spec"]["target"] = {
                "fromDeployment": {"name": "shop-api"},
                "resources": {"cpu": "250m", "memory": "256Mi"},
            }
            guarded["spec"]["contract"] = {"annotate": True}
            guarded["spec"]["workload"]["timeout"] = "1s"  # the failing level ends promptly
            await apiserver.apply(guarded)
            status = await wait_for(
                lambda: apiserver.phase_in("guarded", "Succeeded", "Failed"), 150, "a finished run"
            )
            assert status["phase"] == "Succeeded", json.dumps(status, indent=1) + sa_operator.log()
            annotated = await wait_for(
                lambda: _annotation(apiserver, deployments, "proven"), 20, "the contract"
            )
            contract = json.loads(annotated["plimsoll.dev/capacity"])
            assert contract["proven"]["runId"] == status["runId"]
            assert contract["proven"]["ceiling"] == status["ceiling"]["level"]
            await apiserver.remove_all()
            assert await apiserver.namespace_gone(status["namespace"])
        finally:
            prometheus.stop()
    finally:
        for item in policy:
            plane.kubectl("delete", item["kind"], item["metadata"]["name"], check=False)
    assert forbidden(sa_operator) == [], sa_operator.log()


async def _annotation(apiserver: ApiServer, deployments: str, state: str) -> dict[str, str] | None:
    """The shop-api Deployment's annotations once its contract's state is `state`."""
    deployment = await apiserver.api.get(f"{deployments}/shop-api") or {}
    annotations = (deployment.get("metadata") or {}).get("annotations") or {}
    return annotations if annotations.get("plimsoll.dev/capacity-state") == state else None
