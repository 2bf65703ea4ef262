"""The Kubernetes platform's boundaries against a CR that asks for too much: equipment
images from the operator's list only, run namespaces that keep their Pod Security labels,
a report ConfigMap that is never someone else's, and a bounded answer from a generator.
Against kmock's emulated API server and real HTTP servers on 127.0.0.1."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp.web
import kmock
import pytest

from plimsoll.api.report import RunReport
from plimsoll.api.resource import load_capacity_test
from plimsoll.api.spec import CapacityTestSpec
from plimsoll.api.trial import TrialRequest
from plimsoll.controller.report_map import ReportNotWrittenError, write_report_config_map
from plimsoll.kube.client import KubeClient
from plimsoll.kube.manifests import PSS_LABELS
from plimsoll.kube.names import Images, RunIdentity, run_namespace_name
from plimsoll.platforms.base import PlatformError
from plimsoll.platforms.kubernetes import admission
from plimsoll.platforms.kubernetes.options import KubernetesOptions
from plimsoll.platforms.kubernetes.platform import KubernetesPlatform
from plimsoll.run.trial_client import MAX_ANSWER_BYTES, TrialFailedError, run_trial
from tests.controller.fake_cluster import FakeCluster

RUN = RunIdentity(
    namespace=run_namespace_name("t", "0123abcd"),
    run_id="0123abcd",
    owner_uid="uid-1",
    owner_name="t",
    owner_namespace="perf",
)


def spec(**extra: object) -> CapacityTestSpec:
    body = {
        "apiVersion": "plimsoll.dev/v1alpha1",
        "kind": "CapacityTest",
        "metadata": {"name": "t"},
        "spec": {
            "target": {"image": "app:1", "resources": {"cpu": "1", "memory": "512Mi"}},
            "workload": {"mix": [{"name": "get", "path": "/"}]},
            **extra,
        },
    }
    return load_capacity_test(body).spec


@pytest.fixture
async def api() -> AsyncIterator[tuple[FakeCluster, KubeClient]]:
    async with FakeCluster() as emulator, kmock.Server(emulator) as server:
        client = KubeClient(str(server.url).rstrip("/"))
        try:
            yield emulator, client
        finally:
            await client.aclose()


def test_only_the_operators_images_run_the_equipment() -> None:
    images = Images(generator="reg/gen:1", mock="reg/mock:1", allowed=frozenset({"reg/gen:2"}))
    assert images.refused("spec.generators.image", None) is None
    assert images.refused("spec.generators.image", "reg/gen:1") is None
    assert images.refused("spec.generators.image", "reg/gen:2") is None
    refusal = images.refused("spec.generators.image", "evil/miner:latest")
    assert refusal is not None
    assert refusal.startswith("spec.generators.image: image 'evil/miner:latest'")
    assert "PLIMSOLL_ALLOWED_IMAGES" in refusal


async def test_a_foreign_generator_image_stops_the_start_before_anything_is_made(
    api: tuple[FakeCluster, KubeClient],
) -> None:
    emulator, client = api
    platform = KubernetesPlatform(client, RUN, KubernetesOptions(images=Images()))
    refused = spec(generators={"image": "evil/miner:1"})
    with pytest.raises(PlatformError, match=r"spec\.generators\.image: image 'evil/miner:1'"):
        await platform.start(refused, [refused])
    assert emulator.namespaces == {}


async def test_a_foreign_image_on_a_named_mock_stops_the_start_too(
    api: tuple[FakeCluster, KubeClient],
) -> None:
    emulator, client = api
    platform = KubernetesPlatform(client, RUN, KubernetesOptions(images=Images()))
    named = [{"name": "auth", "envVar": "AUTH_URL", "image": "evil/miner:1"}]
    refused = spec(upstreams=named)
    with pytest.raises(PlatformError, match=r"spec\.upstreams\[0\]\.image: image 'evil/miner:1'"):
        await platform.start(refused, [refused])
    assert emulator.namespaces == {}


async def test_an_adopted_namespace_gets_its_pod_security_labels_back(
    api: tuple[FakeCluster, KubeClient],
) -> None:
    emulator, client = api
    relaxed = {**RUN.labels(), "pod-security.kubernetes.io/enforce": "privileged"}
    await client.create(
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": RUN.namespace, "labels": relaxed},
        }
    )
    platform = KubernetesPlatform(client, RUN, KubernetesOptions())
    await platform._namespace()
    labels = emulator.namespaces[RUN.namespace]["metadata"]["labels"]
    for key, value in PSS_LABELS.items():
        assert labels[key] == value


def _owner(uid: str) -> dict[str, object]:
    return {
        "apiVersion": "plimsoll.dev/v1alpha1",
        "kind": "CapacityTest",
        "metadata": {"name": "t", "namespace": "perf", "uid": uid},
    }


def _report() -> RunReport:
    from datetime import UTC, datetime

    return RunReport(
        test_name="t", spec=spec(), started_at=datetime.now(UTC), platform="kubernetes"
    )


async def test_the_report_never_overwrites_a_configmap_it_does_not_own(
    api: tuple[FakeCluster, KubeClient],
) -> None:
    emulator, client = api
    theirs = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "t-report", "namespace": "perf"},
        "data": {"keep": "me"},
    }
    await client.create(theirs)
    with pytest.raises(ReportNotWrittenError, match="not owned by this CapacityTest"):
        await write_report_config_map(client, _owner("uid-1"), _report())
    [(_, _, kept)] = [c for c in emulator.live("configmaps") if c[1] == "t-report"]
    assert kept["data"] == {"keep": "me"}


async def test_the_report_is_rewritten_in_its_own_configmap(
    api: tuple[FakeCluster, KubeClient],
) -> None:
    emulator, client = api
    assert await write_report_config_map(client, _owner("uid-1"), _report()) == "t-report"
    assert await write_report_config_map(client, _owner("uid-1"), _report()) == "t-report"
    [(_, _, ours)] = [c for c in emulator.live("configmaps") if c[1] == "t-report"]
    assert "report.json" in ours["data"]


async def test_an_oversized_generator_answer_is_refused_not_held() -> None:
    huge = b'{"id": "' + b"x" * (MAX_ANSWER_BYTES + 1024) + b'"}'

    async def answer(_: aiohttp.web.Request) -> aiohttp.web.Response:
        return aiohttp.web.Response(body=huge, status=202, content_type="application/json")

    app = aiohttp.web.Application()
    app.router.add_post("/trials", answer)
    runner = aiohttp.web.AppRunner(app, access_log=None)
    await runner.setup()
    await aiohttp.web.TCPSite(runner, "127.0.0.1", 0).start()
    port = runner.addresses[0][1]
    request = TrialRequest.model_validate(
        {
            "level": 1,
            "duration": 1,
            "targetUrl": "http://127.0.0.1:9",
            "workload": {"mix": [{"name": "a"}]},
        }
    )
    try:
        with pytest.raises(TrialFailedError, match="larger than 32 MiB"):
            await run_trial([f"http://127.0.0.1:{port}"], request, level=1)
    finally:
        await runner.cleanup()


async def test_a_prometheus_url_outside_the_operators_list_stops_the_start(
    api: tuple[FakeCluster, KubeClient],
) -> None:
    emulator, client = api
    options = KubernetesOptions(prometheus_url="http://prometheus.monitoring:9090")
    platform = KubernetesPlatform(client, RUN, options)
    metadata = {"prometheusUrl": "http://169.254.169.254/latest/meta-data/#"}
    refused = spec(metrics=metadata)
    with pytest.raises(
        PlatformError, match=r"spec\.metrics\.prometheusUrl: .* is not a Prometheus"
    ):
        await platform.start(refused, [refused])
    assert emulator.namespaces == {}


async def test_bounds_and_policies_come_before_any_pod(
    api: tuple[FakeCluster, KubeClient],
) -> None:
    emulator, client = api
    options = KubernetesOptions(ready_timeout=0.5, poll=0.1)  # no kubelet: nothing gets ready
    plain = spec()
    with pytest.raises(PlatformError):
        await KubernetesPlatform(client, RUN, options).start(plain, [plain])
    # Each write's kind: a create posts to the collection, an apply patches the object.
    created = [
        path.split("/")[-1 if method == "POST" else -2]
        for method, path, _, _ in emulator.calls
        if method in ("POST", "PATCH")
    ]
    first_pod = created.index("pods")
    assert set(created[:first_pod]) >= {"limitranges", "resourcequotas", "networkpolicies"}
    assert created[:4] == ["namespaces", "limitranges", "resourcequotas", "networkpolicies"]
    policies = {p[1] for p in emulator.live("networkpolicies")}
    assert policies == {"run-egress", "run-ingress", "generators-egress", "generators-ingress"}


async def test_a_target_url_at_the_api_server_stops_the_start_before_anything_is_made(
    api: tuple[FakeCluster, KubeClient],
) -> None:
    emulator, client = api  # the emulator's own address is the API server's
    platform = KubernetesPlatform(client, RUN, KubernetesOptions())
    host = client.server.split("://", 1)[1]
    refused = spec(target={"url": f"http://{host}/api/v1/secrets"})
    with pytest.raises(PlatformError, match=r"spec\.target\.url: .* is the cluster's API server"):
        await platform.start(refused, [refused])
    assert emulator.namespaces == {}


async def test_a_target_host_name_resolving_to_metadata_stops_the_start(
    api: tuple[FakeCluster, KubeClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    emulator, client = api

    async def resolved(url: str | None) -> list[str]:
        assert url == "http://shop.example.com:8080/"
        return ["10.0.3.4", "169.254.169.254"]  # one bad answer is enough

    monkeypatch.setattr(admission, "resolved", resolved)
    refused = spec(target={"url": "http://shop.example.com:8080/"})
    platform = KubernetesPlatform(client, RUN, KubernetesOptions())
    with pytest.raises(
        PlatformError,
        match=r"spec\.target\.url: 'shop\.example\.com' resolves to 169\.254\.169\.254, which is "
        "a link-local address",
    ):
        await platform.start(refused, [refused])
    assert emulator.namespaces == {}


async def test_from_deployment_reads_the_crs_own_namespace_and_refuses_before_making_anything(
    api: tuple[FakeCluster, KubeClient],
) -> None:
    """A missing Deployment, or one whose container cannot be copied safely (a host path
    volume), stops the start naming it, before the run's namespace exists."""
    emulator, client = api
    wanted = spec(
        target={"fromDeployment": {"name": "api"}, "resources": {"cpu": "1", "memory": "512Mi"}}
    )
    platform = KubernetesPlatform(client, RUN, KubernetesOptions())
    with pytest.raises(PlatformError, match=r"no deployment 'api' in perf"):
        await platform.start(wanted, [wanted])
    container = {"name": "app", "image": "shop/api:1", "volumeMounts": [{"name": "d"}]}
    volumes = [{"name": "d", "hostPath": {"path": "/var/run"}}]
    await client.create(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "api", "namespace": RUN.owner_namespace},
            "spec": {"template": {"spec": {"containers": [container], "volumes": volumes}}},
        }
    )
    with pytest.raises(PlatformError, match=r"container app: volumes are not copied"):
        await platform.start(wanted, [wanted])
    assert emulator.namespaces == {}
    reads = {(method, path) for method, path, _, _ in emulator.calls if "deployments" in path}
    reads.discard(("POST", "/apis/apps/v1/namespaces/perf/deployments"))  # the test's own
    assert reads == {("GET", "/apis/apps/v1/namespaces/perf/deployments/api")}  # by name
