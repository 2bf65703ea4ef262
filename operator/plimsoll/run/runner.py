"""The capacity test, start to finish, on any platform: the code `plimsoll run` and the
operator both call.

`run_test` runs each variant (or the spec as written) in turn: start the
platform, check that the target honours client addresses when the workload
sends them, check that Prometheus (when it is the source) can read a trial's
window at its scrape interval (`scrape_check`), measure memory per held stream
when the workload has a streams probe (`streams_probe`), run trials level by
level as the search asks until it answers,
name the limiting resource, and stop the platform as `spec.cleanup` says. It
reports progress through a `ProgressSink` (the CLI's live view and JSON file;
the operator's status patches) and returns the `RunReport`.

Nothing measured is lost: each step reaches the sink as soon as it is judged,
and a run that fails or is cancelled still produces a report holding every
step, the range found so far, and why it stopped. A run resumes from
`history` (the `StepRecord`s of an earlier, interrupted run): the search is a
pure function of the history, so completed steps are skipped and only the step
that was under way is repeated; a variant whose search the history already
completed is not provisioned again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from plimsoll.api.autoscale import proof_variant_name
from plimsoll.api.report import RunReport
from plimsoll.api.resource import CapacityTest
from plimsoll.api.run_record import Outcome, RunRecord
from plimsoll.api.shapes import ShapeTable, shape_variant
from plimsoll.api.spec import CapacityTestSpec, Variant
from plimsoll.api.status import Ceiling, Phase
from plimsoll.api.step import StepRecord
from plimsoll.decide.bar_advice import bar_warnings
from plimsoll.decide.flight_plan import planned_flight
from plimsoll.decide.proof_plan import planned_proof
from plimsoll.decide.shape_costs import measured_of
from plimsoll.decide.shape_search import MeasuredShape, ShapesDone, next_shape, predicted_search
from plimsoll.decide.workload_advice import workload_warnings
from plimsoll.platforms.base import DescribesHost, Endpoints, MetricsBeforeStart, Platform
from plimsoll.report.assemble import assemble
from plimsoll.run.client_ips import check_client_ips
from plimsoll.run.confirm import confirm_limit
from plimsoll.run.equipment import Equipment
from plimsoll.run.progress import ProgressSink
from plimsoll.run.scrape_check import check_scrape_window, fit_before_start
from plimsoll.run.streams_probe import probe_streams, release_streams
from plimsoll.run.variant import concluded_ceiling, run_variant


class RunStoppedError(RuntimeError):
    """The test cannot go on (the target died, a check failed); the message says why."""


def _now() -> datetime:
    return datetime.now(UTC)


def _platform_for(
    variant: Variant | None, make_platform: Callable[[Variant | None], Platform], record: RunRecord
) -> Platform:
    """The variant's platform, its name and (once, where it can tell) its host recorded
    in the report."""
    platform = make_platform(variant)
    record.platform = platform.name
    if record.host is None and isinstance(platform, DescribesHost):
        record.host = platform.describe_host()
    return platform


async def _run_variant(
    name: str,
    specs: Mapping[str, CapacityTestSpec],
    make_platform: Callable[[Variant], Platform],
    platform: Platform,
    sink: ProgressSink,
    history: Sequence[StepRecord],
    record: RunRecord,
) -> Ceiling:
    """Search the variant's ceiling, then put the limit it names to the experiment
    (`plimsoll.run.confirm`), once the variant's own pieces have stopped."""
    ceiling = await _search_variant(name, specs, platform, sink, history, record)
    every_variant = list(specs.values())
    return await confirm_limit(
        specs[name], name, ceiling, every_variant, make_platform, sink, record
    )


