"""Credentials in URLs never reach a message: only the userinfo is replaced."""

from __future__ import annotations

import pytest

from plimsoll.api.urls import redact_url, redact_urls_in


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://user:pass@host:9090/p?q=1", "https://***@host:9090/p?q=1"),
        ("http://token@10.0.0.1", "http://***@10.0.0.1"),
        ("https://:only-a-password@host", "https://***@host"),
        ("http://host/path@not-userinfo", "http://host/path@not-userinfo"),
        ("http://host?who=a@b", "http://host?who=a@b"),
        ("http://host:9090", "http://host:9090"),
        ("HTTPS://u:p@h", "HTTPS://***@h"),
    ],
)
def test_only_the_userinfo_is_redacted(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_every_url_in_a_message_is_redacted() -> None:
    text = "tried https://a:b@one/x then http://c:d@two:80 and gave up"
    assert redact_urls_in(text) == "tried https://***@one/x then http://***@two:80 and gave up"
    assert "b@" not in redact_urls_in(text)
    assert "d@" not in redact_urls_in(text)


def test_a_deep_document_is_redacted_everywhere_and_json_text_stays_json() -> None:
    import json

    from plimsoll.api.urls import redact_strings

    doc: dict[str, object] = {"u": "https://u:p@h", "list": [{"x": "http://a:b@c/d"}, 3, None]}
    deep: dict[str, object] = doc
    for _ in range(5000):  # deeper than the recursion limit
        deep["next"] = {"u": "http://k:s@deep"}
        deep = deep["next"]  # type: ignore[assignment]
    clean = redact_strings(doc)
    assert clean["u"] == "https://***@h"
    assert clean["list"] == [{"x": "http://***@c/d"}, 3, None]
    assert doc["u"] == "https://u:p@h"  # the original is left alone
    text = json.dumps({"a": "http://host", "b": "x@y", "c": "ftp://me:pw@z"}, separators=(",", ":"))
    assert json.loads(redact_urls_in(text)) == {"a": "http://host", "b": "x@y", "c": "ftp://***@z"}


def test_the_reports_spec_never_carries_credentials() -> None:
    from datetime import UTC, datetime

    from plimsoll.api.report import RunReport
    from plimsoll.api.resource import load_capacity_test

    spec = load_capacity_test(
        {
            "apiVersion": "plimsoll.dev/v1alpha1",
            "kind": "CapacityTest",
            "metadata": {"name": "t"},
            "spec": {
                "target": {"url": "https://svc-user:hunter2@api.example.com/"},
                "workload": {"mix": [{"name": "w", "path": "/"}]},
                "metrics": {"prometheusUrl": "http://prom:s3cret@prom:9090"},
            },
        }
    ).spec
    report = RunReport(test_name="t", spec=spec, started_at=datetime.now(UTC), platform="local")
    text = report.model_dump_json(by_alias=True)
    assert "hunter2" not in text
    assert "s3cret" not in text
    assert "https://***@api.example.com/" in text
    assert report.model_dump(by_alias=True)["spec"]["metrics"]["prometheusUrl"] == (
        "http://***@prom:9090"
    )
    assert report.spec.target.url == "https://svc-user:hunter2@api.example.com/"  # in memory
