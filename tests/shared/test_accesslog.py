"""Reading access-log lines: each format, the privacy defaults, clear errors for bad input."""

from __future__ import annotations

import json

import pytest

from plimsoll.shared.accesslog import LogFormat, LogFormatError, Parser, Privacy
from plimsoll.shared.accesslog.formats import FieldMap, detect

NGINX = {
    "msec": "1764000010.250",
    "remote_addr": "10.0.0.7",
    "http_x_api_key": "key-42",
    "request": "POST /api/items/42?token=s3cret HTTP/1.1",
    "status": "503",
    "request_time": "0.250",
    "upstream_response_time": "0.100, 0.120",
    "body_bytes_sent": "4096",
}
ENVOY = {
    "start_time": "2026-12-01T10:00:00.500Z",
    "method": "GET",
    "path": "/v1/things?x=1",
    "response_code": 504,
    "duration": 1500,
    "upstream_service_time": "-",
    "bytes_sent": 19,
    "downstream_remote_address": "192.168.1.9:53211",
    "response_flags": "UT",
}
COMBINED = (
    '203.0.113.5 - alice [01/Dec/2026:10:00:01 +0000] "GET /shop/cart?id=9 HTTP/1.1" 200 5120 '
    '"-" "curl/8" 0.031 0.020'
)


def test_nginx_json_line_starts_at_its_end_minus_the_request_time() -> None:
    record = Parser(LogFormat.AUTO).parse(json.dumps(NGINX))
    assert record is not None
    assert record.start == pytest.approx(1764000010.0)
    assert (record.method, record.path, record.status) == ("POST", "/api/items/42", 503)
    assert record.upstream == pytest.approx(0.22)  # two upstream tries add up
    assert record.bytes_sent == 4096
    assert record.duration == pytest.approx(0.25)


def test_client_ids_are_hashed_and_queries_dropped_by_default() -> None:
    hashed = Parser(LogFormat.NGINX_JSON).parse(json.dumps(NGINX))
    kept = Parser(
        LogFormat.NGINX_JSON,
        client_field="http_x_api_key",
        privacy=Privacy(keep_client_ids=True, keep_query=True),
    ).parse(json.dumps(NGINX))
    assert hashed is not None
    assert kept is not None
    assert hashed.client != "10.0.0.7"
    assert len(hashed.client) == 16
    assert "?" not in hashed.path
    assert kept.client == "key-42"
    assert kept.path.endswith("?token=s3cret")


def test_envoy_json_in_milliseconds_with_its_timeout_flag() -> None:
    record = Parser(LogFormat.AUTO, privacy=Privacy(keep_client_ids=True)).parse(json.dumps(ENVOY))
    assert record is not None
    assert record.client == "192.168.1.9"  # the port is not part of the client
    assert record.duration == pytest.approx(1.5)
    assert record.upstream is None
    assert record.timed_out
    assert record.path == "/v1/things"


def test_combined_with_appended_request_and_upstream_times() -> None:
    parser = Parser(LogFormat.AUTO, privacy=Privacy(keep_client_ids=True))
    record = parser.parse(COMBINED)
    assert record is not None
    assert record.client == "203.0.113.5"
    assert record.path == "/shop/cart"
    assert record.duration == pytest.approx(0.031)
    assert record.upstream == pytest.approx(0.020)
    assert record.start == pytest.approx(1796119201.0 - 0.031, abs=1e-6)
    user = Parser(LogFormat.COMBINED, client_field="remote_user", privacy=Privacy(True)).parse(
        COMBINED
    )
    assert user is not None
    assert user.client == "alice"


def test_json_lines_need_a_field_map() -> None:
    line = json.dumps({"ts": 1764000000123, "u": "bob", "url": "/a", "ms": 12, "code": 201})
    with pytest.raises(LogFormatError, match="--field time=ts"):
        Parser(LogFormat.JSONL)
    with pytest.raises(LogFormatError, match="neither nginx's nor Envoy's"):
        detect(line)
    fields = FieldMap.parse(
        ["time=ts", "client=u", "path=url", "duration=ms", "status=code"], unit="ms"
    )
    record = Parser(LogFormat.JSONL, fields=fields).parse(line)
    assert record is not None
    assert record.start == pytest.approx(1764000000.123)  # epoch milliseconds read as such
    assert record.duration == pytest.approx(0.012)
    assert record.status == 201


def test_bad_input_names_the_fix() -> None:
    with pytest.raises(LogFormatError, match="ROLE=KEY"):
        FieldMap.parse(["when=ts"])
    with pytest.raises(LogFormatError, match="give --format"):
        Parser(LogFormat.AUTO).parse("this is not a log line")
    with pytest.raises(LogFormatError, match="not a nginx-json line"):
        Parser(LogFormat.NGINX_JSON).parse(json.dumps({"msec": "1", "status": "x"}))
    with pytest.raises(LogFormatError, match="--client 'nope'"):
        Parser(LogFormat.NGINX_JSON, client_field="nope").parse(json.dumps(NGINX))
    assert Parser(LogFormat.NGINX_JSON).parse("   ") is None
