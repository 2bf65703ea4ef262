"""The spec's rules across fields: what must fit together between the load, the mocks,
the bar, the shapes, a proof and its faults. Each names the field and the fix; the spec's
own validator (`CapacityTestSpec._cross_field`) gathers them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from plimsoll.api.pass_when import PassWhen
from plimsoll.api.search_spec import Strategy, Trial
from plimsoll.api.sizing import SizingSpec
from plimsoll.api.target import Target
from plimsoll.api.unique import duplicate_problems
from plimsoll.api.upstream import NamedUpstream, Upstream
from plimsoll.api.workload import LoadModel, Workload

if TYPE_CHECKING:
    from plimsoll.api.spec import CapacityTestSpec


def workload_problems(workload: Workload, upstream: Upstream, pass_when: PassWhen) -> list[str]:
    """What does not fit together between the load, the mock and the bar."""
    problems = []
    ops = {op.name for op in workload.mix}
    for bound in pass_when.latency:
        if bound.operation != "*" and bound.operation not in ops:
            problems.append(
                f"passWhen.latency names operation {bound.operation!r}, "
                f"which is not in workload.mix ({sorted(ops)})"
            )
    needs_users = workload.users is None and workload.conversation is None
    if workload.model is LoadModel.USERS and needs_users:
        problems.append("workload model 'users' needs 'users' or 'conversation'")
    tools = {t.name for t in upstream.mcp.tools} if upstream.mcp else set()
    for op in workload.mix:
        if op.tool is not None and op.tool not in tools:
            problems.append(
                f"workload.mix operation {op.name!r} calls tool {op.tool!r}, which "
                f"upstream.mcp.tools does not list ({sorted(tools)})"
            )
    return problems


def upstreams_problems(upstreams: list[NamedUpstream], target: Target) -> list[str]:
    """Named mocks need names of their own and variables nothing else sets."""
    problems = []
    problems.extend(duplicate_problems([u.name for u in upstreams], "upstreams", "mock"))
    taken = {target.upstream_env: "target.upstreamEnv (the default mock's URL)"}
    if target.port_env:
        taken[target.port_env] = "target.portEnv"
    for key in target.env:
        taken.setdefault(key, "target.env")
    for index, upstream in enumerate(upstreams):
        owner = taken.get(upstream.env_var)
        if owner is not None:
            problems.append(
                f"upstreams[{index}].envVar: {upstream.env_var} is already set by {owner}: "
                "pick another variable for this mock's URL"
            )
        taken[upstream.env_var] = f"upstreams[{index}] ({upstream.name})"
    return problems


def check_sizing_names(sizing: SizingSpec, variants: list[str], extra: list[str]) -> None:
    """`sizing.variant` and the store's `*Metric` fields must name what the spec holds: a
    plan from a variant or a metric that does not exist would fail only after the run."""
    if sizing.variant is not None and sizing.variant not in variants:
        raise ValueError(
            f"sizing.variant: {sizing.variant!r} names no variant; the variants are "
            f"{variants or '(none)'}"
        )
    store = sizing.store
    if store is None:
        return
    for field, name in (
        ("callsMetric", store.calls_metric),
        ("cpuPerCallMetric", store.cpu_per_call_metric),
        ("bytesPerKeyMetric", store.bytes_per_key_metric),
    ):
        if name is not None and name not in extra:
            raise ValueError(
                f"sizing.store.{field}: {name!r} names no metrics.extra entry; the extra "
                f"metrics are {extra or '(none)'}"
            )


def check_shapes(spec: CapacityTestSpec) -> None:
    """`shapes` replaces `variants` (each shape is a variant of target.resources alone), needs
    a target Plimsoll starts, and a search must contain the shape it starts from."""
    shapes = spec.shapes
    if shapes is None:
        return
    if spec.variants:
        raise ValueError(
            "shapes and variants: give one of them; each shape is already a variant that "
            "changes only target.resources (compare other changes in a run of their own)"
        )
    if spec.target.url is not None:
        raise ValueError(
            "shapes: target.url drives a service that already runs, whose shape Plimsoll "
            "cannot change; give target.image or target.command"
        )
    search = shapes.search
    start = spec.target.resources
    if search is not None and start is not None:
        if not search.cpu.min <= start.cpu <= search.cpu.max:
            raise ValueError(
                "shapes.search.cpu: the search starts from target.resources.cpu, which lies "
                "outside min … max: widen the range or change target.resources"
            )
        if not search.memory.min <= start.memory <= search.memory.max:
            raise ValueError(
                "shapes.search.memory: the search starts from target.resources.memory, which "
                "lies outside min … max: widen the range or change target.resources"
            )


def proof_problems(spec: CapacityTestSpec) -> list[str]:
    """`search.fromSizing` plans the replicas, zones and CPU: it needs the plan's inputs and a
    target whose shape it can scale, and leaves the target's own replicas alone."""
    if not spec.search.from_sizing:
        return []
    where = "search.fromSizing"
    problems = []
    if spec.sizing is None:
        problems.append(f"{where}: needs spec.sizing (the plan to prove): add peak and zones")
    elif spec.sizing.per_pod is None:
        problems.append(
            f"{where}: needs spec.sizing.perPod, the per-pod ceiling an earlier run measured "
            "(a proof run measures none)"
        )
    if spec.target.url is not None or spec.target.resources is None:
        problems.append(
            f"{where}: needs a target Plimsoll starts with target.resources, whose CPU it "
            "scales by search.scale"
        )
    if spec.target.replicas != 1 or spec.target.zones:
        problems.append(
            f"{where}: the plan sets the replicas and zones: leave target.replicas and "
            "target.zones out"
        )
    return problems


