"""One run's objects in its namespace, as the platform makes and waits for them: applied
or adopted (`plimsoll.kube.ownership`), made afresh, waited for until ready, and how the
runner reaches its generators (by pod IP, or through the API server's pod proxy).

Shared by the start (`platform`) and the started run (`started`), with the run's limits
and poll interval from the operator's options. Errors are the helpers' own: the
platform's public methods translate them once (`errors.translated`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from plimsoll.kube import names, ownership
from plimsoll.kube.client import KubeClient
from plimsoll.kube.names import RunIdentity
from plimsoll.kube.pod_proxy import PodProxyRelay
from plimsoll.kube.wait import wait_job_done, wait_pods_ready
from plimsoll.platforms.kubernetes.endpoints import host_literal
from plimsoll.platforms.kubernetes.options import KubernetesOptions


@dataclass
class RunObjects:
    client: KubeClient
    run: RunIdentity
    options: KubernetesOptions
    # Made at the first generator reached through the API server; stopped with the run.
    relay: PodProxyRelay | None = field(default=None, init=False)

    async def apply(self, body: dict[str, Any]) -> dict[str, Any]:
        """Apply `body`, creating it or adopting it if this run (and variant) made it."""
        return await ownership.apply_owned(
            self.client,
            self.run,
            body,
            limit=self.options.ready_timeout,
            poll=self.options.poll,
        )

    async def fresh(self, body: dict[str, Any], limit: float = 60.0) -> dict[str, Any]:
        """Create `body` anew, replacing one this run left behind: a generator left by an
        operator that was killed mid-trial may still be loading the target."""
        return await ownership.recreate(
            self.client,
            self.run,
            body,
            limit=limit,
            adopt_limit=self.options.ready_timeout,
            poll=self.options.poll,
        )

    async def ready(self, pod_names: list[str], limit: float) -> dict[str, dict[str, Any]]:
        """The pods by name once every one is ready."""
        return await wait_pods_ready(
            self.client, self.run.namespace, pod_names, limit, self.options.poll
        )

    async def job_done(self, name: str, limit: float) -> None:
        await wait_job_done(self.client, self.run.namespace, name, limit)

    async def generator_urls(self, generators: dict[str, dict[str, Any]]) -> list[str]:
        """How the runner reaches each generator: through the API server's pod proxy, or by
        pod IP."""
        if self.options.uses_proxy():
            if self.relay is None:
                self.relay = PodProxyRelay(self.client)
                await self.relay.start()
            relay, ns = self.relay, self.run.namespace
            return [relay.url_for(ns, name, names.GENERATOR_PORT) for name in generators]
        return [
            f"http://{host_literal(pod['status']['podIP'])}:{names.GENERATOR_PORT}"
            for pod in generators.values()
        ]

    async def close(self) -> None:
        """Stop the relay, if one was made."""
        if self.relay is not None:
            await self.relay.stop()
            self.relay = None
