"""report.md carries every figure a seed reports (issue 56, item 5): the machine the
figures came from (the seeds say theirs are lower bounds for their host, and so are
Plimsoll's), and the spec's `metrics.extra` figures per step."""

from plimsoll.api.host import HostDescription
from plimsoll.api.spec import ExtraMetric
from plimsoll.api.step import Verdict
from plimsoll.report.markdown import render_markdown
from tests.reportfixtures import Run, make_report

HOST = HostDescription(
    cpu_model="AMD EPYC 7B13",
    cores=2,
    memory_bytes=24 * 2**30,
    kernel="6.1.0-26-amd64",
    virtualization="kvm",
)


def _host_row(text: str) -> str:
    [row] = [line for line in text.splitlines() if line.startswith("| host |")]
    return row


def test_the_host_is_one_row_of_the_reports_header() -> None:
    report = make_report({"default": Run(level=100, high=200)})
    report.host = HOST
    assert _host_row(render_markdown(report)) == (
        "| host | AMD EPYC 7B13, 2 cores, 24 GiB, Linux 6.1.0-26-amd64, virtualised (kvm) |"
    )
    bare = HOST.model_copy(update={"virtualization": "none", "cpu_model": ""})
    assert bare.line() == "CPU model unknown, 2 cores, 24 GiB, Linux 6.1.0-26-amd64, bare metal"


def test_a_host_not_described_says_so_and_why_on_a_cluster() -> None:
    report = make_report({"default": Run(level=100, high=200)})
    assert _host_row(render_markdown(report)) == "| host | not described |"
    report.platform = "kubernetes"
    assert "the operator reads no Nodes" in _host_row(render_markdown(report))


def test_metrics_extra_is_a_table_of_report_md_with_units_per_level() -> None:
    """The seeds report store calls per request and bytes per key; with `metrics.extra`
    so does report.md now, not only report.json."""
    steps = [(100, Verdict.PASS, 0.3), (200, Verdict.FAIL, 0.5)]
    report = make_report({"default": Run(level=100, high=200, steps=steps)})
    report.spec.metrics.extra = [
        ExtraMetric(
            name="valkey_calls", query='x{namespace="$namespace"}', unit="calls", per="request"
        ),
        ExtraMetric(name="bytes_per_key", query='y{namespace="$namespace"}', unit="bytes"),
    ]
    assert "## Figures from metrics.extra" not in render_markdown(report)  # none read yet
    first, second = report.steps[0], report.steps[1]
    assert first.target is not None
    assert second.target is not None
    first.target.extra = {"valkey_calls": 1.55, "bytes_per_key": 212.0}
    second.target.extra = {"valkey_calls": 1.5512}
    text = render_markdown(report)
    section = text.split("## Figures from metrics.extra", 1)[1].split("\n## ", 1)[0]
    assert (
        "| step | variant | level | valkey_calls (calls per request) | bytes_per_key (bytes) |"
        in section
    )
    assert f"| {first.index} | default | {first.level:,} | 1.55 | 212 |" in section
    assert f"| {second.index} | default | {second.level:,} | 1.551 | — |" in section
