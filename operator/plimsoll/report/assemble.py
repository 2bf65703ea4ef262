"""The report, assembled once from the run's record: each conclusion drawn by its own pure
function from what the run observed, in one place, after the run (or what it left).

The runner keeps a `RunRecord` while it runs and hands it here at the end, whether the
run finished, failed or was cancelled: the headline ceiling (the baseline variant's),
the per-unit costs, one sentence per variant, the proof of a proving run, the variants'
comparison, the shapes' cost table and the sizing plan.
"""

from __future__ import annotations

from collections.abc import Mapping

from plimsoll.api.report import RunReport
from plimsoll.api.run_record import RunRecord
from plimsoll.api.shapes import ShapeTable
from plimsoll.api.spec import CapacityTestSpec, Strategy
from plimsoll.api.step import TrialKind
from plimsoll.decide.headline import headline_ceiling
from plimsoll.decide.proof import prove
from plimsoll.decide.shape_costs import shape_rows
from plimsoll.decide.sizing import plan_deployment
from plimsoll.decide.sizing_costs import SizingInputError, resolve
from plimsoll.decide.unit_costs import unit_costs
from plimsoll.report.comparison import compare_variants
from plimsoll.report.sentence import ceiling_sentence
from plimsoll.report.shapes import headline as shapes_headline


def assemble(record: RunRecord, specs: Mapping[str, CapacityTestSpec]) -> RunReport:
    """The report of `record`; `specs` are the variants' specs as the runner derived them
    (a variant may change the shape its sentence names)."""
    spec = record.spec
    report = RunReport(**{name: getattr(record, name) for name in RunRecord.model_fields})
    report.ceiling = headline_ceiling(record)
    report.unit_costs = unit_costs(record)
    report.summary = [
        ceiling_sentence(record, c, specs.get(c.variant, spec)) for c in record.ceilings
    ]
    proving = spec.search.strategy is Strategy.PROVE
    if proving:
        _prove(report, specs.get(spec.baseline_name, spec))
    flying = spec.search.strategy is Strategy.AUTOSCALE
    if flying:  # a flight's answer is what it lived through
        last = {s.variant: s.flight for s in record.steps if s.flight is not None}
        prefix = len(last) > 1
        report.summary = [
            f"[{variant}] {f.sentence}" if prefix else f.sentence for variant, f in last.items()
        ] or report.summary
    # Flights have no ceilings to set side by side: their section compares what each lived
    # through (a recommended HPA's proof is a variant too).
    report.comparison = None if flying else compare_variants(record, report.unit_costs)
    if spec.shapes is not None:
        table = shape_rows(record, record.shapes or ShapeTable())
        baseline = record.ceilings[0].variant if record.ceilings else ""
        table.headline = shapes_headline(table, spec.cost.currency, baseline)
        report.shapes = table
    if spec.sizing is not None and not (proving and spec.sizing.per_pod is None):
        # A proof's one level is the deployment's, not one pod's: its plan is the one it
        # proved (from spec.sizing.perPod), never one made from the proof's level.
        try:
            measured = None if proving else record
            sizing = resolve(spec.sizing, measured, {}, unit=spec.unit, costs=report.unit_costs)
            report.sizing = plan_deployment(sizing)
        except SizingInputError as exc:
            report.warnings.append(f"spec.sizing: no plan: {exc}")
    return report


def _prove(report: RunReport, spec: CapacityTestSpec) -> None:
    """The proof of the baseline variant from its one full-length step at the level; its
    sentence is the run's summary."""
    variant, level = report.spec.baseline_name, spec.search.level
    steps = [
        s
        for s in report.steps
        if s.variant == variant and s.kind is TrialKind.FULL and s.level == level
    ]
    why = report.message or (report.ceiling.stop_reason if report.ceiling else "")
    report.proof = prove(spec, steps[-1] if steps else None, why_not=why)
    report.summary = [report.proof.sentence]
