"""The cluster's policy on a spec, beyond the model: one module, two entry points.

Who: the operator's supervisor (a spec past it ends in `SpecValid=False`, before
anything is created) and `plimsoll validate` (unless `--local`), so "valid" there
means the operator accepts it (issue 52). Why here: sizing a run as its namespace
quota will needs the operator's own pod shapes (`KNOWN_SHAPES`).

It holds: the admin's limits (`plimsoll.decide.run_limits`); the Prometheus servers a
CR may name and the scoping of its PromQL (`plimsoll.decide.metrics_policy`); and
`target.url` as written (`plimsoll.decide.target_policy`: link-local, metadata,
loopback and API server addresses); and what a `podTemplate` may place and label
(`plimsoll.decide.pod_template_policy`); the generator and mock images a CR may pick, when
the operator's own are known (`images`); and what the Kubernetes platform has not built
(replay's log has no volume there). What only the operator can know is checked where it
runs: the host name's resolution, at the run's start and per trial.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from plimsoll.api.resource import CapacityTest
from plimsoll.api.spec import CapacityTestSpec
from plimsoll.decide.metrics_policy import metrics_problems
from plimsoll.decide.pod_template_policy import TemplatePolicy, template_policy_problems
from plimsoll.decide.run_budget import run_budget
from plimsoll.decide.run_limits import RunLimits, limit_problems
from plimsoll.decide.target_policy import external_target_problem, target_url_problem
from plimsoll.kube.manifests import KNOWN_SHAPES
from plimsoll.kube.names import Images


@dataclass(frozen=True)
class ClusterPolicy:
    """What the chart's values set: `limits`, `prometheus.url` and `.allowedUrls`,
    `allowedTargetHosts`, `externalTargets`, `podTemplate`; and the API server's own
    hosts, when known."""

    limits: RunLimits = field(default_factory=RunLimits)
    prometheus_urls: Collection[str] = ()  # the operator's own and the allowed ones
    allowed_target_hosts: Collection[str] = ()
    external_targets: Collection[str] = ()  # where a target.url may point: none by default
    api_server_hosts: Collection[str] = ()
    pod_template: TemplatePolicy = field(default_factory=TemplatePolicy)
    # The operator's images and the others it allows; None: not known here (`plimsoll
    # validate` from the chart's values), and the operator checks them when it runs.
    images: Images | None = None


def policy_problems(test: CapacityTest, policy: ClusterPolicy) -> list[str]:
    """Every reason the operator would refuse this test, each naming its field or limit."""
    every_variant = list(test.spec.variant_specs().values())
    problems = limit_problems(every_variant, run_budget(every_variant, KNOWN_SHAPES), policy.limits)
    problems += metrics_problems(test.spec, policy.prometheus_urls)
    for view in every_variant:
        url = target_url_problem(
            view.target.url, policy.api_server_hosts, policy.allowed_target_hosts
        ) or external_target_problem(
            view.target.url, policy.external_targets, policy.allowed_target_hosts
        )
        if url is not None and url not in problems:
            problems.append(url)
        found = [
            *template_policy_problems(
                view.target.pod_template, policy.pod_template, "spec.target.podTemplate"
            ),
            *(image_problems(view, policy.images) if policy.images is not None else []),
            replay_not_built(view),
            flight_not_built(view),
        ]
        problems.extend(p for p in dict.fromkeys(found) if p and p not in problems)
    return problems


def image_problems(spec: CapacityTestSpec, images: Images) -> list[str]:
    """The generator and mock images `spec` picks that the operator does not run."""
    found = [
        images.refused("spec.generators.image", spec.generators.image),
        images.refused("spec.upstream.image", spec.upstream.image),
        *(
            images.refused(f"spec.upstreams[{i}].image", named.image)
            for i, named in enumerate(spec.upstreams)
        ),
    ]
    return [problem for problem in found if problem]


def replay_not_built(spec: CapacityTestSpec) -> str | None:
    """Replay reads its log from the generator's file system; on a cluster that needs the
    log in a volume of the generator pods, which is not built yet: said, not faked."""
    if spec.workload.replay is None:
        return None
    return (
        "workload.model 'replay' is not built yet on Kubernetes (the generator pods have no "
        "volume for workload.replay.log): run it with `plimsoll run` on the local platform"
    )


def flight_not_built(spec: CapacityTestSpec) -> str | None:
    """An autoscaler flight (issue 57) runs on a cluster with the target as a Deployment
    and `target.autoscaler` as its HPA, both made in the run's namespace; flying the HPA
    that already governs a `target.fromDeployment` Deployment is not built yet: said,
    not faked."""
    if spec.target.autoscaler is None or spec.target.from_deployment is None:
        return None
    return (
        "target.autoscaler with target.fromDeployment: flying the HPA that governs the "
        "Deployment is not built yet; copy its settings into target.autoscaler and give "
        "target.image instead of target.fromDeployment"
    )
