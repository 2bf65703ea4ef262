"""The bad-input corpus: malformed and hostile CapacityTest files, one case per mistake.

Each `Case` is a file's text (YAML written from a document, or raw bytes for the
file-level classes), the answer it must get (`invalid`: exit 2 with a line that starts
with `field` and holds `hint`; `valid`: exit 0, with `hint` in the output when given),
and its class (the README's "Bad input" table lists them). `judge` runs one case
through `plimsoll validate` as a user would and says how it was answered: clear,
unclear (refused, but without the field or the words of the fix), accepted (an invalid
file passed) or crashed (a traceback, or an exit code other than 0 and 2).
`tests/api/test_bad_input_corpus.py` asserts every case is clear; `bench/bad_inputs.py`
counts them.
"""

from __future__ import annotations

import copy
import datetime
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from plimsoll.cli.app import app

BASE: dict[str, Any] = {
    "apiVersion": "plimsoll.dev/v1alpha1",
    "kind": "CapacityTest",
    "metadata": {"name": "bad"},
    "spec": {
        "target": {"command": ["./server"], "resources": {"cpu": "1", "memory": "512Mi"}},
        "workload": {"mix": [{"name": "get", "path": "/"}]},
    },
}
USERS = {
    "model": "users",
    "protocol": "mcp",
    "mix": [{"name": "call", "kind": "call", "tool": "search"}],
    "users": {},
}
MCP = {"mcp": {"tools": [{"name": "search"}]}}


@dataclass(frozen=True)
class Case:
    id: str
    cls: str
    text: str | bytes
    answer: str  # "invalid" or "valid"
    field: str
    hint: str


def with_(changes: dict[str, Any], drop: tuple[str, ...] = ()) -> dict[str, Any]:
    """BASE with dotted paths set ('spec.workload.mix.0.weight') and others removed."""
    document = copy.deepcopy(BASE)
    for path, value in changes.items():
        node: Any = document
        *parents, leaf = path.split(".")
        for part in parents:
            node = node[int(part)] if part.isdigit() else node.setdefault(part, {})
        node[int(leaf) if leaf.isdigit() else leaf] = value
    for path in drop:
        node = document
        *parents, leaf = path.split(".")
        for part in parents:
            node = node[part]
        del node[leaf]
    return document


def dump(document: Any) -> str:
    return yaml.safe_dump(document, allow_unicode=True, sort_keys=False)


def bad(case_id: str, cls: str, document: Any, field: str, hint: str) -> Case:
    """An invalid case; `field` may write the first index as '.0.' like `with_` does."""
    field = field.replace(".0.", "[0].")
    return Case(case_id, cls, dump(document), "invalid", field, hint)


def _crash_classes() -> list[Case]:
    cases = []
    text = dump(BASE)
    controls = [*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F, 0xFFFE, 0xFFFF]
    for code in controls:
        cases.append(
            Case(
                f"character-U+{code:04X}",
                "characters YAML refuses",
                text.replace("name: bad", f"name: b{chr(code)}ad"),
                "invalid",
                "spec.yaml: line 4",
                f"U+{code:04X} is not allowed in YAML",
            )
        )
    template = "spec.target.podTemplate"
    for field in ("containers", "volumes", "tolerations"):
        for value in (5, True, "x", {"a": 1}):
            cases.append(
                bad(
                    f"podTemplate-{field}-{type(value).__name__}",
                    "podTemplate value of the wrong kind",
                    with_({template: {"spec": {field: value}}}),
                    f"{template}.spec.{field}",
                    "must be a list",
                )
            )
    for field in ("env", "envFrom", "volumeMounts"):
        for value in (5, True, "x", {"a": 1}):
            container = {"name": "target", field: value}
            cases.append(
                bad(
                    f"podTemplate-container-{field}-{type(value).__name__}",
                    "podTemplate value of the wrong kind",
                    with_({template: {"spec": {"containers": [container]}}}),
                    f"{template}.spec.containers[0].{field}",
                    "must be a list",
                )
            )
    for name, value, words in (
        ("date", datetime.date(2024, 1, 1), "a date"),
        ("timestamp", datetime.datetime(2024, 1, 1, 3, 0), "a timestamp"),
        ("binary", b"\x00\x01", "binary data"),
        ("set", {"a", "b"}, "a set"),
    ):
        for path in (
            f"{template}.metadata.labels.team",
            "spec.target.env.MODE",
            "spec.workload.mix.0.body",
            "metadata.annotations.note",
        ):
            cases.append(
                bad(
                    f"{name}-at-{path}", "dates, binary and sets", with_({path: value}), path, words
                )
            )
    return cases


