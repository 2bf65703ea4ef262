"""The text of the spec `plimsoll init` writes: the minimal fields, each commented.

A user reads this file before anything else of Plimsoll's, so every value says where
it came from (the probe, a default) and the lines to change say CHANGE. The text is
checked by `plimsoll.api.resource.load_capacity_test` before it is written, so init
never leaves an invalid file behind. Values are written as JSON (a subset of YAML's
flow style), so a command or a URL needs no quoting rules of its own.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime

from plimsoll.cli.init_deployment import DeploymentSource
from plimsoll.decide.scaffold import BAR_FACTOR, BAR_FLOOR, ERROR_FRACTION, START_SHARE, Scaffold


@dataclass(frozen=True)
class Draft:
    """What the spec is written from: the service, how it was probed, and what it measured."""

    name: str
    invocation: str  # the init command line, for the header
    path: str  # the request the probe sent and the mix holds
    scaffold: Scaffold
    probe_seconds: float
    connections: int
    answered: int
    when: datetime
    statuses: list[int] = field(default_factory=lambda: [200])
    url: str | None = None  # an existing service
    command: list[str] | None = None  # or a service Plimsoll starts and pins
    image: str | None = None  # or an image a cluster runs, pinned in a pod of the run's
    port: int = 8080
    port_env: str | None = None
    cpu: str = "1"
    memory: str = "512Mi"
    deployment: DeploymentSource | None = None  # or a Deployment the operator copies
    probed_url: str | None = None  # with a Deployment or an image: where the probe went


def _ms(seconds: float) -> str:
    ms = seconds * 1000
    return f"{ms:.0f} ms" if ms >= 10 else f"{ms:.2g} ms"


def _duration(seconds: float) -> str:
    ms = round(seconds * 1000)
    return f"{ms // 1000}s" if ms % 1000 == 0 else f"{ms}ms"


def _j(value: object) -> str:
    return json.dumps(value)


def _target(draft: Draft) -> list[str]:
    source = draft.deployment
    if source is not None:
        shape = (
            "the container's own limits (else requests): the shape production runs"
            if source.shape_from_cluster
            else "CHANGE: the container sets none; --cpu/--memory gave this"
        )
        return [
            "  target:",
            f"    # Copied from deployment {source.namespace}/{source.name} when the run starts",
            "    # (image, command, env, port, readiness path), in a namespace of the run's",
            "    # own, pinned to `resources` (requests == limits).",
            f"    fromDeployment: {{name: {_j(source.name)}, container: {_j(source.container)}}}",
            f"    resources: {{cpu: {_j(source.cpu)}, memory: {_j(source.memory)}}}   # {shape}",
        ]
    if draft.image is not None:
        return _image_target(draft)
    if draft.url is not None:
        return [
            "  target:",
            "    # An existing service: Plimsoll drives it and neither starts nor pins it, so",
            "    # the ceiling is that of the service as it runs now. For the ceiling of a pod",
            "    # shape, let Plimsoll start it pinned: `plimsoll init --command ...`.",
            f"    url: {_j(draft.url)}",
        ]
    assert draft.command is not None
    return _command_target(draft)


def _port_lines(draft: Draft) -> list[str]:
    if draft.port_env is not None:
        return [f"    portEnv: {_j(draft.port_env)}    # Plimsoll picks a free port, passed here"]
    # the field's default is PORT: a service with a port of its own must say so
    return ["    portEnv: null                # it listens on `port` itself"]


def _shape_line(draft: Draft) -> str:
    return (
        f"    resources: {{cpu: {_j(draft.cpu)}, memory: {_j(draft.memory)}}}"
        "   # CHANGE: the pod shape to find the ceiling of (requests == limits)"
    )


def _pinned_target(draft: Draft, why: tuple[str, str], source: str, port_note: str) -> list[str]:
    """A target Plimsoll runs pinned to `resources`: from an image (a cluster's pod) or a
    command (local cgroups); `why` is the two comment lines that say which."""
    return [
        "  target:",
        *(f"    # {line}" for line in why),
        source,
        f"    port: {draft.port}" + port_note,
        *_port_lines(draft),
        f"    readinessPath: {_j(draft.path)}    # ready once this answers",
        _shape_line(draft),
    ]


def _image_target(draft: Draft) -> list[str]:
    why = (
        "Run by the operator in a pod of the run's own namespace, pinned to `resources`",
        "(requests == limits); the cluster's nodes must be able to pull the image.",
    )
    note = "                   # the port it listens on in its container"
    return _pinned_target(draft, why, f"    image: {_j(draft.image)}", note)


def _command_target(draft: Draft) -> list[str]:
    why = (
        "Started by Plimsoll and pinned to `resources` (cgroups; see the local tutorial",
        "for the rights that needs).",
    )
    return _pinned_target(draft, why, f"    command: {_j(draft.command)}", "")


def _how_to_run(draft: Draft) -> list[str]:
    if draft.deployment is not None:
        return [
            f"# The probe went through {draft.probed_url} (a port-forward: its hop is in the",
            "# latency). Check it: kubectl apply --dry-run=server -f FILE; run it on the",
            "# cluster: kubectl apply -f FILE (the operator copies the Deployment then).",
        ]
    if draft.image is not None:
        return [
            f"# The probe went to {draft.probed_url}, where you ran the image (not pinned:",
            "# its figures only set the start level and the bar). Check it: kubectl apply",
            "# --dry-run=server -f FILE; run it on the cluster: kubectl apply -f FILE.",
        ]
    return ["# Check it: plimsoll validate --local FILE; find its ceiling: plimsoll run FILE."]


def render(draft: Draft) -> str:
    """The spec's text."""
    s = draft.scaffold
    bar = _duration(s.p99_bar)
    expect = "" if draft.statuses == [200] else f", expectStatus: {_j(draft.statuses)}"
    header = [
        f"# A CapacityTest written by `{draft.invocation}`",
        f"# on {draft.when:%Y-%m-%d %H:%M} UTC. Its probe: {draft.probe_seconds:g} s of GET "
        f"{draft.path} over {draft.connections} connections,",
        f"# {draft.answered:,} answers ({s.probe_rate:,.0f}/s), p50 {_ms(s.probe_p50)}, "
        f"p99 {_ms(s.probe_p99)}, no errors.",
        *_how_to_run(draft),
        "# Lines marked CHANGE are guesses only you can correct.",
        "apiVersion: plimsoll.dev/v1alpha1",
        "kind: CapacityTest",
        "metadata:",
        f"  name: {draft.name}",
        *([f"  namespace: {draft.deployment.namespace}"] if draft.deployment else []),
        "spec:",
    ]
    body = [
        "  workload:",
        "    model: rate                  # open model: a level is requests per second, sent",
        "                                 # on schedule whether or not answers keep up",
        "    mix:                         # CHANGE: your users' real requests, with weights",
        f"      - {{name: get, path: {_j(draft.path)}{expect}}}",
        "  trial: {duration: 20s, warmUp: 5s}   # each level: 5 s warm-up, then 20 s measured",
        "  search:",
        "    strategy: doubling           # double while levels pass, then bisect to 10%",
        f"    start: {s.start}" + " " * max(1, 22 - len(str(s.start))) + f"# {START_SHARE:.0%} of "
        f"the {s.probe_rate:,.0f}/s the probe achieved, rounded down",
        '    precision: "10%"',
        "    repeats: 1                   # the best level once more, for its spread",
        "  passWhen:",
        "    latency:",
        f"      # CHANGE: your objective. Here: {BAR_FACTOR:g} × the probe's p99 "
        f"({_ms(s.probe_p99)}), at least {_ms(BAR_FLOOR)}.",
        f"      - {{quantile: p99, below: {bar}}}",
        f'    errors: {{transport: "{ERROR_FRACTION:.1%}", unexpected: "{ERROR_FRACTION:.1%}"}}'
        "   # at most 0.1% failed answers",
    ]
    return "\n".join([*header, *_target(draft), *body]) + "\n"


def what_to_change(draft: Draft, file: str) -> list[str]:
    """The lines `plimsoll init` prints after writing `file`."""
    lines = [
        f"wrote {file} (it validates). Before you trust its ceiling, change:",
        f"  workload.mix       your users' real requests (the probe sent only GET {draft.path})",
        f"  passWhen.latency   your objective (now p99 below {_duration(draft.scaffold.p99_bar)}, "
        f"{BAR_FACTOR:g} × the probe's p99)",
    ]
    if draft.command is not None or draft.image is not None:
        lines.append(
            f"  target.resources   the pod shape to measure (now {draft.cpu} CPU / {draft.memory})"
        )
    if draft.image is not None:
        lines.append(f"Then: kubectl apply -f {file}; kubectl get capacitytests -w")
        return lines
    source = draft.deployment
    if source is None:
        lines.append(f"Then: plimsoll run {file}")
        return lines
    lines.append(
        f"  target.resources   the pod shape to measure (now {source.cpu} CPU / {source.memory}"
        + (", the container's own)" if source.shape_from_cluster else ", from --cpu/--memory)")
    )
    lines.append(
        f"Then: kubectl apply -f {file}; kubectl get capacitytests -n {source.namespace} -w"
    )
    return lines