async def _search_variant(
    name: str,
    specs: Mapping[str, CapacityTestSpec],
    platform: Platform,
    sink: ProgressSink,
    history: Sequence[StepRecord],
    record: RunRecord,
) -> Ceiling:
    spec = specs[name]
    await sink.variant_started(name)
    done = concluded_ceiling(spec, name, history, record)
    if done is not None:
        # A resumed run past this variant: its steps stand and nothing is left to measure,
        # so its pods are not started again, only what an interrupted clean-up left removed.
        finished = done.complete or done.every_level_passed
        await asyncio.shield(platform.stop(keep=spec.cleanup.keeps(finished)))
        return done
    if isinstance(platform, MetricsBeforeStart):
        spec, notes = await fit_before_start(spec, platform.metrics_before_start(spec))
        record.placement.extend(f"chosen: {n} ({name})" for n in notes)
    await sink.phase(Phase.PROVISIONING, f"starting the target, mock and generators ({name})")
    succeeded = False
    endpoints: Endpoints | None = None
    try:
        started = await platform.start(spec, list(specs.values()))
        endpoints = started.endpoints
        record.warnings.extend(w for w in endpoints.warnings if w not in record.warnings)
        advice = [*workload_warnings(spec.workload), *bar_warnings(spec.pass_when)]
        record.warnings.extend(w for w in advice if w not in record.warnings)
        record.placement.extend(endpoints.placement)
        if record.pinned is None:
            # An existing service (target.url) was not pinned by us, whatever its shape.
            record.pinned = spec.target.url is None and endpoints.target_pinned is not False
        if spec.workload.client_ips is not None and spec.workload.client_ips.verify:
            problem = await check_client_ips(endpoints, spec.workload)
            if problem is not None:
                raise RunStoppedError(problem)
        metrics = started.metrics()
        interval = await check_scrape_window(spec, metrics)
        if interval is not None:
            note = f"metrics: Prometheus scrape interval {interval:g} s ({name})"
            if note not in record.placement:
                record.placement.append(note)
        await probe_streams(spec, name, endpoints, metrics, interval, record)
        await sink.phase(Phase.RUNNING, f"searching for the ceiling ({name})")
        equipment = Equipment(started, sink, record, name, endpoints)
        try:
            ceiling = await run_variant(spec, name, equipment, metrics, sink, history, record)
        finally:
            endpoints = equipment.endpoints  # replaced generators answer at new addresses
        succeeded = ceiling.complete or ceiling.every_level_passed
        return ceiling
    finally:
        if endpoints is not None and spec.workload.streams is not None:
            await asyncio.shield(release_streams(endpoints.generator_urls, endpoints.control_token))
        # Shielded: a Ctrl-C must not interrupt the very clean-up it asked for.
        await asyncio.shield(platform.stop(keep=spec.cleanup.keeps(succeeded)))


@dataclass(frozen=True)
class _Run:
    """What every variant of one run is measured with: the variants' specs (added to as
    derived variants are chosen), the platform factory, the sink, the earlier steps to
    resume from, and the record the steps go into."""

    specs: dict[str, CapacityTestSpec]
    make_platform: Callable[[Variant | None], Platform]
    sink: ProgressSink
    history: Sequence[StepRecord]
    record: RunRecord

    async def measure(self, variant: Variant | None, name: str) -> Ceiling:
        """Search variant `name`'s ceiling on a platform of its own and record it."""
        platform = _platform_for(variant, self.make_platform, self.record)
        ceiling = await _run_variant(
            name, self.specs, self.make_platform, platform, self.sink, self.history, self.record
        )
        self.record.ceilings.append(ceiling)
        await self.sink.variant_finished(ceiling)
        return ceiling


async def _run_guided(spec: CapacityTestSpec, run: _Run) -> None:
    """Measure shape after shape as `plimsoll.decide.shape_search` chooses them, each a
    variant of target.resources whose search starts at its predicted ceiling; each
    shape's spec is added to `specs` as it is derived."""
    assert spec.shapes is not None
    assert spec.shapes.search is not None
    assert spec.target.resources is not None  # the spec's validator holds shapes to it
    search, start = spec.shapes.search, spec.target.resources
    table = run.record.shapes = ShapeTable(guided=True)
    measured: list[MeasuredShape] = []
    for _ in range(search.max_shapes + 1):  # next_shape stops at max_shapes
        choice = next_shape(search, start, spec.cost, measured)
        if isinstance(choice, ShapesDone):
            table.stop_reason, table.latency_bound = choice.reason, choice.latency_bound
            return
        variant = shape_variant(choice.shape)
        shaped = spec.for_variant(variant)
        run.specs[variant.name] = shaped.model_copy(
            update={"search": predicted_search(shaped.search, choice.predicted)}
        )
        table.chosen.append(choice.shape)
        if choice.predicted is not None:
            table.predicted[variant.name] = choice.predicted
        ceiling = await run.measure(variant, variant.name)
        measured.append(measured_of(choice.shape, ceiling, run.record.records))


