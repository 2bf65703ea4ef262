"""`plimsoll init`: a first spec for your own service, from one short probe.

From `--url URL` (a service that runs already), `--command "..."` (one Plimsoll
starts for the probe, then stops), `--image IMAGE` (a spec for a cluster that runs the
image, probed where the user runs it, e.g. under podman, given as `--url`) or
`--deployment NS/NAME` (a Deployment the operator will copy, probed through the user's
port-forward, `init_deployment`), it probes the service for a few seconds
(`init_probe`), derives a start level and a p99 bar (`plimsoll.decide.scaffold`),
writes a short commented spec (`init_spec`), checks that it loads (a spec for
`plimsoll run` here, or for `kubectl apply` from `--image` and `--deployment`), and
prints what to change. Exit 0 when the spec was written, 1 when the service could not
be probed, 2 on bad options.

Init does not start an image itself: which runtime, registry credentials and ports a
user's image needs are theirs to know, and a probe through their own `podman run` (or
`docker run`) measures the same server.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit

import typer
import yaml

from plimsoll.api.resource import SpecError, load_capacity_test
from plimsoll.cli.durations import METAVAR, positive_duration
from plimsoll.cli.exits import EXIT_INCOMPLETE, EXIT_INVALID_SPEC
from plimsoll.cli.init_deployment import (
    NEEDS_URL,
    DeploymentInitError,
    DeploymentSource,
    parse_reference,
    read_source,
)
from plimsoll.cli.init_probe import ProbeError, StartedCommand, free_port, probe
from plimsoll.cli.init_spec import Draft, render, what_to_change
from plimsoll.decide.scaffold import ProbeFigures, scaffold

CONNECTIONS = 4  # the probe's closed loop: a few, so it measures the service, not a queue

IMAGE_NEEDS_URL = (
    "--image needs --url: run the image where you can reach it, e.g. `podman run --rm "
    "-p 127.0.0.1:8080:PORT {image}`, then --url http://127.0.0.1:8080/PATH (and --port "
    "PORT, the port it listens on in its container)"
)


def _split_url(url: str) -> tuple[str, str]:
    """(scheme://host:port, /path) of `url`, or a BadParameter naming what is wrong."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise typer.BadParameter(f"{url!r}: give a full URL, e.g. http://127.0.0.1:8080/")
    return f"{parts.scheme}://{parts.netloc}", parts.path or "/"


def init(
    url: Annotated[
        str | None,
        typer.Option(help="Probe a service that already runs, e.g. http://127.0.0.1:8080/."),
    ] = None,
    command: Annotated[
        str | None,
        typer.Option(help='Start this command (e.g. "python app.py"), probe it, stop it.'),
    ] = None,
    image: Annotated[
        str | None,
        typer.Option(
            help="A container image a cluster will run (the spec is for kubectl apply); with "
            "--url of where you run it to probe it."
        ),
    ] = None,
    deployment: Annotated[
        str | None,
        typer.Option(
            help="NS/NAME of a Deployment the operator will copy (read with your kubeconfig); "
            "with --url of a port-forward to probe it."
        ),
    ] = None,
    container: Annotated[
        str | None, typer.Option(help="With --deployment: the container, if the pod has several.")
    ] = None,
    kubeconfig: Annotated[
        str | None, typer.Option(help="With --deployment: the kubeconfig (default: $KUBECONFIG).")
    ] = None,
    context: Annotated[
        str | None, typer.Option(help="With --deployment: the kubeconfig context to use.")
    ] = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="The spec file to write.")] = Path(
        "capacitytest.yaml"
    ),
    force: Annotated[bool, typer.Option(help="Overwrite --out if it exists.")] = False,
    name: Annotated[str, typer.Option(help="metadata.name of the test.")] = "my-service",
    port: Annotated[
        int,
        typer.Option(
            help="With --command or --image: the port it listens on (in its container).",
            min=1,
            max=65535,
        ),
    ] = 8080,
    port_env: Annotated[
        str | None,
        typer.Option(help="With --command: the variable it reads its port from (e.g. PORT)."),
    ] = None,
    path: Annotated[str, typer.Option(help="With --command: the path to probe and request.")] = "/",
    cpu: Annotated[
        str, typer.Option(help="With --command (or a Deployment that sets none): the CPU.")
    ] = "1",
    memory: Annotated[
        str, typer.Option(help="With --command (or a Deployment that sets none): the memory.")
    ] = "512Mi",
    probe_seconds: Annotated[
        float,
        typer.Option(
            parser=positive_duration,
            metavar=METAVAR,
            help="How long the probe measures, e.g. 3s (at most 60s).",
        ),
    ] = 3.0,
    startup_timeout: Annotated[
        float,
        typer.Option(
            parser=positive_duration,
            metavar=METAVAR,
            help="With --command: how long it may take to listen, e.g. 30s.",
        ),
    ] = 30.0,
) -> None:
    """Write a first CapacityTest for your service from one short probe."""
    given = [o for o, v in (("--url", url), ("--command", command), ("--image", image),
                            ("--deployment", deployment)) if v is not None]  # fmt: skip
    if (deployment is not None or image is not None) and url is not None:
        given.remove("--url")  # where the Deployment or the image is probed
    if len(given) != 1:
        raise typer.BadParameter("give exactly one of --url, --command, --image, --deployment")
    if image is not None and url is None:
        typer.echo(f"plimsoll init: {IMAGE_NEEDS_URL.format(image=image)}", err=True)
        raise typer.Exit(EXIT_INVALID_SPEC)
    source = None
    if deployment is not None:
        source = _deployment_source(deployment, url, container, kubeconfig, context, cpu, memory)
    if out.exists() and not force:
        typer.echo(f"{out} exists: choose another --out, or --force to overwrite it", err=True)
        raise typer.Exit(EXIT_INVALID_SPEC)
    cluster = deployment or image  # a spec for the cluster, probed through --url
    invocation = "plimsoll init " + shlex.join(
        [given[0], cluster or url or command or "",
         *(["--url", url] if cluster and url else []),
         *(["--port", str(port)] if image else []),
         *(["--port-env", port_env] if port_env else [])]
    )  # fmt: skip
    if probe_seconds > 60:
        raise typer.BadParameter("--probe-seconds: at most 60s: a probe is a first look")
    seconds = probe_seconds
    base, probed_path, argv, (figures, statuses) = _probed(
        url, command, port, port_env, path, seconds, startup_timeout
    )
    draft = Draft(
        name=name,
        invocation=invocation,
        path=probed_path,
        scaffold=scaffold(figures),
        probe_seconds=seconds,
        connections=CONNECTIONS,
        answered=figures.answered,
        when=datetime.now(UTC),
        statuses=statuses,
        url=None if cluster else base,
        command=argv,
        image=image,
        deployment=source,
        probed_url=url if cluster else None,
        port=port,
        port_env=port_env,
        cpu=cpu,
        memory=memory,
    )
    text = _checked(render(draft))
    out.write_text(text)
    for line in what_to_change(draft, str(out)):
        typer.echo(line)