def _keys_and_numbers() -> list[Case]:
    cases = []
    for key, written in ((None, "null"), (1.5, "1.5"), (True, "true"), (7, "7")):
        for parent in ("spec", "spec.target", "spec.workload.mix.0", "metadata.labels"):
            document = with_({})
            node: Any = document
            for part in parent.split("."):
                node = (
                    node[int(part)]
                    if part.isdigit()
                    else node[part]
                    if part in node
                    else node.setdefault(part, {})
                )
            node[key] = "x"
            cases.append(
                bad(
                    f"key-{written}-in-{parent}",
                    "non-string mapping keys",
                    document,
                    f"{parent}.{written}",
                    f"the key {written} is not text",
                )
            )
    cases.append(
        bad(
            "key-a-date",
            "non-string mapping keys",
            with_({"spec.target.env": {datetime.date(2024, 1, 1): "x"}}),
            "spec.target.env.2024-01-01",
            "the key 2024-01-01 is not text",
        )
    )
    numbers = {
        "spec.workload.mix.0.weight": "weight",
        "spec.noise.probeRate": "probe rate",
        "spec.search.precision": "precision",
        "spec.passWhen.errors.transport": "error bound",
        "spec.sizing.peak": "sizing peak",
        "spec.variants.0.value": "variant value",
        "spec.target.port": "port",
    }
    for path in numbers:
        for name, value, words in (
            ("nan", math.nan, "is not a number"),
            ("inf", math.inf, "is infinite"),
            ("minus-inf", -math.inf, "is infinite"),
            ("overflow", 1e400, "too large for a float"),
            ("beyond-64-bits", 2**70, "beyond 64 bits"),
        ):
            changes: dict[str, Any] = {path: value}
            if path.startswith("spec.sizing"):
                changes = {"spec.sizing": {"peak": value}}
            if path.startswith("spec.variants"):
                changes = {"spec.variants": [{"name": "a", "value": value}]}
            cases.append(
                bad(f"{name}-at-{path}", "NaN, infinity, overflow", with_(changes), path, words)
            )
    cases.append(
        bad(
            "nan-promql-below",
            "NaN, infinity, overflow",
            with_({"spec.passWhen.promql": [{"name": "q", "query": "up", "below": math.nan}]}),
            "spec.passWhen.promql[0].below",
            "is not a number",
        )
    )
    return cases


SECTIONS = {
    "spec.target": "target: {image:",
    "spec.workload": "workload: {model:",
    "spec.trial": "trial: {duration:",
    "spec.search": "search: {strategy:",
    "spec.passWhen": "passWhen: {latency:",
    "spec.upstream": "upstream: {routes:",
    "spec.schedule": "schedule: {cron:",
    "spec.sizing": "sizing: {peak:",
    "spec.metrics": "metrics: {",
    "spec.noise": "noise: {",
    "spec.generators": "generators: {",
    "spec.target.resources": "resources: {cpu:",
}
LISTS = [
    "spec.workload.mix",
    "spec.services",
    "spec.variants",
    "spec.upstreams",
    "spec.target.setup",
]


def _shapes() -> list[Case]:
    cases = []
    for path, example in SECTIONS.items():
        for name, value in (("text", "hello"), ("number", 5), ("list", [1, 2])):
            cases.append(
                bad(
                    f"{path}-as-{name}",
                    "a section of the wrong type",
                    with_({path: value}),
                    path,
                    f"where a mapping of its fields, e.g. `{example}",
                )
            )
    for path in LISTS:
        for name, value in (("text", "hello"), ("mapping", {"name": "x"})):
            cases.append(
                bad(
                    f"{path}-as-{name}",
                    "a list of the wrong type",
                    with_({path: value}),
                    path,
                    "belongs",
                )
            )
    cases.append(
        bad(
            "document-a-list",
            "a section of the wrong type",
            [BASE],
            "(document)",
            "a CapacityTest is a mapping with apiVersion, kind, metadata and spec",
        )
    )
    return cases


def _patterns() -> list[Case]:
    cases = []
    dns = "a Kubernetes DNS label"
    for value in ("Bad_Name", "-x", "x-", "UPPER", "a b", "é"):
        cases.append(
            bad(
                f"metadata.name-{value}",
                "a value that fails a pattern",
                with_({"metadata.name": value}),
                "metadata.name",
                dns,
            )
        )
    rows = [
        ("spec.workload.mix.0.name", "Get Item", "lowercase letters, digits"),
        ("spec.workload.mix.0.method", "get", "an HTTP method in capitals"),
        ("spec.metrics.prometheusUrl", "ftp://prometheus", "starts with http:// or https://"),
        ("spec.metrics.prometheusUrl", "http://prom\r\nX: 1", "starts with http:// or https://"),
        ("spec.metrics.prometheusUrl", "http://prom etheus", "starts with http:// or https://"),
        ("spec.target.url", "localhost:8080", "starts with http:// or https://"),
        ("spec.target.upstreamEnv", "UP-URL", "an environment variable name"),
        ("spec.target.portEnv", "1PORT", "an environment variable name"),
        ("spec.target.readinessPath", "healthz", "a path starts with '/'"),
        (
            "spec.passWhen.latency",
            [{"quantile": "p99", "below": "1s", "metric": "p99"}],
            "one of total, ttft, added",
        ),
    ]
    for path, value, words in rows:
        field = path if path != "spec.passWhen.latency" else "spec.passWhen.latency[0].metric"
        changes = {"spec.target": {"url": value}} if path == "spec.target.url" else {path: value}
        cases.append(
            bad(f"{path}-{value!r}", "a value that fails a pattern", with_(changes), field, words)
        )
    images = [
        "UPPER/app",
        "a b",
        "repo:tag:tag",
        ":tag",
        "app@sha256:zz",
        "x" * 600,
        "app:" + "t" * 200,
        "-app",
    ]
    for path in ("spec.target.image", "spec.generators.image", "spec.upstream.image"):
        for image in images:
            cases.append(
                bad(
                    f"image-{path}-{image[:12]}",
                    "an image reference that is not valid",
                    with_({path: image}),
                    path,
                    "image reference" if len(image) <= 512 else "at most 512",
                )
            )
    return cases


