"""What a Kubernetes API call can fail with, and whether it is worth trying again.

`plimsoll.kube.client` translates every `ApiException` and urllib3 fault of the
official kubernetes client into one of these at the boundary, so callers never see
the client's own types. The retry decision
lives in the type (kopf's rule): a `TemporaryKubeError` carries the delay to wait
(the server's Retry-After when it sent one); every other `KubeError` is
permanent and is raised to the caller at once.
"""

from __future__ import annotations


class KubeError(RuntimeError):
    """The API server refused a request (status 0: it could not be reached)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"Kubernetes API answered {status}: {message}")
        self.status = status
        self.message = message


class NotFoundError(KubeError):
    pass


class ConflictError(KubeError):
    """409: on a create, the object already exists (the caller adopts it)."""


class UnauthorizedError(KubeError):
    """401: the credentials were refused, even after fresh ones were taken."""


class TemporaryKubeError(KubeError):
    """A fault that passes: 429, 5xx, a refused or reset connection, a timeout.

    `delay` is how long the server asked us to wait (Retry-After), or None to
    let the retry policy's backoff decide.
    """

    def __init__(self, status: int, message: str, delay: float | None = None) -> None:
        super().__init__(status, message)
        self.delay = delay
