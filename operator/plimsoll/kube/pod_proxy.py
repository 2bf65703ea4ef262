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
"""

from __future__ import annotations

import aiohttp.web

from plimsoll.kube.client import KubeClient, TemporaryKubeError

_HOP_HEADERS = {"host", "connection", "content-length", "transfer-encoding", "authorization"}


class PodProxyRelay:
    def __init__(self, client: KubeClient, host: str = "127.0.0.1") -> None:
        self._client = client
        self._host = host
        self._runner: aiohttp.web.AppRunner | None = None
        self.port = 0

    def url_for(self, namespace: str, pod: str, port: int) -> str:
        return f"http://{self._host}:{self.port}/{namespace}/{pod}/{port}"

    async def start(self) -> None:
        app = aiohttp.web.Application()
        app.router.add_route("*", "/{namespace}/{pod}/{port:\\d+}/{rest:.*}", self._relay)
        self._runner = aiohttp.web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = aiohttp.web.TCPSite(self._runner, self._host, 0)
        await site.start()
        self.port = int(self._runner.addresses[0][1])

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _relay(self, request: aiohttp.web.Request) -> aiohttp.web.Response:
        info = request.match_info
        rest = info["rest"] + (f"?{request.query_string}" if request.query_string else "")
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP_HEADERS}
        try:
            upstream = await self._client.proxy(
                request.method,
                info["namespace"],
                info["pod"],
                int(info["port"]),
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