def _duplicates() -> list[Case]:
    twice = "is already the name of"
    route = {"name": "r", "path": "/a"}
    service = {"name": "db", "command": ["db"], "port": 5432}
    step = {"name": "seed", "command": ["seed"]}
    rows = [
        (
            "mix",
            {"spec.workload.mix": [{"name": "get"}, {"name": "get", "path": "/b"}]},
            "spec.workload.mix[1].name",
            "mix[0]",
        ),
        (
            "routes",
            {"spec.upstream.routes": [route, {**route, "path": "/b"}]},
            "spec.upstream.routes[1].name",
            "routes[0]",
        ),
        (
            "variants",
            {"spec.variants": [{"name": "a"}, {"name": "a"}]},
            "spec.variants[1].name",
            "variants[0]",
        ),
        (
            "services",
            {"spec.services": [service, {**service, "port": 5433}]},
            "spec.services[1].name",
            "services[0]",
        ),
        ("setup", {"spec.target.setup": [step, step]}, "spec.target.setup[1].name", "setup[0]"),
        (
            "setup-and-teardown",
            {"spec.target.setup": [step], "spec.target.teardown": [step]},
            "spec.target.teardown[0].name",
            "setup[0]",
        ),
        (
            "mcp-tools",
            {"spec.upstream.mcp": {"tools": [{"name": "t"}, {"name": "t"}]}},
            "spec.upstream.mcp.tools[1].name",
            "tools[0]",
        ),
        (
            "upstreams",
            {"spec.upstreams": [{"name": "auth", "envVar": "A"}, {"name": "auth", "envVar": "B"}]},
            "spec.upstreams[1].name",
            "upstreams[0]",
        ),
        (
            "add-services",
            {"spec.variants": [{"name": "v", "addServices": [service, service]}]},
            "spec.variants[0].addServices[1].name",
            "addServices[0]",
        ),
        (
            "variant-services",
            {"spec.variants": [{"name": "v", "services": [service, service]}]},
            "spec.variants[0].services[1].name",
            "services[0]",
        ),
    ]
    return [
        bad(f"duplicate-{i}", "duplicate names", with_(c), f, f"{twice} {w}") for i, c, f, w in rows
    ]


def _kinds() -> list[Case]:
    cases = []
    for kind in ("Capacitytest", "CapacityTests", "capacitytest", "Job"):
        document = with_({"kind": kind})
        if kind == "Job":
            document["apiVersion"] = "plimsoll.dev/v1alpha1"
        cases.append(bad(f"kind-{kind}", "a wrong kind", document, "kind", f"found {kind!r}"))
    cases.append(
        bad(
            "kind-missing",
            "a wrong kind",
            with_({}, drop=("kind",)),
            "kind",
            "required field is missing",
        )
    )
    cases.append(
        bad(
            "apiVersion-missing",
            "a wrong kind",
            with_({}, drop=("apiVersion",)),
            "apiVersion",
            "required field is missing",
        )
    )
    cases.append(
        bad(
            "apiVersion-v1",
            "a wrong kind",
            with_({"apiVersion": "plimsoll.dev/v1"}),
            "apiVersion",
            "found 'plimsoll.dev/v1'",
        )
    )
    cases.append(
        bad(
            "header-missing",
            "a wrong kind",
            with_({}, drop=("kind", "apiVersion")),
            "apiVersion",
            "write plimsoll.dev/v1alpha1",
        )
    )
    other = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    argo = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "a"}}
    cases.append(
        Case(
            "multi-document-with-a-configmap",
            "other kinds in a multi-document file",
            dump(BASE) + "---\n" + dump(other),
            "valid",
            "",
            "document 2 is kind ConfigMap (v1), not a CapacityTest: skipped",
        )
    )
    cases.append(
        Case(
            "multi-document-with-an-application",
            "other kinds in a multi-document file",
            dump(argo) + "---\n" + dump(BASE),
            "valid",
            "",
            "document 1 is kind Application (argoproj.io/v1alpha1)",
        )
    )
    cases.append(
        Case(
            "only-another-kind",
            "other kinds in a multi-document file",
            dump(other),
            "invalid",
            "",
            "holds no CapacityTest (kind: CapacityTest): document 1 is kind ConfigMap",
        )
    )
    misspelt = dump(BASE) + "---\n" + dump(with_({"kind": "CapacityTset"}))
    cases.append(
        Case(
            "multi-document-misspelt-kind",
            "a wrong kind",
            misspelt,
            "invalid",
            "document 2: kind",
            "found 'CapacityTset'",
        )
    )
    cases.append(
        Case(
            "multi-document-a-list",
            "other kinds in a multi-document file",
            dump(BASE) + "---\n- a\n",
            "invalid",
            "document 2: (document)",
            "found a list",
        )
    )
    return cases


def _snake_case() -> list[Case]:
    rows = [
        ("spec.pass_when", {}, "passWhen"),
        ("spec.trial.warm_up", "5s", "warmUp"),
        ("spec.target.upstream_env", "U", "upstreamEnv"),
        ("spec.target.port_env", "P", "portEnv"),
        ("spec.target.readiness_path", "/h", "readinessPath"),
        ("spec.target.startup_timeout", "5s", "startupTimeout"),
        ("spec.target.pod_template", {}, "podTemplate"),
        ("spec.search.max_trials", 5, "maxTrials"),
        ("spec.search.probe_duration", "5s", "probeDuration"),
        ("spec.history_limit", 3, "historyLimit"),
        ("spec.noise.floor_quantile", "p99", "floorQuantile"),
        ("spec.noise.probe_rate", 5, "probeRate"),
        ("spec.metrics.prometheus_url", "http://p", "prometheusUrl"),
        ("spec.workload.max_in_flight", 5, "maxInFlight"),
        ("spec.workload.mcp_path", "/m", "mcpPath"),
        ("spec.workload.mix.0.expect_status", [200], "expectStatus"),
        ("spec.generators.max_cpu", "80%", "maxCpu"),
        ("spec.attribution.cpu_busy", "80%", "cpuBusy"),
    ]
    return [
        bad(
            f"snake-{path}",
            "snake_case names the API server drops",
            with_({path: value}),
            path,
            f"the name is {camel!r} (camelCase)",
        )
        for path, value, camel in rows
    ]


