"""What the Kubernetes platform refuses before it creates anything: a Prometheus the
operator does not allow, a target URL it may not reach (its host name resolved here, as
the operator sees it), images a spec may not name, a model not built here, a run past
the admin's limits. The supervisor refuses all but the resolution earlier, into
`SpecValid` (`plimsoll.kube.run_policy`); the platform asks again at start, so nothing
from a CR reaches a pod unchecked whoever builds the platform. Each check is one rule,
written once (`plimsoll.decide`, `run_policy`)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from urllib.parse import urlsplit

from plimsoll.api.spec import CapacityTestSpec
from plimsoll.decide.metrics_policy import metrics_problems
from plimsoll.decide.run_budget import run_budget
from plimsoll.decide.run_limits import budget_problems
from plimsoll.decide.target_policy import (
    external_target_problem,
    is_address,
    target_host,
    target_url_problem,
)
from plimsoll.kube import manifests
from plimsoll.kube.run_policy import flight_not_built, image_problems, replay_not_built
from plimsoll.platforms.kubernetes.options import KubernetesOptions

# How long the target's host name may take to resolve before the check leaves it to the
# generators' own check at each trial.
_RESOLVE_TIMEOUT = 5.0


def api_server_hosts(server: str) -> set[str]:
    """The API server as the operator reaches it (`server`), and as pods do (its
    Service's IP)."""
    hosts = {urlsplit(server).hostname or ""}
    hosts.add(os.environ.get("KUBERNETES_SERVICE_HOST", ""))
    return hosts - {""}


async def resolved(url: str | None) -> list[str]:
    """The addresses `url`'s host name resolves to, as the operator's resolver sees them;
    [] for an IP literal or a name it cannot resolve (an operator outside the cluster does
    not see the cluster's DNS: the generators check again at each trial)."""
    host = target_host(url) if url is not None else None
    return await resolve_host(host) if host is not None else []


async def resolve_host(host: str) -> list[str]:
    """`host`'s addresses as the operator's resolver sees them, within a few seconds; []
    for an IP literal or a name it cannot resolve. Also asked for a webhook's host
    (`plimsoll.controller.notify`): one resolver, one timeout."""
    if is_address(host):
        return []
    try:
        infos = await asyncio.wait_for(
            asyncio.get_running_loop().getaddrinfo(host, None), _RESOLVE_TIMEOUT
        )
    except (OSError, UnicodeError, TimeoutError):
        return []
    return sorted({str(info[4][0]) for info in infos})


async def start_problems(
    spec: CapacityTestSpec, options: KubernetesOptions, api_hosts: set[str]
) -> list[str]:
    """Why the platform will not start `spec`, each naming the field and the fix; [] if
    nothing stands in the way."""
    allowed = {*options.allowed_prometheus}
    if options.prometheus_url:
        allowed.add(options.prometheus_url)
    problems = [
        *metrics_problems(spec, allowed),
        target_url_problem(
            spec.target.url,
            api_hosts,
            options.allowed_target_hosts,
            await resolved(spec.target.url),
        )
        or external_target_problem(
            spec.target.url, options.external_targets, options.allowed_target_hosts
        ),
        *image_problems(spec, options.images),
        replay_not_built(spec),
        flight_not_built(spec),
    ]
    return [problem for problem in problems if problem]


def budget_problem(
    every_variant: Sequence[CapacityTestSpec], options: KubernetesOptions
) -> str | None:
    """Why the run's quota, sized for `every_variant`, would pass the admin's limits."""
    budget = run_budget(every_variant, manifests.KNOWN_SHAPES)
    return "; ".join(budget_problems(budget, options.limits)) or None