def proof_variant(name: str, spec: CapacityTestSpec, record: RunRecord) -> Variant | None:
    """The variant that flies `name`'s recommended HPA (autoscale.prove), or None when the
    spec asks for no proof or the flight recommended nothing."""
    if spec.autoscale is None or not spec.autoscale.prove:
        return None
    flights = [s.flight for s in record.steps if s.variant == name and s.flight is not None]
    recommended = flights[-1].recommendation if flights else None
    if recommended is None:
        return None
    settings = recommended.autoscaler
    return Variant(
        name=proof_variant_name(name),
        description=f"the HPA {name}'s flight recommended: {settings.min_replicas}-"
        f"{settings.max_replicas} replicas at {settings.target_cpu_utilization}% CPU",
        autoscaler=settings,
    )


async def _prove_recommended(name: str, run: _Run) -> None:
    """Fly the profile again under the HPA `name`'s flight recommended, as a variant of
    its own (no recommendation of its own: it is the proof)."""
    variant = proof_variant(name, run.specs[name], run.record)
    if variant is None:
        return
    spec = run.specs[name].for_variant(variant)
    assert spec.autoscale is not None  # proof_variant found one
    judged_only = spec.autoscale.model_copy(update={"recommend": False, "prove": False})
    run.specs[variant.name] = spec.model_copy(update={"autoscale": judged_only})
    await run.measure(variant, variant.name)


def _finish(record: RunRecord, specs: Mapping[str, CapacityTestSpec]) -> RunReport:
    """The report of the run as it ended: its record, with the conclusions drawn once."""
    record.ended_at = _now()
    return assemble(record, specs)


async def run_test(
    test: CapacityTest,
    make_platform: Callable[[Variant | None], Platform],
    sink: ProgressSink,
    *,
    history: Sequence[StepRecord] = (),
) -> RunReport:
    """Find the ceiling of every variant of `test`; the report, complete or partial."""
    variants: list[Variant | None] = list(test.spec.compared_variants) or [None]
    record = RunRecord(
        test_name=test.metadata.name, spec=test.spec, started_at=_now(), platform="unknown"
    )
    try:
        # The one place each variant's spec is derived; a proof from the sizing plan gets
        # its level, replicas and zones here.
        specs = {
            name: planned_flight(planned_proof(s)) for name, s in test.spec.variant_specs().items()
        }
    except ValueError as exc:
        record.message = str(exc)
        report = _finish(record, test.spec.variant_specs())
        await sink.phase(Phase.FAILED, report.message)
        await sink.finished(report)
        return report
    try:
        if test.spec.shapes is not None and test.spec.shapes.search is not None:
            specs = {}  # the guided search derives each shape's spec as it chooses it
            await _run_guided(test.spec, _Run(specs, make_platform, sink, history, record))
        else:
            run = _Run(specs, make_platform, sink, history, record)
            for variant, name in zip(variants, list(specs), strict=True):
                await run.measure(variant, name)
                await _prove_recommended(name, run)
        # "At least" (every level passed) is not a ceiling, but the run did all it was
        # asked: it succeeds, and the message says which variants found no ceiling.
        incomplete = [c for c in record.ceilings if not c.complete]
        stopped = [c for c in incomplete if not c.every_level_passed]
        record.outcome = Outcome.FAILED if stopped else Outcome.SUCCEEDED
        record.message = "; ".join(
            f"{c.variant}: {c.stop_reason or 'stopped early'}" for c in incomplete
        )
    except asyncio.CancelledError:
        record.message = "interrupted: the steps measured so far are kept"
        report = _finish(record, specs)
        await asyncio.shield(sink.phase(Phase.FAILED, report.message))
        await asyncio.shield(sink.finished(report))
        raise
    except Exception as exc:  # any failure still owes the user a report of what was measured
        record.message = f"{type(exc).__name__}: {exc}" if not str(exc) else str(exc)
    report = _finish(record, specs)
    final = Phase.SUCCEEDED if report.outcome is Outcome.SUCCEEDED else Phase.FAILED
    await sink.phase(final, report.message or "ceiling found")
    await sink.finished(report)
    return report