def _wrongly_accepted() -> list[Case]:
    cls = "accepted before, refused now"
    sizing = {"peak": 1000}
    extra = [{"name": "calls", "query": 'sum(up{namespace="$namespace"})', "per": "request"}]
    rows: list[tuple[str, dict[str, Any], str, str]] = [
        # Issue 53: pairs the generator cannot drive failed only at the first trial.
        (
            "http-users-with-user-behaviour",
            {"spec.workload.model": "users", "spec.workload.users": {"burstGapMedian": "6s"}},
            "spec.workload",
            "is built for protocol 'mcp'",
        ),
        (
            "utilisation-0",
            {"spec.sizing": {**sizing, "utilisation": "0%"}},
            "spec.sizing.utilisation",
            "greater than 0",
        ),
        (
            "utilisation-0-number",
            {"spec.sizing": {**sizing, "utilisation": 0}},
            "spec.sizing.utilisation",
            "greater than 0",
        ),
        ("peak-inf", {"spec.sizing": {"peak": math.inf}}, "spec.sizing.peak", "is infinite"),
        ("peak-huge", {"spec.sizing": {"peak": 1e15}}, "spec.sizing.peak", "less than or equal to"),
        (
            "sizing-variant-unknown",
            {"spec.sizing": {**sizing, "variant": "pg"}},
            "spec.sizing.variant",
            "'pg' names no variant",
        ),
        (
            "sizing-calls-metric-unknown",
            {"spec.sizing": {**sizing, "store": {"callsMetric": "calls"}}},
            "spec.sizing.store.callsMetric",
            "names no metrics.extra entry",
        ),
        (
            "sizing-cpu-metric-unknown",
            {
                "spec.sizing": {**sizing, "store": {"cpuPerCallMetric": "cpu"}},
                "spec.metrics.extra": extra,
            },
            "spec.sizing.store.cpuPerCallMetric",
            "names no metrics.extra entry",
        ),
        (
            "sizing-bytes-metric-unknown",
            {"spec.sizing": {**sizing, "store": {"bytesPerKeyMetric": "b"}}},
            "spec.sizing.store.bytesPerKeyMetric",
            "names no metrics.extra entry",
        ),
        (
            "burst-gap-0",
            {"spec.workload": {**USERS, "users": {"burstGapMedian": "0s"}}, "spec.upstream": MCP},
            "spec.workload.users.burstGapMedian",
            "greater than 0",
        ),
        (
            "mean-gap-0",
            {
                "spec.workload": {**USERS, "users": {"meanGap": "0s", "burstGapMedian": "0s"}},
                "spec.upstream": MCP,
            },
            "spec.workload.users.meanGap",
            "greater than 0",
        ),
        (
            "keep-alive-timeout-0",
            {"spec.workload": {**USERS, "users": {"keepAliveTimeout": "0s"}}, "spec.upstream": MCP},
            "spec.workload.users.keepAliveTimeout",
            "greater than 0",
        ),
        (
            "target-env-upstream",
            {"spec.target.env": {"UPSTREAM_URL": "http://x"}},
            "spec.target.env.UPSTREAM_URL",
            "would silently replace",
        ),
        (
            "target-env-port",
            {"spec.target.env": {"PORT": "1"}},
            "spec.target.env.PORT",
            "would silently replace",
        ),
        (
            "port-env-is-upstream-env",
            {"spec.target.portEnv": "UPSTREAM_URL"},
            "spec.target.portEnv",
            "also upstreamEnv",
        ),
        (
            "subpath-dotdot",
            {
                "spec.target.podTemplate": {
                    "spec": {
                        "containers": [
                            {
                                "name": "target",
                                "volumeMounts": [
                                    {"name": "v", "mountPath": "/m", "subPath": "../etc"}
                                ],
                            }
                        ]
                    }
                }
            },
            "spec.target.podTemplate.spec.containers[0].volumeMounts[0].subPath",
            "no '..'",
        ),
        (
            "subpath-inner-dotdot",
            {
                "spec.target.podTemplate": {
                    "spec": {
                        "containers": [
                            {
                                "name": "target",
                                "volumeMounts": [
                                    {"name": "v", "mountPath": "/m", "subPath": "a/../../b"}
                                ],
                            }
                        ]
                    }
                }
            },
            "spec.target.podTemplate.spec.containers[0].volumeMounts[0].subPath",
            "no '..'",
        ),
        (
            "subpath-absolute",
            {
                "spec.target.podTemplate": {
                    "spec": {
                        "containers": [
                            {
                                "name": "target",
                                "volumeMounts": [
                                    {"name": "v", "mountPath": "/m", "subPath": "/etc"}
                                ],
                            }
                        ]
                    }
                }
            },
            "spec.target.podTemplate.spec.containers[0].volumeMounts[0].subPath",
            "no leading '/'",
        ),
        (
            "template-env-name",
            {
                "spec.target.podTemplate": {
                    "spec": {
                        "containers": [{"name": "target", "env": [{"name": "A-B", "value": "1"}]}]
                    }
                }
            },
            "spec.target.podTemplate.spec.containers[0].env[0].name",
            "not an environment variable name",
        ),
        (
            "template-env-no-name",
            {
                "spec.target.podTemplate": {
                    "spec": {"containers": [{"name": "target", "env": [{"value": "1"}]}]}
                }
            },
            "spec.target.podTemplate.spec.containers[0].env[0].name",
            "not an environment variable name",
        ),
        (
            "promql-below-nan",
            {"spec.passWhen.promql": [{"name": "q", "query": "up", "below": math.nan}]},
            "spec.passWhen.promql[0].below",
            "is not a number",
        ),
        (
            "latency-below-nan",
            {"spec.passWhen.latency": [{"quantile": "p99", "below": math.nan}]},
            "spec.passWhen.latency[0].below",
            "is not a number",
        ),
        (
            "weight-nan",
            {"spec.workload.mix.0.weight": math.nan},
            "spec.workload.mix[0].weight",
            "is not a number",
        ),
    ]
    for status in (0, 99, 600, 1000, -200):
        rows.append(
            (
                f"expect-status-{status}",
                {"spec.workload.mix.0.expectStatus": [200, status]},
                "spec.workload.mix[0].expectStatus[1]",
                "Input should be",
            )
        )
    for cron in (
        "0 0 30 2 *",
        "0 0 31 4 *",
        "0 0 31 6 *",
        "0 0 31 9 *",
        "0 0 31 11 *",
        "0 0 30,31 2 *",
    ):
        rows.append(
            (
                f"cron-never-{cron}",
                {"spec.schedule": {"cron": cron}},
                "spec.schedule.cron",
                "never fires",
            )
        )
    for where, key in (
        ("spec.target.env", "target"),
        ("spec.services.0.env", "service"),
        ("spec.target.setup.0.env", "setup"),
        ("spec.variants.0.env", "variant"),
        ("spec.services.0.targetEnv", "targetEnv"),
    ):
        for name in ("1BAD", "A-B", "A B", "É"):
            changes: dict[str, Any] = {}
            if where.startswith("spec.services"):
                changes["spec.services"] = [
                    {
                        "name": "db",
                        "command": ["db"],
                        "port": 1,
                        where.rsplit(".", 1)[1]: {name: "x"},
                    }
                ]
            elif where.startswith("spec.target.setup"):
                changes["spec.target.setup"] = [{"name": "s", "command": ["s"], "env": {name: "x"}}]
            elif where.startswith("spec.variants"):
                changes["spec.variants"] = [{"name": "v", "env": {name: "x"}}]
            else:
                changes[where] = {name: "x"}
            field = where.replace(".0.", "[0].")
            rows.append(
                (f"env-name-{key}-{name}", changes, f"{field}.{name}", "environment variable name")
            )
    return [bad(i, cls, with_(c), f, h) for i, c, f, h in rows]


