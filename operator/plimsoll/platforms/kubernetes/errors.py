"""The one place the Kubernetes platform turns what its helpers raise into `PlatformError`.

The helpers (`plimsoll.kube`: ownership, waits, grants, references; and the Deployment
copy's rules) each raise an error of their own that names what went wrong. The runner
knows one error from a platform, so the platform's public methods are wrapped at the
boundary (`translated`), as httpx maps httpcore's exceptions once, instead of each
call site catching and re-raising. A `KubeError` keeps the API server's own words; the
others' messages are already sentences for the user.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from typing import Any, ParamSpec, TypeVar

from plimsoll.decide.from_deployment import DeploymentCopyError
from plimsoll.kube.client import KubeError
from plimsoll.kube.env_copy import ValueSourceError
from plimsoll.kube.grants import GrantError
from plimsoll.kube.ownership import OwnershipError
from plimsoll.kube.wait import NotReadyError
from plimsoll.platforms.base import PlatformError

# What the helpers raise, each with a message that already says what and why.
_WORDED = (OwnershipError, NotReadyError, GrantError, ValueSourceError, DeploymentCopyError)

P = ParamSpec("P")
R = TypeVar("R")


@contextmanager
def platform_errors(doing: str = "") -> Iterator[None]:
    """Raise any helper's error inside as a `PlatformError`, prefixed with `doing` (what
    the platform was about, e.g. "cannot read deployment ns/api") when given."""
    try:
        yield
    except KubeError as exc:
        raise PlatformError(f"{doing}: {exc.message}" if doing else str(exc)) from exc
    except _WORDED as exc:
        raise PlatformError(f"{doing}: {exc}" if doing else str(exc)) from exc


def translated(
    method: Callable[P, Coroutine[Any, Any, R]],
) -> Callable[P, Coroutine[Any, Any, R]]:
    """An async method whose helpers' errors reach its caller as `PlatformError`."""

    @functools.wraps(method)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with platform_errors():
            return await method(*args, **kwargs)

    return wrapper
