"""A local relay to pods through the API server's pod proxy, for an operator outside the cluster.

When `plimsoll operator` runs on a laptop with a kubeconfig (as `kopf run` does),
pod IPs are not routable from it. The Kubernetes platform then starts this relay
on 127.0.0.1 and hands the runner URLs such as
`http://127.0.0.1:PORT/<namespace>/<pod>/<port>`; each request is forwarded to
`/api/v1/namespaces/<ns>/pods/<pod>:<port>/proxy/...` with the operator's own
credentials, like `kubectl proxy` does. The runner's trial client stays a plain
HTTP client that knows nothing of the API server. The pod's answers, and the
API server's own refusals (404 for no such pod, 503 when it cannot reach it),
pass through unchanged; an API server that cannot be reached at all is a 502.

The relay holds the operator's credentials, so it is locked (issue 52): any local
process could otherwise reach the whole API through it. Each relay makes a random
token; the URLs it hands out carry it as their user info
(`http://plimsoll:TOKEN@127.0.0.1:PORT/...`, which the runner's HTTP client sends as
Basic auth and which every status, Event and report redacts), and a request without
it is a 401. It forwards only to the (namespace, pod, port) it handed a URL for, and
the API path is built from the parsed, checked parts (`plimsoll.kube.proxy_path`):
`..` and encoded slashes are a 400 and never reach the API server.
"""

from __future__ import annotations

import base64
import hmac
import secrets
from urllib.parse import urlencode

import aiohttp.web

from plimsoll.kube.client import KubeClient, TemporaryKubeError
from plimsoll.kube.proxy_path import ProxyPathError, ProxyTarget, parse_proxy_path

USER = "plimsoll"

_HOP_HEADERS = {"host", "connection", "content-length", "transfer-encoding", "authorization"}


class PodProxyRelay:
    def __init__(self, client: KubeClient, host: str = "127.0.0.1") -> None:
        self._client = client
        self._host = host
        self._runner: aiohttp.web.AppRunner | None = None
        self.port = 0
        self._token = secrets.token_urlsafe(32)
        credentials = base64.b64encode(f"{USER}:{self._token}".encode()).decode()
        self._expected = f"Basic {credentials}".encode()
        self._served: set[tuple[str, str, int]] = set()

    def url_for(self, namespace: str, pod: str, port: int) -> str:
        """The URL of one pod's port through the relay, its token included; only the
        pods named here are served."""
        target = parse_proxy_path(f"/{namespace}/{pod}/{port}/")
        self._served.add((target.namespace, target.pod, target.port))
        return f"http://{USER}:{self._token}@{self._host}:{self.port}/{namespace}/{pod}/{port}"

    async def start(self) -> None:
        app = aiohttp.web.Application()
        app.router.add_route("*", "/{tail:.*}", self._relay)
        self._runner = aiohttp.web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = aiohttp.web.TCPSite(self._runner, self._host, 0)
        await site.start()
        self.port = int(self._runner.addresses[0][1])

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def _refusal(self, request: aiohttp.web.Request) -> aiohttp.web.Response | ProxyTarget:
        given = request.headers.get("Authorization", "").encode()
        if not hmac.compare_digest(given, self._expected):
            return aiohttp.web.Response(
                status=401,
                text="the relay's token is required",
                headers={"WWW-Authenticate": 'Basic realm="plimsoll-relay"'},
            )
        try:
            target = parse_proxy_path(request.raw_path.split("?", 1)[0])
        except ProxyPathError as exc:
            return aiohttp.web.Response(status=400, text=str(exc))
        if (target.namespace, target.pod, target.port) not in self._served:
            return aiohttp.web.Response(status=404, text="not a pod this relay serves")
        return target

    async def _relay(self, request: aiohttp.web.Request) -> aiohttp.web.Response:
        target = self._refusal(request)
        if isinstance(target, aiohttp.web.Response):
            return target
        rest = target.api_path().split("/proxy/", 1)[1]
        if request.query:
            rest += "?" + urlencode(list(request.query.items()))
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP_HEADERS}
        try:
            upstream = await self._client.proxy(
                request.method,
                target.namespace,
                target.pod,
                target.port,
                rest,
                await request.read(),
                headers,
            )
        except TemporaryKubeError as exc:
            # The caller (the trial client) reports this text: say which hop failed.
            message = f"API server {self._client.server} unreachable: {exc.message}"
            return aiohttp.web.Response(status=502, text=message)
        return aiohttp.web.Response(
            status=upstream.status,
            body=upstream.body,
            headers={"Content-Type": upstream.content_type},
        )
