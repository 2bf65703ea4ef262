"""Another exporter's metrics, served again under a local run's container labels.

A service that is itself a Prometheus exporter (Debian's
`prometheus-redis-exporter`, `prometheus-postgres-exporter`) labels its series
with nothing that ties them to a run. On Kubernetes the scrape config adds the
pod's namespace; locally there is no such config, so the run's
`CadvisorExporter` fetches the exporter's page on every scrape and serves its
samples with `namespace`, `pod` and `container` set as the Kubernetes platform
would name the service's pod. A `spec.metrics.extra` query that selects
`namespace="$namespace"` then finds them through the one scrape target the
user configured. Comment lines are dropped: two exporters both describe
`process_cpu_seconds_total`, and a repeated `# TYPE` line would make
Prometheus refuse the whole page, while untyped samples are read the same.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import httpx

log = logging.getLogger(__name__)

# Each relayed page is fetched within this, so one stuck exporter cannot stall the scrape.
FETCH_TIMEOUT = 2.0
_OURS = ("namespace", "pod", "container")


@dataclass
class RelayedExporter:
    """One service's exporter page (`url`), served as the container `namespace/pod`."""

    namespace: str
    pod: str
    container: str
    url: str

    def labels(self) -> dict[str, str]:
        return {"namespace": self.namespace, "pod": self.pod, "container": self.container}

    async def fetch(self, client: httpx.AsyncClient) -> str:
        """The page relabelled; on any failure a comment saying why (its series then go
        stale in Prometheus, and a query over them reports the gap, never a zero)."""
        try:
            response = await client.get(self.url, timeout=FETCH_TIMEOUT)
            response.raise_for_status()
        except httpx.HTTPError as exc:
            log.debug("relaying %s failed: %s", self.url, exc)
            return f"# {self.namespace}/{self.pod} unreadable: {type(exc).__name__}\n"
        return relabel(response.text, self.labels())


def _split_sample(line: str) -> tuple[str, str, str] | None:
    """(metric name, label text without braces, the rest: value and timestamp)."""
    brace = line.find("{")
    space = line.find(" ")
    if brace == -1 or (space != -1 and space < brace):
        if space == -1:
            return None
        return line[:space], "", line[space:]
    # Find the closing brace outside quoted label values (which may hold '}' or '\"').
    quoted, escaped = False, False
    for index in range(brace + 1, len(line)):
        char = line[index]
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            quoted = not quoted
        elif char == "}" and not quoted:
            return line[:brace], line[brace + 1 : index], line[index + 1 :]
    return None


def _without_ours(labels: str) -> str:
    """The label text less any namespace/pod/container pair (ours replace them)."""
    kept: list[str] = []
    start, quoted, escaped = 0, False, False
    for index, char in enumerate(labels + ","):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            quoted = not quoted
        elif char == "," and not quoted:
            pair = labels[start:index].strip()
            if pair and pair.split("=", 1)[0].strip() not in _OURS:
                kept.append(pair)
            start = index + 1
    return ",".join(kept)


def relabel(text: str, labels: dict[str, str]) -> str:
    """Every sample of an exposition page with `labels` first; comments dropped."""
    ours = ",".join(f'{key}="{_escape(value)}"' for key, value in labels.items())
    out: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = _split_sample(line)
        if parts is None:
            continue  # not a sample line: leaving it in could spoil the whole scrape
        name, theirs, rest = parts
        theirs = _without_ours(theirs)
        merged = f"{ours},{theirs}" if theirs else ours
        out.append(f"{name}{{{merged}}}{rest}")
    return "\n".join(out) + ("\n" if out else "")


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