def _probed(
    url: str | None,
    command: str | None,
    port: int,
    port_env: str | None,
    path: str,
    seconds: float,
    within: float,
) -> tuple[str | None, str, list[str] | None, tuple[ProbeFigures, list[int]]]:
    """Probe the service at `url`, or `command` started for it; (the base URL probed, the
    path, the command's argv, the figures and statuses), or the exit."""
    try:
        if url is not None:
            base, probed_path = _split_url(url)
            return (
                base,
                probed_path,
                None,
                asyncio.run(probe(base + probed_path, seconds, CONNECTIONS)),
            )
        assert command is not None
        argv = shlex.split(command)
        if not argv:
            raise typer.BadParameter("--command is empty")
        return None, path, argv, _probe_command(argv, port, port_env, path, seconds, within)
    except ProbeError as exc:
        typer.echo(f"plimsoll init: {exc}", err=True)
        raise typer.Exit(EXIT_INCOMPLETE) from exc


def _checked(text: str) -> str:
    """`text` once it loads as a CapacityTest, or the exit naming what an option made
    invalid (a name, a shape)."""
    try:
        load_capacity_test(yaml.safe_load(text))
    except SpecError as exc:
        typer.echo("plimsoll init: the spec would be invalid:", err=True)
        for line in exc.problems:
            typer.echo(f"  {line}", err=True)
        raise typer.Exit(EXIT_INVALID_SPEC) from exc
    return text


def _deployment_source(
    reference: str,
    url: str | None,
    container: str | None,
    kubeconfig: str | None,
    context: str | None,
    cpu: str,
    memory: str,
) -> DeploymentSource:
    """The Deployment read and checked as the operator will copy it, or the exit."""
    try:
        if url is None:
            namespace, name = parse_reference(reference)
            raise DeploymentInitError(
                NEEDS_URL.format(namespace=namespace, name=name), invalid=True
            )
        return read_source(reference, container, kubeconfig, context, (cpu, memory))
    except DeploymentInitError as exc:
        typer.echo(f"plimsoll init: {exc}", err=True)
        raise typer.Exit(EXIT_INVALID_SPEC if exc.invalid else EXIT_INCOMPLETE) from exc


def _probe_command(
    argv: list[str], port: int, port_env: str | None, path: str, seconds: float, within: float
) -> tuple[ProbeFigures, list[int]]:
    """Start `argv`, probe it on its port, stop it."""
    env = dict(os.environ)
    if port_env is not None:
        port = free_port()  # as a run does: the service learns its port from the variable
        env[port_env] = str(port)
    with tempfile.TemporaryDirectory(prefix="plimsoll-init-") as work:
        started = StartedCommand(argv, env, Path(work) / "service.log")
        try:
            started.start(port, within)
            return asyncio.run(probe(f"http://127.0.0.1:{port}{path}", seconds, CONNECTIONS))
        finally:
            started.stop()
