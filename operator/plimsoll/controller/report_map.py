"""The run report as a ConfigMap `<name>-report`, owned by the CapacityTest, and bounded.

A ConfigMap holds at most 1 MiB, and a long run's full report (histograms,
every query of every step) can be many times that; a create that is too large
fails and the user gets no report at all. So the report is fitted to
`JSON_BUDGET` in stages, each cheaper to lose than the next, and every stage
that applied is named in the report's `warnings` (and so in report.md):

1. the latency histograms of every step (the figures stay in the status);
2. the detail of older steps (client result, resources, queries), newest kept;
3. the steps altogether, keeping the ceilings, the unit costs and the summary.

report.md is rendered from the fitted report and cut at `MARKDOWN_BUDGET` with a
note. Running the operator's `plimsoll run` locally writes the full report to files.
"""

from __future__ import annotations

import logging
from typing import Any

from plimsoll.api.report import RunReport
from plimsoll.api.resource import API_VERSION, KIND
from plimsoll.kube.client import CONFIG_MAPS, KubeClient, NotFoundError
from plimsoll.kube.grants import OperatorIdentity, ensure_bound

log = logging.getLogger(__name__)

JSON_BUDGET = 700_000
MARKDOWN_BUDGET = 200_000  # with the JSON and metadata, well under the 1 MiB limit


def _size(report: RunReport) -> int:
    return len(report.to_wire_json().encode())


def fit_report(report: RunReport, budget: int = JSON_BUDGET) -> RunReport:
    """`report` itself if it fits `budget` bytes of JSON, else a trimmed copy whose last
    warning says what was left out."""
    if _size(report) <= budget:
        return report
    slim = report.model_copy(deep=True)
    notes = list(slim.warnings)
    for step in slim.steps:
        if step.client is not None and step.client.operations:
            step.client = step.client.model_copy(update={"operations": {}})
    slim.warnings = [*notes, "report.json here leaves out the latency histograms to fit 1 MiB"]
    if _size(slim) <= budget:
        return slim
    kept = len(slim.steps)
    while kept > 0 and _size(slim) > budget:
        kept //= 2
        for step in slim.steps[: len(slim.steps) - kept]:
            step.client, step.target, step.others = None, None, {}
        slim.warnings = [
            *notes,
            f"report.json here keeps the last {kept} steps in detail and only the verdicts "
            "of older ones, to fit 1 MiB",
        ]
    if _size(slim) <= budget:
        return slim
    total = len(slim.steps)
    slim.steps, slim.records = [], []
    slim.warnings = [
        *notes,
        f"report.json here leaves out all {total} steps to fit 1 MiB: the ceilings, unit "
        "costs and summary are kept; status.steps lists the verdicts",
    ]
    return slim


def _report_markdown(report: RunReport) -> str:
    try:
        from plimsoll.report.markdown import render_markdown

        text = render_markdown(report)
    except Exception as exc:  # the JSON is the record; Markdown is a courtesy
        log.warning("report.md could not be rendered: %s", exc)
        lines = [f"# {report.test_name}", "", *report.summary, "", report.message]
        text = "\n".join(lines) + "\n"
    if len(text.encode()) > MARKDOWN_BUDGET:
        cut = text.encode()[: MARKDOWN_BUDGET - 200].decode(errors="ignore")
        text = cut + "\n\n… report.md cut here to fit the ConfigMap; report.json is the record\n"
    return text


def _config_map(meta: dict[str, Any], name: str, fitted: RunReport) -> dict[str, Any]:
    """The report's ConfigMap, owned by the CapacityTest `meta` describes."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": meta["namespace"],
            "labels": {
                "app.kubernetes.io/managed-by": "plimsoll",
                "plimsoll.dev/owner-uid": meta.get("uid", ""),
            },
            "ownerReferences": [
                {
                    "apiVersion": API_VERSION,
                    "kind": KIND,
                    "name": meta["name"],
                    "uid": meta.get("uid", ""),
                    "controller": True,
                    "blockOwnerDeletion": False,
                }
            ],
        },
        "data": {
            "report.json": fitted.to_wire_json(),
            "report.md": _report_markdown(fitted),
        },
    }


async def write_report_config_map(
    client: KubeClient,
    owner: dict[str, Any],
    report: RunReport,
    identity: OperatorIdentity | None = None,
) -> str:
    """The report as a ConfigMap owned by the CapacityTest (garbage-collected with it).

    Cluster-wide, the operator holds no ConfigMap right anywhere by default: it binds
    its report role in the CapacityTest's namespace first (`plimsoll.kube.grants`), so
    it can write ConfigMaps only where someone created a CapacityTest."""
    meta = owner["metadata"]
    if identity is not None and identity.report_role:
        await ensure_bound(
            client,
            identity,
            meta["namespace"],
            identity.report_role,
            labels={"app.kubernetes.io/managed-by": "plimsoll"},
            proof=("configmaps", "create"),
        )
    name = f"{meta['name']}-report"[:253]
    body = _config_map(meta, name, fit_report(report))
    existing = await client.get(CONFIG_MAPS, meta["namespace"], name)
    owners = (existing or {}).get("metadata", {}).get("ownerReferences") or []
    if existing is not None and not any(o.get("uid") == meta.get("uid") for o in owners):
        # Someone else's ConfigMap of that name: never overwrite it.
        raise ReportNotWrittenError(
            f"ConfigMap {meta['namespace']}/{name} exists and is not owned by this "
            "CapacityTest: the report was not written there"
        )
    # Ours: server-side applied, from the first write on, so the same report again
    # writes nothing and a user's own labels or annotations on it survive.
    try:
        await client.apply(body)
    except NotFoundError:  # an emulator that cannot apply to a missing object
        await client.create(body)
    return name


class ReportNotWrittenError(RuntimeError):
    """The report's ConfigMap name is taken by an object this resource does not own."""