def _injection() -> list[Case]:
    """What reaches a request head (header names and values, paths, the MCP revision and
    tool) with CR, LF, NUL, a non-token name or non-ASCII; and a PromQL query over 1024
    characters, which the operator's parser must never see."""
    cls = "header and request-line injection"
    name_words = "a header name of letters, digits"
    value_words = "a header value holds visible ASCII"
    path_words = "a path starts with '/'"
    values = {
        "crlf": "a\r\nX-Injected: 1",
        "lf": "a\nb",
        "nul": "a\x00b",
        "latin1": "caf\u00e9",
        "snowman": "\u2603",
    }
    names = {
        "crlf": "X-A\r\nX-B",
        "colon": "X-A:",
        "space": "X A",
        "nul": "X\x00A",
        "latin1": "\u00c9t\u00e9",
        "empty": "",
    }
    paths = {"crlf": "/a\r\nHost: evil", "space": "/a b", "nul": "/a\x00", "latin1": "/caf\u00e9"}
    rows: list[tuple[str, dict[str, Any], str, str]] = []
    for key, value in values.items():
        rows.append(
            (
                f"header-value-{key}",
                {"spec.workload.mix.0.headers": {"X-Tenant": value}},
                "spec.workload.mix[0].headers.X-Tenant",
                value_words,
            )
        )
        rows.append(
            (
                f"mcp-revision-{key}",
                {"spec.workload.mcpRevision": value},
                "spec.workload.mcpRevision",
                value_words,
            )
        )
        rows.append(
            (
                f"mcp-tool-{key}",
                {
                    "spec.workload.protocol": "mcp",
                    "spec.workload.mix": [{"name": "call", "kind": "call", "tool": value}],
                    "spec.upstream": MCP,
                },
                "spec.workload.mix[0].tool",
                value_words,
            )
        )
    for key, name in names.items():
        rows.append(
            (
                f"header-name-{key}",
                {"spec.workload.mix.0.headers": {name: "1"}},
                "spec.workload.mix[0].headers",
                "is not a header name",
            )
        )
        rows.append(
            (
                f"client-ip-header-{key}",
                {"spec.workload.clientIps": {"pool": 10, "header": name}},
                "spec.workload.clientIps.header",
                name_words,
            )
        )
        rows.append(
            (
                f"credentials-header-{key}",
                {"spec.workload.credentials": {"header": name, "template": "{index}"}},
                "spec.workload.credentials.header",
                name_words,
            )
        )
    for key, value in values.items():
        rows.append(
            (
                f"credentials-template-{key}",
                {"spec.workload.credentials": {"template": value + "{index}"}},
                "spec.workload.credentials.template",
                value_words,
            )
        )
    chat = {
        "spec.workload.protocol": "openai",
        "spec.workload.model": "users",
        "spec.workload.mix": [{"name": "chat", "kind": "chat", "method": "POST"}],
        "spec.workload.conversation": {"turns": 2},
    }
    for key, credentials, hint in (
        ("no-placeholder", {"template": "Bearer sk-1"}, "has no '{index}'"),
        ("other-braces", {"template": "Bearer {index}-{team}"}, "braces other than"),
        ("framing", {"header": "Content-Length", "template": "{index}"}, "frames the request"),
        (
            "identity-framing",
            {"template": "k{index}", "identity": {"Host": "u{index}"}},
            "credentials.identity.Host 'Host' frames the request",
        ),
        (
            "identity-same-header",
            {"template": "k{index}", "identity": {"authorization": "u{index}"}},
            "names a header twice",
        ),
        (
            "identity-no-placeholder",
            {"template": "k{index}", "identity": {"X-User-Id": "alice"}},
            "credentials.identity.X-User-Id 'alice' has no '{index}'",
        ),
    ):
        rows.append(
            (
                f"credentials-{key}",
                {**chat, "spec.workload.credentials": credentials},
                "spec.workload.credentials",
                hint,
            )
        )
    key_template = {"template": "Bearer sk-user-{index}"}
    rows.append(
        (
            "credentials-without-users",
            {"spec.workload.credentials": key_template},
            "spec.workload",
            "'credentials' are per modeled user",
        )
    )
    clash = [{"name": "chat", "kind": "chat", "method": "POST", "headers": {"authorization": "k"}}]
    rows.append(
        (
            "credentials-header-also-in-mix",
            {**chat, "spec.workload.mix": clash, "spec.workload.credentials": key_template},
            "spec.workload",
            "is also set by ['chat']",
        )
    )
    team = [{"name": "chat", "kind": "chat", "method": "POST", "headers": {"x-user-id": "t"}}]
    rows.append(
        (
            "credentials-identity-also-in-mix",
            {
                **chat,
                "spec.workload.mix": team,
                "spec.workload.credentials": {
                    **key_template,
                    "identity": {"X-User-Id": "u{index}"},
                },
            },
            "spec.workload",
            "credentials.identity.X-User-Id 'X-User-Id' is also set by ['chat']",
        )
    )
    for key, path in paths.items():
        for where in ("spec.workload.mix.0.path", "spec.workload.mcpPath"):
            rows.append((f"path-{where}-{key}", {where: path}, where, path_words))
        rows.append(
            (
                f"verify-path-{key}",
                {"spec.workload.clientIps": {"pool": 10, "verifyPath": path}},
                "spec.workload.clientIps.verifyPath",
                path_words,
            )
        )
    long_query = 'sum(up{namespace="$namespace"})' + " + 0" * 300
    rows.append(
        (
            "promql-extra-too-long",
            {"spec.metrics.extra": [{"name": "x", "query": long_query}]},
            "spec.metrics.extra[0].query",
            "at most 1024 are allowed",
        )
    )
    rows.append(
        (
            "promql-bound-too-long",
            {"spec.passWhen.promql": [{"name": "x", "query": long_query, "below": 1}]},
            "spec.passWhen.promql[0].query",
            "at most 1024 are allowed",
        )
    )
    return [bad(i, cls, with_(c), f, h) for i, c, f, h in rows]


