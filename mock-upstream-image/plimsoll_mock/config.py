"""Loading and checking the mock's configuration before anything listens.

`__main__` calls `load` with the `--config` path or the `PLIMSOLL_MOCK_CONFIG`
environment variable. A bad configuration raises `ConfigError` whose message
names each offending field by its path (`routes[0].latency.p95: ...`), so the
operator can surface it as the reason the mock did not start.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from plimsoll.api.upstream import MOCK_CONFIG_ENV, Upstream
from plimsoll.api.validation_errors import describe_validation_error

RESERVED_PATHS = ("/healthz", "/metrics")
LLM_PATHS = ("/v1/chat/completions", "/v1/messages")


class ConfigError(Exception):
    """The configuration cannot be used; the message names the field(s)."""


def load(path: str | None, environ: Mapping[str, str]) -> Upstream:
    if path is not None:
        try:
            text = Path(path).read_text()
        except OSError as exc:
            raise ConfigError(f"cannot read the configuration file {path}: {exc}") from exc
        source = path
    elif MOCK_CONFIG_ENV in environ:
        text, source = environ[MOCK_CONFIG_ENV], f"${MOCK_CONFIG_ENV}"
    else:
        raise ConfigError(f"no configuration: pass --config FILE or set {MOCK_CONFIG_ENV}")
    try:
        data: Any = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"{source} is not JSON: {exc}") from exc
    try:
        config = Upstream.model_validate(data)
    except ValidationError as exc:
        lines = describe_validation_error(exc, whole="(top level)")
        raise ConfigError(
            f"invalid configuration in {source}:\n" + "\n".join(f"  {line}" for line in lines)
        ) from exc
    _check_paths(config)
    return config


def _check_paths(config: Upstream) -> None:
    reserved = {*RESERVED_PATHS}
    if config.mcp is not None:
        reserved.add(config.mcp.path)
    if config.llm is not None:
        reserved.update(LLM_PATHS)
    if config.mcp is not None and config.mcp.path in RESERVED_PATHS:
        raise ConfigError(f"mcp.path: {config.mcp.path!r} is reserved for the mock itself")
    for i, route in enumerate(config.routes):
        if route.path in reserved:
            raise ConfigError(
                f"routes[{i}].path: {route.path!r} is served by the mock itself "
                f"(reserved: {', '.join(sorted(reserved))})"
            )