def fault_problems(trial: Trial, target: Target) -> list[str]:
    """Each fault must leave a replica running and name a zone the target has."""
    problems = []
    for index, fault in enumerate(trial.faults):
        where = f"trial.faults[{index}]"
        if fault.kill is not None and fault.kill.replicas >= target.replicas:
            problems.append(
                f"{where}.kill.replicas: {fault.kill.replicas} of {target.replicas} "
                "replica(s) would leave none to carry the load: raise target.replicas or "
                "kill fewer"
            )
        if fault.remove is not None:
            zone = fault.remove.zone
            if zone not in target.zones:
                problems.append(
                    f"{where}.remove.zone: {zone!r} is not one of target.zones "
                    f"{target.zones or '(none)'}"
                )
            elif len(target.zones) < 2:
                problems.append(
                    f"{where}.remove.zone: with one zone, removing it leaves no replica: "
                    "add zones to target.zones"
                )
        if fault.restore is not None:
            zone = fault.restore.zone
            removed_before = any(
                f.remove is not None and f.remove.zone == zone and f.at < fault.at
                for f in trial.faults
            )
            if not removed_before:
                problems.append(
                    f"{where}.restore.zone: no earlier fault removes zone {zone!r}: add "
                    f"{{at: ..., remove: {{zone: {zone}}}}} before it, or leave the restore out"
                )
    return problems


def trigger_problems(spec: CapacityTestSpec) -> list[str]:
    """`trigger.onImageChange` watches the Deployment the target copies: a run started by
    another Deployment's new image would measure an image that did not change."""
    watched = spec.trigger.on_image_change if spec.trigger is not None else None
    if watched is None:
        return []
    copied = spec.target.from_deployment
    if copied is None:
        return [
            f"trigger.onImageChange: the run measures target.fromDeployment's image; set "
            f"target.fromDeployment: {{name: {watched.deployment}}}"
        ]
    if copied.name != watched.deployment:
        return [
            f"trigger.onImageChange.deployment: {watched.deployment!r} is not the Deployment "
            f"the target copies ({copied.name!r}): name the same one"
        ]
    return []


def contract_problems(spec: CapacityTestSpec) -> list[str]:
    """`contract.annotate` writes onto the Deployment the target copies: without one there
    is nothing to annotate, and a spec comparing variants proves no one shape of it."""
    if spec.contract is None or not spec.contract.annotate:
        return []
    if spec.target.from_deployment is None:
        return [
            "contract.annotate: the contract is written on the Deployment the target copies; "
            "set target.fromDeployment: {name: <deployment>}"
        ]
    if spec.compared_variants or spec.shapes is not None:
        return [
            "contract.annotate: a spec comparing variants or shapes proves no one shape of "
            "the Deployment; annotate from a CapacityTest without variants or shapes"
        ]
    return []


# A flight is at least this long and at most a trial's longest (issue 57).
SHORTEST_FLIGHT_S = 10.0
LONGEST_FLIGHT_S = 6 * 3600.0


def autoscale_problems(spec: CapacityTestSpec) -> list[str]:
    """A flight (`search.strategy: autoscale`) needs its three parts, and they belong to
    it alone: the target's autoscaler, the load profile, and how it is judged."""
    flight = spec.search.strategy is Strategy.AUTOSCALE
    target, workload = spec.target, spec.workload
    parts = {
        "target.autoscaler": target.autoscaler,
        "workload.profile": workload.profile,
        "autoscale": spec.autoscale,
    }
    if not flight:
        return [
            f"{name}: applies to search.strategy autoscale (a flight); set it, or leave {name} out"
            for name, part in parts.items()
            if part is not None
        ]
    problems = [
        f"search.strategy autoscale: needs {name}" for name, part in parts.items() if part is None
    ]
    if workload.model is not LoadModel.RATE:
        problems.append(
            "search.strategy autoscale: the profile drives the open model (workload.model "
            "rate); a flight of users or replay is not built yet"
        )
    if target.url is not None or target.resources is None:
        problems.append(
            "target.autoscaler: scales replicas Plimsoll starts and pins: give target.command "
            "and target.resources, not url"
        )
    if target.replicas != 1 or target.zones:
        problems.append(
            "target.autoscaler: it decides the replicas (minReplicas to maxReplicas): leave "
            "target.replicas and target.zones out"
        )
    if target.autoscaler is not None and target.autoscaler.max_replicas > 1 and not target.port_env:
        problems.append(
            "target.autoscaler: each replica needs a port of its own: set target.portEnv"
        )
    if spec.trial.faults:
        problems.append("trial.faults: a flight's replicas are the autoscaler's: leave faults out")
    if not any(
        b.operation == "*" and b.metric == "total" and b.quantile >= 0.99
        for b in spec.pass_when.latency
    ):
        problems.append(
            "passWhen.latency: a flight is judged by the seconds p99 spent over the bar: "
            "add a bound at p99, e.g. {quantile: 0.99, below: 300ms}"
        )
    if workload.profile is not None:
        seconds = sum(p.ramp + p.hold for p in workload.profile[1:]) + workload.profile[0].hold
        if not any(p.level > 0 for p in workload.profile):
            problems.append("workload.profile: every level is 0: give the load to fly")
        if not SHORTEST_FLIGHT_S <= seconds <= LONGEST_FLIGHT_S:
            problems.append(
                f"workload.profile: lasts {seconds:g} s; a flight lasts 10 s to 6 h (its "
                "phases' ramp and hold add up)"
            )
    return problems
