"""One CapacityTest's life under the operator: decide, run, watch for changes, clean up.

`Supervisor.run` is the body of the kopf daemon (`plimsoll.controller.handlers`),
one per resource. It reads the live body (its status and schedule parsed once
per change), asks the pure `plimsoll.decide.operator_action.choose_action` what to do, and then
starts the runner (`plimsoll.run.runner.run_test`) on the Kubernetes platform,
resumes it from `status.steps`, records an invalid spec, or waits. While a run
is under way it watches for a new generation or a new `plimsoll.dev/rerun`
token (stop, clean up, start anew) and for the operator exiting: then the run
is detached, not failed, so the next operator resumes it with its pods still in
place.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import ValidationError

from plimsoll.api.gate import Schedule
from plimsoll.api.resource import CapacityTest, SpecError, load_capacity_test
from plimsoll.api.spec import Variant
from plimsoll.api.status import (
    TERMINAL_PHASES,
    CapacityTestStatus,
    ConditionStatus,
    ConditionType,
    Phase,
    Reason,
    carried_into_a_new_run,
)
from plimsoll.api.step import StepRecord
from plimsoll.controller.context import OperatorContext
from plimsoll.controller.deployment_watch import IMAGE_POLL, DeploymentWatch
from plimsoll.controller.events import Event, EventRecorder, EventType, phase_event
from plimsoll.controller.gate import apply_gate
from plimsoll.controller.notify import notify_test
from plimsoll.controller.status import OperatorSink, StatusWriter
from plimsoll.decide.operator_action import (
    Action,
    Desired,
    choose_action,
    restart_reason,
    short_run_id,
)
from plimsoll.decide.run_limits import deadline_message
from plimsoll.decide.run_queue import Waiting, queue_message
from plimsoll.decide.schedule import due_slot, parse_token, slot_token
from plimsoll.decide.variant_status import pending_variants
from plimsoll.kube.client import NAMESPACES, KubeClient
from plimsoll.kube.names import LABEL_OWNER_UID, RunIdentity, run_namespace_name
from plimsoll.kube.run_policy import policy_problems
from plimsoll.platforms.kubernetes.platform import KubernetesPlatform

log = logging.getLogger(__name__)
_POLL = 0.5


def read_status(body: Mapping[str, Any]) -> CapacityTestStatus | None:
    raw = dict(body.get("status") or {})
    if not raw:
        return None
    known = {f.alias or name for name, f in CapacityTestStatus.model_fields.items()}
    try:  # other writers (kopf itself, older versions) may leave keys we do not know
        return CapacityTestStatus.model_validate({k: v for k, v in raw.items() if k in known})
    except ValidationError:
        return None


def _now() -> datetime:
    return datetime.now(UTC)


async def delete_run_namespaces(client: KubeClient, uid: str, *, wait: float = 0.0) -> list[str]:
    """Delete every namespace this resource's runs created; wait up to `wait` s for them."""
    found = await client.list(NAMESPACES, None, {LABEL_OWNER_UID: uid})
    names = [ns["metadata"]["name"] for ns in found]
    for name in names:
        await client.delete(NAMESPACES, None, name)
    deadline = time.monotonic() + wait
    remaining = names
    while remaining and time.monotonic() < deadline:
        await asyncio.sleep(_POLL)
        remaining = [n for n in remaining if await client.get(NAMESPACES, None, n) is not None]
    return remaining


@dataclass(frozen=True)
class _Parsed:
    """The body's status and schedule as read at one resourceVersion."""

    version: str | None
    status: CapacityTestStatus | None
    schedule: Schedule | None


