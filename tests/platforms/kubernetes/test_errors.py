"""The Kubernetes platform's one error translation: each helper's error reaches the runner
as a `PlatformError` with its words kept, and anything else passes through untouched (a
bug must stay a bug, not become a refusal)."""

from __future__ import annotations

import pytest

from plimsoll.decide.from_deployment import DeploymentCopyError
from plimsoll.kube.client import KubeError
from plimsoll.kube.env_copy import ValueSourceError
from plimsoll.kube.grants import GrantError
from plimsoll.kube.ownership import OwnershipError
from plimsoll.kube.wait import NotReadyError
from plimsoll.platforms.base import PlatformError
from plimsoll.platforms.kubernetes.errors import platform_errors, translated


@pytest.mark.parametrize(
    "error",
    [
        OwnershipError("Pod target is not this run's"),
        NotReadyError("pod target: ImagePullBackOff"),
        GrantError("the run role is not bound"),
        ValueSourceError("spec.target.env.A.valueFrom: no secret s"),
        DeploymentCopyError("spec.target.fromDeployment: a hostPath volume"),
    ],
)
def test_each_helpers_error_keeps_its_words(error: Exception) -> None:
    with pytest.raises(PlatformError) as raised, platform_errors():
        raise error
    assert str(raised.value) == str(error)
    assert raised.value.__cause__ is error


def test_the_api_servers_refusal_keeps_its_message_after_what_was_being_done() -> None:
    with pytest.raises(PlatformError) as raised, platform_errors("cannot read deployment a/b"):
        raise KubeError(403, 'deployments "b" is forbidden')
    assert str(raised.value) == 'cannot read deployment a/b: deployments "b" is forbidden'


def test_anything_else_passes_through() -> None:
    with pytest.raises(ZeroDivisionError), platform_errors():
        raise ZeroDivisionError


async def test_a_translated_method_raises_platform_error() -> None:
    class Piece:
        @translated
        async def start(self, name: str) -> str:
            if name == "bad":
                raise OwnershipError("Pod bad exists and is someone else's")
            return name

    assert await Piece().start("good") == "good"
    with pytest.raises(PlatformError, match="someone else's"):
        await Piece().start("bad")
