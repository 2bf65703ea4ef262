"""The parts of a local start that are not the target itself: services and the command.

`target_command` resolves what to run (a spec that names only an image gets a
clear error: the local platform runs commands), and
`start_services` starts dependencies such as redis-server before the target,
pinned and measured like it (through their cgroup when they have a shape, as
the target is), relays the pages of those that are Prometheus exporters
(`metricsPath`) through the run's exporter, and returns the env the target
needs to reach them.
Both read the spec as the variant sees it (`CapacityTestSpec.for_variant`, applied
by the runner): a variant's overrides are already in it.
"""

from __future__ import annotations

from collections.abc import Mapping

from plimsoll.api.spec import CapacityTestSpec, Service
from plimsoll.platforms.base import PlatformError
from plimsoll.platforms.local.launcher import Launcher
from plimsoll.platforms.local.processes import free_port, port_is_free, wait_ready


def not_runnable_here(spec: CapacityTestSpec) -> str | None:
    """Why this machine cannot start the target (`plimsoll run` and `plimsoll validate
    --local` both ask); None when it can, or when `target.url` drives one already running."""
    target = spec.target
    if target.url is not None:
        return None
    if target.from_deployment is not None:
        return (
            f"target.fromDeployment copies the Deployment {target.from_deployment.name!r} on a "
            "cluster; the local platform runs commands: give target.command (and leave out "
            "fromDeployment) to run the service here"
        )
    if not target.command:
        return (
            f"the local platform runs commands, not images: target.image {target.image!r} is for "
            "Kubernetes. Give target.command (e.g. ['python', 'server.py']) to run it here, "
            "or target.url to drive a service that already runs"
        )
    return None


def target_command(spec: CapacityTestSpec) -> tuple[list[str], dict[str, str]]:
    """The target's argv and its own env."""
    problem = not_runnable_here(spec)
    if problem is not None:
        raise PlatformError(problem)
    target = spec.target
    assert target.command is not None  # not_runnable_here said so otherwise
    return [*target.command, *target.args], dict(target.env)


def missing_value_from(spec: CapacityTestSpec, environ: Mapping[str, str]) -> str | None:
    """`valueFrom` names a Secret or ConfigMap of a cluster. Here every process inherits
    the caller's environment, so a variable already exported there is what the reference
    stands for; one that is not is refused, naming the field (never read from a file or a
    cluster behind the user's back)."""
    wanted = [(f"spec.target.valueFrom.{name}", name) for name in spec.target.value_from]
    for service in spec.services:
        wanted += [(f"spec.services[{service.name}].valueFrom.{n}", n) for n in service.value_from]
    for field, name in wanted:
        if name not in environ:
            return (
                f"{field}: reads a Secret or ConfigMap in a cluster, and `plimsoll run` has "
                f"none; locally every process inherits your environment: export {name} "
                "before `plimsoll run`"
            )
    return None


def _service_env(service: Service) -> dict[str, str]:
    return {
        key: value.replace("{host}", "127.0.0.1").replace("{port}", str(service.port))
        for key, value in service.target_env.items()
    }


def _local_port(service: Service) -> int:
    """The declared port when free; a free one when it is taken and the service is told
    its port (`{port}`); else a clear error."""
    if port_is_free(service.port):
        return service.port
    if service.names_its_port():
        return free_port()
    raise PlatformError(
        f"port {service.port} of service {service.name!r} is already in use on 127.0.0.1: "
        "stop whatever listens there, or write '{port}' in the service's command (and "
        "'{" + service.name + ".port}' where another service reaches it) so Plimsoll can "
        "pick a free one"
    )


async def start_services(
    launcher: Launcher, services: list[Service], base_env: dict[str, str]
) -> dict[str, str]:
    """Start the services, each ready before the next; the env the target needs."""
    target_env: dict[str, str] = {}
    ports: dict[str, int] = {}
    for declared in services:
        if not declared.command:
            raise PlatformError(
                f"service {declared.name!r} names only an image; the local platform runs "
                "commands: give it 'command' (e.g. ['redis-server', '--port', '{port}'])"
            )
        service = declared.with_ports(_local_port(declared), ports)
        ports[service.name] = service.port
        assert service.command is not None
        group = None
        if service.resources is not None:
            group = launcher.pin(service.name, service.resources.cpu, service.resources.memory)
        process = launcher.process(
            service.name,
            [*service.command, *service.args],
            {**base_env, **service.env},
            group=group,
        )
        await process.start()
        url = (
            f"http://127.0.0.1:{service.port}{service.readiness_path}"
            if service.readiness_path
            else None
        )
        await wait_ready(process, url=url, port=service.port, within=60)
        if group is not None:
            launcher.watch_group(service.name, group)
            where = f"cgroup v{group.version} {group.memory_dir}"
        else:
            launcher.watch_process_group(service.name, process.pid or 0)
            where = "unpinned"
        if service.metrics_path is not None and launcher.export is not None:
            launcher.export.relay(
                service.name, f"http://127.0.0.1:{service.port}{service.metrics_path}"
            )
            where += f", its {service.metrics_path} relayed"
        launcher.placement.append(
            f"service {service.name}: pid {process.pid}, port {service.port}, {where}"
        )
        target_env.update(_service_env(service))
    return target_env
