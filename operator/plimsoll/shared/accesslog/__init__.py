"""Access logs as a stream of records: nginx JSON and combined, Envoy JSON, any JSON lines.

`plimsoll calibrate` (plimsoll.cli.calibrate) fits a workload from these records,
and the generator's replay source (plimsoll_generator.replay) replays them, so
both read a log the same way. Pure: the callers open the files and pass lines
in; one line at a time becomes one `LogRecord` (or None when it is not a
request), so a log larger than memory streams.
"""

from plimsoll.api.replay import LogFormat
from plimsoll.shared.accesslog.formats import LogFormatError, Parser
from plimsoll.shared.accesslog.records import LogRecord, Privacy

__all__ = ["LogFormat", "LogFormatError", "LogRecord", "Parser", "Privacy"]
