"""Reading one access-log line in each supported format.

Called by `plimsoll calibrate` and the generator's replay source, line by line.
The formats: nginx's JSON `log_format` (the usual variable names: `msec` or
`time_iso8601`/`time_local`, `remote_addr`, `request` or `request_method` +
`request_uri`, `status`, `request_time`, `body_bytes_sent`,
`upstream_response_time`, and `mcp_method` when the MCP request's
`Mcp-Method` header is logged), the combined format (optionally followed by the
request time and the upstream time, as many sites append them), Envoy's default
JSON access log (`start_time`, `method`, `path`, `response_code`, `duration`,
`bytes_sent`, `upstream_service_time`, `downstream_remote_address`,
`response_flags`), and any JSON lines given a field map. `auto` picks the
format from the first line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from plimsoll.api.replay import FIELD_ROLES, LogFormat
from plimsoll.shared.accesslog.records import LogRecord, Privacy


class LogFormatError(ValueError):
    """A log (or a field map) this reader cannot use; the message says what to change."""


ROLES = FIELD_ROLES


@dataclass(frozen=True)
class FieldMap:
    """Which JSON key holds each field, for `jsonl` logs (and overrides for the others).

    `time_at` says whether the time is the request's start or its end (nginx
    writes the end); `duration_unit` is `s` or `ms`.
    """

    keys: dict[str, str] = field(default_factory=dict)
    time_at: str = "start"
    duration_unit: str = "s"

    @classmethod
    def parse(cls, pairs: list[str], time_at: str = "start", unit: str = "s") -> FieldMap:
        """`["time=ts", "client=user_id"]` -> a map; unknown roles are refused by name."""
        keys: dict[str, str] = {}
        for pair in pairs:
            role, sep, key = pair.partition("=")
            if not sep or not key or role not in ROLES:
                raise LogFormatError(
                    f"--field {pair!r}: write ROLE=KEY with ROLE one of {', '.join(ROLES)}"
                )
            keys[role] = key
        if time_at not in ("start", "end"):
            raise LogFormatError(f"--time-at {time_at!r}: use 'start' or 'end'")
        if unit not in ("s", "ms"):
            raise LogFormatError(f"--duration-unit {unit!r}: use 's' or 'ms'")
        return cls(keys, time_at, unit)


_COMBINED = re.compile(
    r'^(?P<addr>\S+) \S+ (?P<user>\S+) \[(?P<time>[^\]]+)\] "(?P<method>[A-Z]+) (?P<path>\S+)'
    r'[^"]*" (?P<status>\d{3}) (?P<bytes>\S+)(?: "[^"]*" "[^"]*")?(?P<rest>.*)$'
)
_LOCAL_TIME = "%d/%b/%Y:%H:%M:%S %z"


def _number(value: Any) -> float | None:
    """A log number: nginx writes '-' for none, and 'a, b' or 'a : b' for several upstream
    tries (their sum is the upstream's time)."""
    if value is None or value in ("-", ""):
        return None
    if isinstance(value, int | float):
        return float(value)
    text = str(value)
    if "," in text or ":" in text:
        parts = [p.strip() for p in re.split(r"[,:]", text)]
        numbers = [float(p) for p in parts if p and p != "-"]
        return sum(numbers) if numbers else None
    return float(text)


class _Clock:
    """Turns a log's time field into epoch seconds; caches the last text (a second's worth of
    lines shares one `time_local`, and strptime is the slow part of a line)."""

    def __init__(self) -> None:
        self.last_text = ""
        self.last_value = 0.0

    def seconds(self, value: Any) -> float:
        if isinstance(value, int | float):
            number = float(value)
            return number / 1000.0 if number > 1e11 else number
        text = str(value)
        if text == self.last_text:
            return self.last_value
        try:
            number = float(text)
            parsed = number / 1000.0 if number > 1e11 else number
        except ValueError:
            try:
                parsed = datetime.strptime(text, _LOCAL_TIME).timestamp()
            except ValueError:
                parsed = datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
        self.last_text, self.last_value = text, parsed
        return parsed


def detect(line: str) -> LogFormat:
    """The format of a log, judged from one of its lines."""
    text = line.strip()
    if not text.startswith("{"):
        if _COMBINED.match(text):
            return LogFormat.COMBINED
        raise LogFormatError(
            "the first line is neither JSON nor the combined format: give --format"
        )
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LogFormatError(f"the first line is not valid JSON ({exc}): give --format") from exc
    if "response_code" in data and "start_time" in data:
        return LogFormat.ENVOY
    if "status" in data and ({"msec", "time_iso8601", "time_local"} & data.keys()):
        return LogFormat.NGINX_JSON
    raise LogFormatError(
        "JSON lines that are neither nginx's nor Envoy's: use --format jsonl with --field "
        "time=KEY --field path=KEY ... (roles: " + ", ".join(ROLES) + ")"
    )


class Parser:
    """Turns lines of one log into `LogRecord`s; `parse` returns None for a line that is
    not a request (blank, a comment) and raises `LogFormatError` for a broken one."""

    def __init__(
        self,
        log_format: LogFormat,
        *,
        client_field: str | None = None,
        fields: FieldMap | None = None,
        privacy: Privacy | None = None,
    ) -> None:
        self.format = log_format
        self.client_field = client_field
        self.fields = fields or FieldMap()
        self.privacy = privacy or Privacy()
        self.clock = _Clock()
        if log_format is LogFormat.JSONL:
            missing = [r for r in ("time", "path") if r not in self.fields.keys]
            if missing:
                raise LogFormatError(
                    "--format jsonl needs a field map for "
                    + ", ".join(missing)
                    + ": e.g. --field time=ts --field path=url"
                )

    def parse(self, line: str) -> LogRecord | None:
        text = line.strip()
        if not text or text.startswith("#"):
            return None
        if self.format is LogFormat.AUTO:
            self.format = detect(text)
        try:
            if self.format is LogFormat.COMBINED:
                return self._combined(text)
            data = json.loads(text)
            if not isinstance(data, dict):
                raise LogFormatError("a JSON log line must be an object")
            if self.format is LogFormat.NGINX_JSON:
                return self._nginx(data)
            if self.format is LogFormat.ENVOY:
                return self._envoy(data)
            return self._jsonl(data)
        except (KeyError, ValueError, TypeError) as exc:
            if isinstance(exc, LogFormatError):
                raise
            raise LogFormatError(f"not a {self.format.value} line ({exc!r}): {text[:120]}") from exc

    def _record(
        self,
        *,
        time: float,
        time_at_end: bool,
        client: str,
        method: str,
        path: str,
        status: int,
        duration: float | None,
        bytes_sent: float | None,
        upstream: float | None,
        timed_out: bool = False,
        operation: Any = None,
    ) -> LogRecord:
        start = time - duration if time_at_end and duration is not None else time
        first_client = client.split(",")[0].strip() or "-"
        return LogRecord(
            start=start,
            client=self.privacy.client(first_client),
            method=method.upper(),
            path=self.privacy.path(path),
            status=status,
            duration=duration,
            bytes_sent=int(bytes_sent) if bytes_sent is not None else None,
            upstream=upstream,
            timed_out=timed_out,
            operation=str(operation) if operation not in (None, "", "-") else None,
        )

    def _client(self, data: dict[str, Any], default: str) -> str:
        key = self.client_field or self.fields.keys.get("client") or default
        value = data.get(key)
        if value is None or value == "-":
            if self.client_field:
                raise LogFormatError(f"--client {key!r}: the line has no such field")
            return "-"
        return str(value)

    def _nginx(self, data: dict[str, Any]) -> LogRecord:
        if "request_method" in data:
            method, path = data["request_method"], data.get("request_uri") or data["uri"]
        else:
            method, path = data["request"].split(" ")[:2]
        if "msec" in data:
            when = self.clock.seconds(data["msec"])
        else:
            when = self.clock.seconds(data.get("time_iso8601") or data["time_local"])
        sent = data.get("body_bytes_sent", data.get("bytes_sent"))
        return self._record(
            time=when,
            time_at_end=True,
            client=self._client(data, "remote_addr"),
            method=method,
            path=path,
            status=int(data["status"]),
            duration=_number(data.get("request_time")),
            bytes_sent=_number(sent),
            upstream=_number(data.get("upstream_response_time")),
            operation=data.get("mcp_method"),
        )

    def _envoy(self, data: dict[str, Any]) -> LogRecord:
        duration = _number(data.get("duration"))
        upstream = _number(data.get("upstream_service_time"))
        address = data.get("x_forwarded_for") or data.get("downstream_remote_address") or "-"
        client = self._client(data, "") if self.client_field else str(address)
        if client.count(":") == 1:  # ip:port (an IPv6 address has more colons)
            client = client.split(":")[0]
        return self._record(
            time=self.clock.seconds(data["start_time"]),
            time_at_end=False,
            client=client,
            method=str(data.get("method") or "GET"),
            path=str(data.get("path") or "/"),
            status=int(data.get("response_code") or 0),
            duration=duration / 1000.0 if duration is not None else None,
            bytes_sent=_number(data.get("bytes_sent")),
            upstream=upstream / 1000.0 if upstream is not None else None,
            timed_out="UT" in str(data.get("response_flags") or ""),
        )

    def _jsonl(self, data: dict[str, Any]) -> LogRecord:
        keys = self.fields.keys
        scale = 1000.0 if self.fields.duration_unit == "ms" else 1.0

        def get(role: str) -> Any:
            key = keys.get(role)
            return data.get(key) if key is not None else None

        duration, upstream = _number(get("duration")), _number(get("upstream"))
        return self._record(
            time=self.clock.seconds(data[keys["time"]]),
            time_at_end=self.fields.time_at == "end",
            client=self._client(data, keys.get("client", "client")),
            method=str(get("method") or "GET"),
            path=str(data[keys["path"]]),
            status=int(get("status") or 200),
            duration=duration / scale if duration is not None else None,
            bytes_sent=_number(get("bytes")),
            upstream=upstream / scale if upstream is not None else None,
            operation=get("operation"),
        )

    def _combined(self, text: str) -> LogRecord:
        match = _COMBINED.match(text)
        if match is None:
            raise LogFormatError(f"not a combined-format line: {text[:120]}")
        extra = [_number(v) for v in match["rest"].split() if re.fullmatch(r"[\d.]+|-", v)]
        duration = extra[0] if extra else None
        upstream = extra[1] if len(extra) > 1 else None
        client_key = self.client_field or "remote_addr"
        if client_key not in ("remote_addr", "remote_user"):
            raise LogFormatError(
                f"--client {client_key!r}: a combined log has only remote_addr and remote_user"
            )
        return self._record(
            time=self.clock.seconds(match["time"]),
            time_at_end=True,
            client=match["addr"] if client_key == "remote_addr" else match["user"],
            method=match["method"],
            path=match["path"],
            status=int(match["status"]),
            duration=duration,
            bytes_sent=_number(match["bytes"]),
            upstream=upstream,
        )