def _shared_cluster() -> list[Case]:
    """Issue 52's smaller gaps: what one tenant could slip past the model before."""
    cls = "shared-cluster limits"
    rows: list[tuple[str, dict[str, Any], str, str]] = []
    digits = {"arabic-indic": "\u0665\u0661\u0662", "fullwidth": "\uff15\uff11\uff12"}
    for script, number in digits.items():
        rows += [
            (
                f"memory-{script}-digits",
                {"spec.target.resources.memory": f"{number}Mi"},
                "spec.target.resources.memory",
                "is not a Kubernetes memory quantity",
            ),
            (
                f"cpu-{script}-digits",
                {"spec.target.resources.cpu": number},
                "spec.target.resources.cpu",
                "is not a Kubernetes CPU quantity",
            ),
            (
                f"duration-{script}-digits",
                {"spec.trial": {"duration": f"{number}s"}},
                "spec.trial.duration",
                "is not a duration",
            ),
        ]
    for baseline in ("0", "00", "000000"):
        rows.append(
            (
                f"regression-baseline-{baseline}",
                {"spec.regression": {"baseline": baseline}},
                "spec.regression.baseline",
                "",
            )
        )
    for cron, gap in (
        ("* * * * *", "1 minute"),
        ("*/2 * * * *", "2 minute"),
        ("*/4 * * * *", "4 minute"),
        ("0,1 3 * * *", "1 minute"),
        ("0-3 * * * *", "1 minute"),
        ("0,59 0,23 * * *", "1 minute"),
        ("58,59 23 * * 1", "1 minute"),
    ):
        rows.append(
            (
                f"cron-every-{cron}",
                {"spec.schedule": {"cron": cron}},
                "spec.schedule.cron",
                f"fires {gap}(s) apart: at most every 5 minutes",
            )
        )
    # The model bounds a template at 12 levels; past 64 the file's reader refuses first,
    # naming the line (no YAML or JSON decoder recursion is ever reached).
    for levels, field, hint in (
        (13, "spec.target.podTemplate", "nested more than 12 levels deep"),
        (40, "spec.target.podTemplate", "nested more than 12 levels deep"),
        (200, "spec.yaml: document 1 line", "nested more than 64 levels deep"),
    ):
        deep: dict[str, Any] = {}
        for _ in range(levels):
            deep = {"a": deep}
        rows.append(
            (
                f"pod-template-{levels}-levels",
                {"spec.target.podTemplate": {"metadata": {"labels": deep}}},
                field,
                hint,
            )
        )
    # The admin's limits, at the chart's defaults, as the operator applies them.
    rows += [
        ("limit-pods", {"spec.generators": {"replicas": 48}}, "bad: spec", "limits.pods = 40"),
        (
            "limit-generators",
            {"spec.generators": {"replicas": "auto", "maxReplicas": 64}},
            "bad: spec",
            "limits.generators = 16",
        ),
        (
            "limit-trials",
            {
                "spec.variants": [{"name": f"v{i}"} for i in range(16)],
                "spec.search": {"maxTrials": 500},
            },
            "bad: spec",
            "limits.trials = 400",
        ),
        (
            "limit-cpu",
            {"spec.target.resources": {"cpu": "9999", "memory": "1Gi"}},
            "bad: spec",
            "limits.cpu = 32",
        ),
        (
            "limit-memory",
            {"spec.target.resources": {"cpu": "1", "memory": "60Ti"}},
            "bad: spec",
            "limits.memory = 64Gi",
        ),
        (
            "limit-duration",
            {"spec.trial": {"duration": "6h"}, "spec.search": {"maxTrials": 100}},
            "bad: spec",
            "limits.duration = 12h",
        ),
    ]
    # target.url at the cluster itself, in the spellings item 3 found getting through.
    for case_id, url, hint in (
        ("target-url-alibaba-metadata", "http://100.100.100.200/latest/meta-data/", "metadata"),
        ("target-url-metadata-ipv4-compatible", "http://[::a9fe:a9fe]/", "link-local"),
        ("target-url-metadata-nat64", "http://[64:ff9b::a9fe:a9fe]/", "link-local"),
        ("target-url-metadata-6to4", "http://[2002:a9fe:a9fe::1]/", "link-local"),
        ("target-url-loopback-nat64", "http://[64:ff9b::7f00:1]:8089/", "loopback"),
        ("target-url-kubelet", "https://10.0.12.7:10250/pods", "the kubelet's API"),
        ("target-url-kubelet-read-only", "http://10.0.12.7:10255/stats", "read-only"),
        ("target-url-kube-proxy", "http://10.0.12.7:10256/healthz", "kube-proxy"),
        # Not the cluster itself, but not listed by the admin (none is, by default).
        ("target-url-other-teams-service", "http://orders.team-b.svc:8080/", "externalTargets"),
        ("target-url-cluster-ip", "http://10.96.14.2/", "externalTargets"),
        ("target-url-third-party", "https://api.example.org/v1/charge", "externalTargets"),
    ):
        rows.append((case_id, {"spec.target": {"url": url}}, "bad: spec.target.url", hint))
    # PromQL scoped to the run's namespace but asking Prometheus too much (item 8).
    scoped = 'x{namespace="$namespace"}'
    for case_id, query, hint in (
        ("promql-range-a-year", f"sum(rate({scoped}[365d]))", "a range of 365d"),
        ("promql-subquery-30d-1s", f"max_over_time(rate({scoped}[1m])[30d:1s])", "range of 30d"),
        ("promql-subquery-12h-1s", f"max_over_time(rate({scoped}[1m])[12h:1s])", "43,200 times"),
        (
            "promql-nested-subqueries",
            f"max_over_time(max_over_time({scoped}[1h:1s])[1h:1s])",
            "12,960,000 times",
        ),
    ):
        rows.append(
            (
                case_id,
                {"spec.metrics.extra": [{"name": "x", "query": query}]},
                "bad: spec.metrics.extra[0].query",
                hint,
            )
        )
    rows.append(
        (
            "promql-bound-subquery-1ms-step",
            {
                "spec.passWhen.promql": [
                    {"name": "x", "query": f"max_over_time({scoped}[$window:1ms])", "below": 1}
                ]
            },
            "bad: spec.passWhen.promql[0].query",
            "60,000 times",
        )
    )
    # The podTemplate gaps of item 4: the model's own (any cluster), then the admin's
    # allow-lists at the chart's defaults (`plimsoll validate` applies them).
    template = "spec.target.podTemplate"
    for case_id, part, field, hint in (
        (
            "pod-template-run-as-user-true",
            {"spec": {"securityContext": {"runAsUser": True}}},
            f"{template}.spec.securityContext.runAsUser",
            "found true/false",
        ),
        (
            "pod-template-supplemental-group-0",
            {"spec": {"securityContext": {"supplementalGroups": [0]}}},
            f"{template}.spec.securityContext.supplementalGroups[0]",
            "group 0 is root's",
        ),
        (
            "pod-template-etcd-node",
            {"spec": {"nodeSelector": {"node-role.kubernetes.io/etcd": "true"}}},
            template,
            "podTemplate.spec.nodeSelector.node-role.kubernetes.io/etcd: places the target on a "
            "control-plane node",
        ),
        (
            "pod-template-affinity-to-kube-system",
            {
                "spec": {
                    "affinity": {
                        "podAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": [
                                {
                                    "labelSelector": {"matchLabels": {"component": "etcd"}},
                                    "namespaces": ["kube-system"],
                                    "topologyKey": "kubernetes.io/hostname",
                                }
                            ]
                        }
                    }
                }
            },
            f"{template}.spec.affinity.podAffinity",
            "names other namespaces",
        ),
        (
            "pod-template-priority-class",
            {"spec": {"priorityClassName": "business-critical"}},
            f"bad: {template}.spec.priorityClassName",
            "podTemplate.priorityClasses",
        ),
        (
            "pod-template-gpu-toleration",
            {"spec": {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}]}},
            f"bad: {template}.spec.tolerations[0].key",
            "podTemplate.tolerationKeys",
        ),
        (
            "pod-template-one-node-by-name",
            {"spec": {"nodeSelector": {"kubernetes.io/hostname": "node-7"}}},
            f"bad: {template}.spec.nodeSelector.kubernetes.io/hostname",
            "podTemplate.nodeLabels",
        ),
        (
            "pod-template-apparmor-unconfined",
            {
                "metadata": {
                    "annotations": {
                        "container.apparmor.security.beta.kubernetes.io/target": "unconfined"
                    }
                }
            },
            f"bad: {template}.metadata.annotations.container.apparmor",
            "podTemplate.metadataPrefixes",
        ),
        (
            "pod-template-webhook-label",
            {"metadata": {"labels": {"sidecar.istio.io/inject": "true"}}},
            f"bad: {template}.metadata.labels.sidecar.istio.io/inject",
            "podTemplate.metadataPrefixes",
        ),
    ):
        rows.append((case_id, {template: part}, field, hint))
    cases = [bad(i, cls, with_(c), f, h) for i, c, f, h in rows]
    # The issue's own case, 1,100 levels: written as flow YAML by hand (a dumper recurses).
    text = dump(with_({"spec.target.podTemplate": {"metadata": {"labels": "DEEP"}}}))
    deep = "{a: " * 1100 + "{}" + "}" * 1100
    # Refused by the reader's depth check or, when the parser's recursion ends first
    # (it depends on the recursion limit of the moment), its guard: both say 64 levels.
    hint = "64 levels"
    field = "spec.yaml"
    cases.append(
        Case("pod-template-1100-levels", cls, text.replace("DEEP", deep), "invalid", field, hint)
    )
    return cases


