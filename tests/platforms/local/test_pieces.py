"""What the local platform starts for the target: a command, never an image or a
Deployment's copy, each refused naming what to give instead (before anything starts)."""

from __future__ import annotations

import pytest

from plimsoll.api.target import Target
from plimsoll.platforms.base import PlatformError
from plimsoll.platforms.local.pieces import target_command
from tests.localrun import short_cpu_test

SHAPE = {"cpu": "0.5", "memory": "128Mi"}


def _with_target(**target: object) -> object:
    spec = short_cpu_test().spec
    return spec.model_copy(update={"target": Target.model_validate({"resources": SHAPE, **target})})


def test_a_command_is_what_runs_with_its_args_and_env() -> None:
    spec = _with_target(command=["python", "app.py"], args=["--fast"], env={"A": "1"})
    assert target_command(spec) == (["python", "app.py", "--fast"], {"A": "1"})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("target", "words"),
    [
        ({"image": "shop/api:1"}, "the local platform runs commands, not images"),
        ({"fromDeployment": {"name": "api"}}, "target.fromDeployment copies the Deployment 'api'"),
    ],
)
def test_what_only_a_cluster_runs_is_refused_naming_what_to_give(
    target: dict[str, object], words: str
) -> None:
    with pytest.raises(PlatformError, match=r"(?i)give target\.command") as raised:
        target_command(_with_target(**target))  # type: ignore[arg-type]
    assert words in str(raised.value)
