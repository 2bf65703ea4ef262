"""An object a field names is read only with its owner's consent, against kmock's emulated
API server: the label, a missing object and an unlabelled one, each refusal naming the
field, the object and the fix, and never a value."""

from __future__ import annotations

import base64

import pytest

from plimsoll.api.env_source import CONSENT_LABEL
from plimsoll.kube.client import CONFIG_MAPS, SECRETS, KubeClient
from plimsoll.kube.consented import UnreadableSourceError, read_consented
from tests.kube.test_env_copy import CONSENT, PASSWORD, client, put
from tests.kube.test_manifests import RUN

__all__ = ["client"]  # the fixture, shared with test_env_copy

NAMESPACE = RUN.owner_namespace
WHAT = "spec.notify[0].urlFrom: Secret"


async def test_a_labelled_object_is_read_whole(client: KubeClient) -> None:
    encoded = base64.b64encode(PASSWORD.encode()).decode()
    await put(client, "Secret", "hook", CONSENT, data={"url": encoded})
    found = await read_consented(client, SECRETS, NAMESPACE, "hook", WHAT)
    assert found["data"] == {"url": encoded}


async def test_a_missing_object_names_where_to_create_it(client: KubeClient) -> None:
    with pytest.raises(UnreadableSourceError) as refused:
        await read_consented(client, CONFIG_MAPS, NAMESPACE, "absent", WHAT)
    assert str(refused.value) == f"{WHAT} does not exist: create it in {NAMESPACE}"


async def test_an_unlabelled_object_is_refused_with_the_command_that_consents(
    client: KubeClient,
) -> None:
    encoded = base64.b64encode(PASSWORD.encode()).decode()
    await put(client, "Secret", "hook", {}, data={"url": encoded})
    with pytest.raises(UnreadableSourceError) as refused:
        await read_consented(client, SECRETS, NAMESPACE, "hook", WHAT)
    message = str(refused.value)
    assert message.startswith(f"{WHAT} is not labelled {CONSENT_LABEL}=true")
    assert f"`kubectl label secret hook -n {NAMESPACE} {CONSENT_LABEL}=true`" in message
    assert PASSWORD not in message
    assert encoded not in message