class Supervisor:
    def __init__(self, ctx: OperatorContext, body: Mapping[str, Any], stopped: Any) -> None:
        self.ctx, self.body, self.stopped = ctx, body, stopped
        meta = body["metadata"]
        self.uid: str = meta.get("uid") or f"{meta['namespace']}/{meta['name']}"
        self.platforms: list[KubernetesPlatform] = []
        self._last: _Parsed | None = None
        self.plan_problem: str | None = None
        # The Deployment the target copies, when the spec watches it (trigger, contract).
        self.deployment = DeploymentWatch(ctx, _plain(body))

    def _parsed(self) -> _Parsed:
        """The status and schedule, parsed once per change of the live body (kopf updates
        it in place, and every change brings a new resourceVersion), not on every poll.
        A body without a resourceVersion is parsed each time: nothing tells its changes."""
        version = self.body["metadata"].get("resourceVersion")
        last = self._last
        if last is None or version is None or last.version != version:
            last = _Parsed(version, read_status(self.body), scheduled(self.body))
            self._last = last
        return last

    def desired(self) -> Desired:
        return Desired.of(
            self.body["metadata"], self._planned_slot(), self.deployment.trigger_image
        )

    async def _watch_deployment(self) -> None:
        while not self.stopped:
            await self.stopped.wait(IMAGE_POLL)
            await self.deployment.read(self._load()[0])

    def _planned_slot(self) -> str | None:
        """`_scheduled_slot`, or the slot already served when planning fails: the failure
        goes to `plan_problem` (and from there into SpecValid=False), never out of the
        daemon, which kopf would retry forever."""
        try:
            slot = self._scheduled_slot()
        except Exception as exc:
            self.plan_problem = f"spec.schedule: the next run cannot be planned: {_reason(exc)}"
            status = read_status(self.body)
            return status.scheduled_slot if status is not None else None
        self.plan_problem = None
        return slot

    def _load(self) -> tuple[CapacityTest | None, list[str]]:
        """The spec as a model, or the lines saying why not: whatever goes wrong."""
        try:
            test = load_capacity_test(_plain(self.body))
        except SpecError as exc:
            return None, exc.problems
        except Exception as exc:  # the boundary should not raise anything else: belt and braces
            log.exception("reading the spec of %s failed", self.uid)
            return None, [f"(document): could not be read: {_reason(exc)}"]
        if self.plan_problem is not None:
            return None, [self.plan_problem]
        over = policy_problems(test, self.ctx.policy())  # as `plimsoll validate` applies it
        if over:
            return None, over
        return test, []

    def _scheduled_slot(self) -> str | None:
        """The schedule slot the resource should serve: while a run is under way (or none
        has finished yet) the one it serves; once it is idle, the latest slot come due
        since, so missed slots run once and a run is never cut short by the next slot."""
        parsed = self._parsed()
        status, schedule = parsed.status, parsed.schedule
        served = status.scheduled_slot if status is not None else None
        if schedule is None or status is None or status.phase not in TERMINAL_PHASES:
            return served
        since = parse_token(served) if served else status.start_time
        if since is None:
            return served
        slot = due_slot(schedule, since, _now())
        return slot_token(slot) if slot is not None else served

    def writer(self, status: CapacityTestStatus) -> StatusWriter:
        meta = self.body["metadata"]
        events = EventRecorder(self.ctx.api(), _plain(self.body))
        return StatusWriter(self.ctx.api(), meta["namespace"], meta["name"], status, events=events)

    async def run(self) -> None:
        # Before the first decision: no run for a trigger image not read yet.
        await self.deployment.read(self._load()[0])
        watcher = asyncio.create_task(self._watch_deployment())
        try:
            await self._decide_and_run()
        finally:
            watcher.cancel()
            await asyncio.gather(watcher, return_exceptions=True)

    async def _decide_and_run(self) -> None:
        while not self.stopped:
            parsed = self._parsed().status
            # A copy: a run writes into its status, and the parsed one must stay as read.
            status = parsed.model_copy(deep=True) if parsed is not None else None
            desired = self.desired()
            test, problems = self._load()
            action = choose_action(status, desired, spec_valid=test is not None)
            if action is Action.IDLE:
                self.ctx.metrics.set_phase(self.uid, status.phase if status else None)
                await self._wait_for_change(desired)
            elif action is Action.INVALID:
                await self._mark_invalid(status, desired, problems)
                await self._wait_for_change(desired)
            else:
                assert test is not None
                await self._run(test, status, desired, action)
                # The watch may not have delivered our last status write yet: decide
                # again only once the user asks for something new.
                await self._wait_for_change(desired)

    async def _wait_for_change(self, desired: Desired) -> None:
        while not self.stopped and self.desired() == desired:
            await self.stopped.wait(_POLL)

    async def _mark_invalid(
        self, status: CapacityTestStatus | None, desired: Desired, problems: list[str]
    ) -> None:
        await self._clean_previous(status)
        fresh = CapacityTestStatus(
            observed_generation=desired.generation,
            rerun_token=desired.rerun_token,
            scheduled_slot=desired.scheduled_slot,
            trigger_image=desired.trigger_image,
            conditions=status.conditions if status else [],
            history=status.history if status else [],
        )
        writer = self.writer(fresh)
        writer.generation = desired.generation
        message = "; ".join(problems)
        writer.condition(
            ConditionType.SPEC_VALID, ConditionStatus.FALSE, Reason.INVALID_SPEC, message
        )
        writer.condition(ConditionType.READY, ConditionStatus.FALSE, Reason.INVALID_SPEC, message)
        fresh.phase = Phase.FAILED
        fresh.message = f"invalid spec: {message}"
        writer.note(Event(EventType.WARNING, Reason.INVALID_SPEC.value, fresh.message))
        fresh.completion_time = _now()
        writer.rewrite_all()
        await writer.write()
        self.ctx.metrics.set_phase(self.uid, Phase.FAILED)

    async def _clean_previous(self, status: CapacityTestStatus | None) -> None:
        if status is not None and status.run_id is not None:
            await delete_run_namespaces(self.ctx.api(), self.uid, wait=60.0)

    async def _run(
        self, test: Any, status: CapacityTestStatus | None, desired: Desired, action: Action
    ) -> None:
        meta = self.body["metadata"]
        entry = Waiting(
            self.uid,
            created=meta.get("creationTimestamp") or "",
            name=f"{meta['namespace']}/{meta['name']}",
            lock_key=test.spec.target.lock(meta["namespace"]),
            resuming=action is Action.RESUME,
        )
        # Its place before the first await: a test created later whose Pending write
        # happens to finish first must not take the slot of this one.
        self.ctx.waiting[self.uid] = entry
        try:
            writer, history = await self._begin(test, status, desired, action)
            if await self._queue(writer, desired, entry):
                await self._supervise_run(test, writer, history, desired)
        finally:
            self.ctx.leave(self.uid)

    async def _begin(
        self, test: Any, status: CapacityTestStatus | None, desired: Desired, action: Action
    ) -> tuple[StatusWriter, list[StepRecord]]:
        """The run's status writer and its steps so far: a fresh Pending status for a new
        run, the status as it is for a resumed one."""
        meta = self.body["metadata"]
        history: list[StepRecord] = []
        if action is Action.RESUME and status is not None:
            fresh = status
            history = list(status.steps)
        else:
            await self._clean_previous(status)
            run_id = short_run_id(
                self.uid, desired.generation, desired.rerun_token, uuid.uuid4().hex
            )
            fresh = CapacityTestStatus(
                phase=Phase.PENDING,
                observed_generation=desired.generation,
                rerun_token=desired.rerun_token,
                scheduled_slot=desired.scheduled_slot,
                trigger_image=desired.trigger_image,
                run_id=run_id,
                namespace=run_namespace_name(meta["name"], run_id),
                start_time=_now(),
                conditions=carried_into_a_new_run(status.conditions) if status else [],
                history=status.history if status else [],
                variants=pending_variants([v.name for v in test.spec.compared_variants]),
                variant_count=len(test.spec.compared_variants) or None,
            )
        writer = self.writer(fresh)
        writer.generation = desired.generation
        if action is Action.START:
            writer.rewrite_all()
            message = f"new run {fresh.run_id} in {fresh.namespace}"
            if status and status.run_id:
                reason = restart_reason(status, desired)
                message += f" ({reason.value})"
                if reason is Reason.IMAGE_CHANGED:
                    message += f": the deployment runs {desired.trigger_image} now"
            writer.condition(ConditionType.SPEC_VALID, ConditionStatus.TRUE, Reason.VALID, "")
            writer.set_phase(Phase.PENDING, message)
            writer.note(phase_event(Phase.PENDING, message))  # a fresh status starts Pending
            await writer.write()
        return writer, history

    async def _queue(self, writer: StatusWriter, desired: Desired, entry: Waiting) -> bool:
        """Wait Queued, with the place in the queue in status, until this run may start.
        Each poll writes only when the place or the reason changed."""
        while not (decision := self.ctx.try_start(entry)).start:
            message = queue_message(
                decision, self.ctx.max_concurrent, self.ctx.limits.runs_per_namespace
            )
            status = writer.status
            if status.phase is Phase.PENDING:
                writer.set_phase(Phase.QUEUED, message)
            elif status.phase is Phase.QUEUED and status.message != message:
                status.message = message  # a lock freed, a slot still taken: say which
                writer.condition(
                    ConditionType.PROGRESSING, ConditionStatus.FALSE, Reason.QUEUED, message
                )
            if status.phase is Phase.QUEUED:
                status.queue_position = decision.position
                await writer.write()
            if self.stopped or self.desired() != desired:
                return False
            await self.stopped.wait(_POLL)
        writer.status.queue_position = None  # written with the Provisioning that follows
        return not self.stopped

    def _make_platform(
        self, variant: Variant | None, fresh: CapacityTestStatus
    ) -> KubernetesPlatform:
        meta = self.body["metadata"]
        assert fresh.namespace is not None
        assert fresh.run_id is not None
        identity = RunIdentity(
            namespace=fresh.namespace,
            run_id=fresh.run_id,
            owner_uid=self.uid,
            owner_name=meta["name"],
            owner_namespace=meta["namespace"],
            variant=variant.name if variant is not None else "default",
        )
        platform = KubernetesPlatform(self.ctx.api(), identity, self.ctx.options)
        self.platforms.append(platform)
        return platform

    async def _supervise_run(
        self, test: Any, writer: StatusWriter, history: list[StepRecord], desired: Desired
    ) -> None:
        from plimsoll.run.runner import run_test  # the runner pulls in the whole measuring stack

        metrics, uid = self.ctx.metrics, self.uid
        sink = OperatorSink(
            writer,
            dict(self.body),
            on_step=lambda record, seconds: metrics.step(record.verdict, seconds),
            on_phase=lambda phase: metrics.set_phase(uid, phase),
            on_finished=lambda report: apply_gate(writer, report, test.spec, self._images(test)),
            on_notices=lambda found: notify_test(
                writer,
                test.spec.notify,
                found,
                self.ctx.options.identity,
                self.ctx.options.allowed_target_hosts,
            ),
            unit=test.spec.unit,
            identity=self.ctx.options.identity,
        )
        self.platforms = []  # this run's: the contract and the images read from them
        make: Callable[[Variant | None], KubernetesPlatform] = lambda v: self._make_platform(  # noqa: E731
            v, writer.status
        )
        task = asyncio.create_task(run_test(test, make, sink, history=history))
        started = writer.status.start_time or _now()  # a resumed run keeps its start
        deadline = started + timedelta(seconds=self.ctx.limits.deadline)
        try:
            while not task.done():
                await asyncio.wait({task}, timeout=_POLL)
                if task.done():
                    break
                if self.stopped or self.desired() != desired:
                    await self._stop_run(task, sink, exiting=not _deleted(self.stopped))
                    return
                if _now() > deadline:  # the admin's limits.deadline: Failed, steps kept
                    message = deadline_message(self.ctx.limits)
                    sink.stopping_because(message)
                    writer.note(Event(EventType.WARNING, "DeadlinePassed", message))
                    await self._stop_run(task, sink, exiting=False)
                    break
        except asyncio.CancelledError:
            # kopf cancels the daemon itself when the operator exits and the daemon did
            # not return in time: still an exit, not a failure, unless the resource went.
            await asyncio.shield(self._stop_run(task, sink, exiting=not _deleted(self.stopped)))
            raise
        if not task.cancelled() and task.exception() is not None:
            log.error("run of %s failed: %s", uid, task.exception())
        await self._after_run(test, writer)

    async def _stop_run(self, task: asyncio.Task[Any], sink: OperatorSink, exiting: bool) -> None:
        """Cancel the runner. On an operator exit (`exiting`, and the resource still there)
        pods and status are left as they are, so the next operator resumes the run; on a
        spec change, a rerun or a deletion the runner cleans up after itself."""
        if exiting and self.stopped:
            sink.detach()
            for platform in self.platforms:
                platform.detach()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    def _images(self, test: Any) -> dict[str, str | None]:
        """The target image each variant ran: the digest the kubelet reported, else the
        spec's image."""
        images: dict[str, str | None] = {}
        for platform in self.platforms:
            variant = platform.run.variant
            spec_image = next(
                (v.image for v in test.spec.variants if v.name == variant and v.image), None
            )
            images[variant] = platform.target_image or spec_image or test.spec.target.image
        return images

    async def _after_run(self, test: Any, writer: StatusWriter) -> None:
        meta = self.body["metadata"]
        self.ctx.metrics.record_result(meta["namespace"], meta["name"], writer.status)
        copied = next((p.copied_target for p in self.platforms if p.copied_target), None)
        await self.deployment.prove(test, writer.status, copied)
        if not test.spec.cleanup.keeps(writer.status.phase is Phase.SUCCEEDED):
            await delete_run_namespaces(self.ctx.api(), self.uid)


def scheduled(body: Mapping[str, Any]) -> Schedule | None:
    """The resource's schedule, or None (also when invalid: the spec check reports that)."""
    raw = (body.get("spec") or {}).get("schedule")
    if not raw:
        return None
    try:
        return Schedule.model_validate(_to_dict(raw))
    except ValidationError:
        return None


def _reason(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _deleted(stopped: Any) -> bool:
    reason = getattr(stopped, "reason", None)
    return reason is not None and "RESOURCE_DELETED" in str(reason)


def _plain(body: Mapping[str, Any]) -> dict[str, Any]:
    """The resource as the API would return it, minus the status (the spec is judged)."""
    return {
        "apiVersion": body.get("apiVersion"),
        "kind": body.get("kind"),
        "metadata": dict(body["metadata"]),
        "spec": _to_dict(body.get("spec")),
    }


def _to_dict(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _to_dict(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_to_dict(v) for v in value]
    return value