def _valid() -> list[Case]:
    """Near misses that must stay valid: the checks above refuse only what is wrong."""
    cls = "valid near misses"
    rows = [
        ("image-plain", {"spec.target.image": "nginx"}),
        ("image-registry-port", {"spec.target.image": "registry.local:5000/team/app:1.2.3"}),
        ("image-digest", {"spec.target.image": "ghcr.io/acme/api@sha256:" + "a" * 64}),
        (
            "image-tag-and-digest",
            {"spec.target.image": "docker.io/library/nginx:1.27@sha256:" + "b" * 64},
        ),
        ("image-separators", {"spec.target.image": "quay.io/a__b/c-d.e:v1_2"}),
        ("cron-leap-day", {"spec.schedule": {"cron": "0 0 29 2 *"}}),
        ("cron-every-5-minutes", {"spec.schedule": {"cron": "*/5 * * * *"}}),
        ("cron-5-minutes-across-midnight", {"spec.schedule": {"cron": "0,55 0,23 * * *"}}),
        ("regression-baseline-1", {"spec.regression": {"baseline": "1"}}),
        ("regression-baseline-10", {"spec.regression": {"baseline": "10"}}),
        ("cron-31-or-monday", {"spec.schedule": {"cron": "0 0 31 2 1"}}),
        (
            "subpath-nested",
            {
                "spec.target.podTemplate": {
                    "spec": {
                        "containers": [
                            {
                                "name": "target",
                                "volumeMounts": [
                                    {"name": "v", "mountPath": "/m", "subPath": "a/b..c"}
                                ],
                            }
                        ]
                    }
                }
            },
        ),
        ("env-lowercase", {"spec.target.env": {"log_level": "debug"}}),
        ("expect-status-204-and-404", {"spec.workload.mix.0.expectStatus": [204, 404]}),
        ("label-key-with-dots", {"metadata.labels": {"app.kubernetes.io/name": "x"}}),
        ("header-value-space-and-tab", {"spec.workload.mix.0.headers": {"X-A": "a b\tc"}}),
        ("client-ip-header-token", {"spec.workload.clientIps": {"pool": 2, "header": "X-Real-IP"}}),
        ("mcp-revision-stateless", {"spec.workload.mcpRevision": "2026-07-28"}),
        (
            "credentials-per-user-key",
            {
                "spec.workload.protocol": "openai",
                "spec.workload.model": "users",
                "spec.workload.mix": [{"name": "chat", "kind": "chat", "method": "POST"}],
                "spec.workload.conversation": {"turns": 2},
                "spec.workload.credentials": {
                    "header": "X-Api-Key",
                    "template": "sk-{index}",
                    "first": 1,
                },
            },
        ),
        ("path-with-query", {"spec.workload.mix.0.path": "/a?b=%20c&d=e"}),
    ]
    return [Case(i, cls, dump(with_(c)), "valid", "", "") for i, c in rows]


