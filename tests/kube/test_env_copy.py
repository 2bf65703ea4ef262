"""`valueFrom` references copied into the run's `run-env` Secret, against kmock's emulated
API server: only consenting objects, values never decoded nor quoted, pods reading the copy."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import Any

import kmock
import pytest

from plimsoll.api.env_source import CONSENT_LABEL
from plimsoll.kube import manifests, names
from plimsoll.kube.client import KubeClient
from plimsoll.kube.env_copy import ValueSourceError, copy_references
from tests.api.test_env_source import CONFIG, SECRET, load
from tests.controller.fake_cluster import FakeCluster
from tests.kube.test_manifests import RUN

PASSWORD = "correct horse battery staple"
CONSENT = {CONSENT_LABEL: "true"}


@pytest.fixture
async def client() -> AsyncIterator[KubeClient]:
    async with FakeCluster() as emulator, kmock.Server(emulator) as server:
        api = KubeClient(str(server.url).rstrip("/"))
        try:
            yield api
        finally:
            await api.aclose()


async def put(
    client: KubeClient, kind: str, name: str, labels: dict[str, str], **body: Any
) -> None:
    meta = {"name": name, "namespace": RUN.owner_namespace, "labels": labels}
    await client.create({"apiVersion": "v1", "kind": kind, "metadata": meta, **body})


async def test_consenting_keys_are_copied_and_the_pods_read_the_copy(client: KubeClient) -> None:
    encoded = base64.b64encode(PASSWORD.encode()).decode()
    await put(client, "Secret", "db", CONSENT, data={"password": encoded})
    await put(client, "ConfigMap", "app-config", CONSENT, data={"mode": "fast"})
    service = {"name": "cache", "image": "valkey:8", "port": 6379, "valueFrom": {"PW": SECRET}}
    spec = load({"valueFrom": {"DB_PASSWORD": SECRET, "MODE": CONFIG}}, services=[service])
    data = await copy_references(client, RUN, spec, None)
    assert data == {
        "target.DB_PASSWORD": encoded,  # the API server's base64, as it was
        "target.MODE": base64.b64encode(b"fast").decode(),
        "service-cache.PW": encoded,
    }
    secret = manifests.run_env_secret(RUN, data)
    assert secret["metadata"]["namespace"] == RUN.namespace
    target_env = {
        e["name"]: e for e in manifests.target_pod(RUN, spec)["spec"]["containers"][0]["env"]
    }
    assert target_env["DB_PASSWORD"]["valueFrom"] == {
        "secretKeyRef": {"name": names.RUN_ENV_SECRET, "key": "target.DB_PASSWORD"}
    }
    [cache] = manifests.dependency_pod(RUN, spec.services[0])["spec"]["containers"]
    assert {
        "name": "PW",
        "valueFrom": {"secretKeyRef": {"name": "run-env", "key": "service-cache.PW"}},
    } in cache["env"]
    setup_spec = load(
        {"valueFrom": {"DB_PASSWORD": SECRET}, "setup": [{"name": "seed", "command": ["seed"]}]}
    )
    job = manifests.setup_job(RUN, setup_spec.target.setup[0], setup_spec)
    [seeder] = job["spec"]["template"]["spec"]["containers"]
    assert target_env["DB_PASSWORD"] in seeder["env"]  # setup seeds with the same credentials
    everything = str(
        [manifests.target_pod(RUN, spec), manifests.dependency_pod(RUN, spec.services[0])]
    )
    assert PASSWORD not in everything
    assert encoded not in everything


async def test_an_object_without_the_consent_label_is_refused_naming_field_and_fix(
    client: KubeClient,
) -> None:
    encoded = base64.b64encode(PASSWORD.encode()).decode()
    await put(client, "Secret", "db", {}, data={"password": encoded})
    with pytest.raises(ValueSourceError) as refused:
        await copy_references(client, RUN, load({"valueFrom": {"DB_PASSWORD": SECRET}}), None)
    message = str(refused.value)
    assert message.startswith(f"spec.target.valueFrom.DB_PASSWORD: Secret {RUN.owner_namespace}/db")
    assert f"kubectl label secret db -n {RUN.owner_namespace} {CONSENT_LABEL}=true" in message
    assert encoded not in message


async def test_a_missing_object_or_key_is_named_without_any_value(client: KubeClient) -> None:
    spec = load({"valueFrom": {"DB_PASSWORD": SECRET}})
    with pytest.raises(ValueSourceError, match="Secret default/db does not exist"):
        await copy_references(client, RUN, spec, None)
    encoded = base64.b64encode(PASSWORD.encode()).decode()
    await put(client, "Secret", "db", CONSENT, data={"user": encoded})
    with pytest.raises(ValueSourceError, match="has no key 'password'") as missing:
        await copy_references(client, RUN, spec, None)
    assert encoded not in str(missing.value)


async def test_nothing_referenced_reads_nothing(client: KubeClient) -> None:
    assert await copy_references(client, RUN, load({}), None) == {}
