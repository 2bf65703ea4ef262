"""The tests' own client for the real API server: plain JSON over httpx, as the admin.

The test kubelet (`real_kubelet.py`) and the tests use it to read and write any
object by path; the operator under test uses its own client and its own
(ServiceAccount) identity. Errors come back as `ApiError` with the server's
status code and message, so a test can assert what the server said.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from tests.controller.control_plane import ControlPlane

MERGE = {"Content-Type": "application/merge-patch+json"}
CT_PATH = "/apis/plimsoll.dev/v1alpha1/namespaces/{ns}/capacitytests"


class ApiError(RuntimeError):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code, self.message = code, message


class AdminApi:
    def __init__(self, plane: ControlPlane) -> None:
        ca, cert, key = plane.credentials()
        tls = ssl.create_default_context(cafile=str(ca))
        tls.load_cert_chain(str(cert), str(key))
        self.http = httpx.AsyncClient(base_url=plane.server, verify=tls, timeout=30)

    async def aclose(self) -> None:
        await self.http.aclose()

    async def call(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        response = await self.http.request(method, path, **kwargs)
        for _ in range(50):  # 429 "storage is (re)initializing": a new CRD's cache warms up
            if response.status_code != 429:
                break
            await asyncio.sleep(0.2)
            response = await self.http.request(method, path, **kwargs)
        if response.status_code >= 400:
            try:
                message = str(response.json().get("message"))
            except ValueError:
                message = response.text
            raise ApiError(response.status_code, message)
        return dict(response.json()) if response.content else {}

    async def get(self, path: str) -> dict[str, Any] | None:
        try:
            return await self.call("GET", path)
        except ApiError as exc:
            if exc.code == 404:
                return None
            raise

    async def items(self, path: str, **params: str) -> list[dict[str, Any]]:
        return list((await self.call("GET", path, params=params)).get("items", []))

    async def create(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        return await self.call("POST", path, json=body)

    async def patch(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        return await self.call("PATCH", path, json=body, headers=MERGE)

    async def delete(self, path: str, **params: str) -> None:
        try:
            await self.call("DELETE", path, params=params)
        except ApiError as exc:
            if exc.code != 404:
                raise


async def wait_for(check: Callable[[], Awaitable[Any]], limit: float, what: str) -> Any:
    """Poll an async `check` until it returns something truthy, which is returned."""
    deadline = asyncio.get_running_loop().time() + limit
    while asyncio.get_running_loop().time() < deadline:
        value = await check()
        if value:
            return value
        await asyncio.sleep(0.25)
    raise AssertionError(f"timed out after {limit}s waiting for {what}")