def all_cases() -> list[Case]:
    return [
        *_crash_classes(),
        *_keys_and_numbers(),
        *_shapes(),
        *_patterns(),
        *_duplicates(),
        *_kinds(),
        *_snake_case(),
        *_wrongly_accepted(),
        *_injection(),
        *_shared_cluster(),
        *_valid(),
    ]


def judge(case: Case, folder: Path) -> tuple[str, str]:
    """('clear' | 'unclear' | 'accepted' | 'crashed', the output) for one case."""
    path = folder / "spec.yaml"
    if isinstance(case.text, bytes):
        path.write_bytes(case.text)
    else:
        path.write_text(case.text, encoding="utf-8")
    result = CliRunner().invoke(app, ["validate", str(path)])
    output = result.output
    escaped = result.exception is not None and not isinstance(result.exception, SystemExit)
    if escaped or result.exit_code not in (0, 2) or "Traceback" in output:
        return "crashed", output + repr(result.exception)
    if "could not be checked" in output:
        return "crashed", output
    if case.answer == "valid":
        ok = result.exit_code == 0 and case.hint in output
        return ("clear" if ok else "unclear"), output
    if result.exit_code == 0:
        return "accepted", output
    lines = [line.strip().replace(f"{folder}/", "") for line in output.splitlines()]
    named = any(
        line.startswith(case.field) and case.hint in line and not _raw_regex(line) for line in lines
    )
    return ("clear" if named else "unclear"), output


def _raw_regex(line: str) -> bool:
    """A pattern shown to the user as a regex, which says little to most people."""
    return "should match pattern" in line or "^[" in line
