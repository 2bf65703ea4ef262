"""The latest answers as Prometheus gauges: ceilings, their range, regressions, freshness,
and how many steps the latest run took.

Part of the operator's `/metrics` (`OperatorMetrics.render`), so the capacity of
every watched CapacityTest can be graphed and alerted on: a regression alert on
`plimsoll_regressed`, a stale-result alert on the age of
`plimsoll_last_success_timestamp_seconds` (the chart's PrometheusRule has both). The
chart's Grafana dashboard (`charts/plimsoll/files/grafana-dashboard.json`) graphs them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from plimsoll.api.contract import CapacityContract, ContractState
from plimsoll.api.status import CapacityTestStatus, Phase, VariantState

GAUGES = (
    ("plimsoll_ceiling", "The latest ceiling per CapacityTest and variant."),
    ("plimsoll_ceiling_low", "The last passing level of the latest run."),
    ("plimsoll_ceiling_high", "The first failing level of the latest run."),
    ("plimsoll_regressed", "1 when the latest ceiling regressed against its baseline."),
)


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


@dataclass(frozen=True)
class _Ceiling:
    """One variant's latest answer, whichever part of the status it came from."""

    variant: str
    unit: str
    level: int | None
    low: int | None
    high: int | None


def _ceilings(status: CapacityTestStatus) -> list[_Ceiling]:
    """Every finished variant's ceiling (`status.variants`), else the run's one ceiling."""
    done = (VariantState.SUCCEEDED, VariantState.FAILED)
    rows = [
        _Ceiling(v.name, v.unit, v.ceiling, v.last_pass, v.first_fail)
        for v in status.variants
        if v.state in done
    ]
    if rows or status.ceiling is None:
        return rows
    c = status.ceiling
    return [_Ceiling(c.variant, c.unit, c.level, c.low, c.high)]


@dataclass
class _Result:
    ceilings: list[_Ceiling]
    regressed: dict[str, bool]
    steps: int


@dataclass
class ResultGauges:
    results: dict[tuple[str, str], _Result] = field(default_factory=dict)
    last_success: dict[tuple[str, str], float] = field(default_factory=dict)
    # (namespace, deployment) -> its capacity contract (spec.contract.annotate)
    contracts: dict[tuple[str, str], CapacityContract] = field(default_factory=dict)

    def record(self, namespace: str, name: str, status: CapacityTestStatus) -> None:
        ceilings = _ceilings(status)
        regressed = {v.variant: v.regressed for v in status.regression}
        self.results[(namespace, name)] = _Result(
            ceilings, regressed, status.step_count or len(status.steps)
        )
        if status.phase is Phase.SUCCEEDED and status.completion_time is not None:
            self.last_success[(namespace, name)] = status.completion_time.timestamp()

    def record_contract(self, namespace: str, deployment: str, contract: CapacityContract) -> None:
        """What a Deployment's contract says now, as written or read by the operator."""
        self.contracts[(namespace, deployment)] = contract

    def forget(self, namespace: str, name: str) -> None:
        self.results.pop((namespace, name), None)
        self.last_success.pop((namespace, name), None)

    def render(self) -> list[str]:
        samples: dict[str, list[str]] = {gauge: [] for gauge, _ in GAUGES}
        for (namespace, name), result in sorted(self.results.items()):
            for ceiling in result.ceilings:
                labels = (
                    f'namespace="{_label(namespace)}",name="{_label(name)}",'
                    f'variant="{_label(ceiling.variant)}"'
                )
                with_unit = f'{labels},unit="{_label(ceiling.unit)}"'
                for gauge, value in (
                    ("plimsoll_ceiling", ceiling.level),
                    ("plimsoll_ceiling_low", ceiling.low),
                    ("plimsoll_ceiling_high", ceiling.high),
                ):
                    if value is not None:
                        samples[gauge].append(f"{gauge}{{{with_unit}}} {value}")
                if ceiling.variant in result.regressed:
                    flag = int(result.regressed[ceiling.variant])
                    samples["plimsoll_regressed"].append(f"plimsoll_regressed{{{labels}}} {flag}")
        lines: list[str] = []
        for gauge, help_text in GAUGES:
            lines += [f"# HELP {gauge} {help_text}", f"# TYPE {gauge} gauge", *samples[gauge]]
        lines += [
            "# HELP plimsoll_run_steps Steps (trials) the latest run of a CapacityTest took.",
            "# TYPE plimsoll_run_steps gauge",
        ]
        lines += [
            f'plimsoll_run_steps{{namespace="{_label(ns)}",name="{_label(name)}"}} {r.steps}'
            for (ns, name), r in sorted(self.results.items())
        ]
        lines += [
            "# HELP plimsoll_last_success_timestamp_seconds When the latest run that found "
            "its ceiling finished (Unix time).",
            "# TYPE plimsoll_last_success_timestamp_seconds gauge",
        ]
        lines += [
            f'plimsoll_last_success_timestamp_seconds{{namespace="{_label(ns)}",'
            f'name="{_label(name)}"}} {at:.0f}'
            for (ns, name), at in sorted(self.last_success.items())
        ]
        return lines + self._contract_lines()

    def _contract_lines(self) -> list[str]:
        lines = [
            "# HELP plimsoll_contract_proven 1 while a Deployment runs the image its capacity "
            "was proven for, 0 once it runs one no run has passed for (spec.contract).",
            "# TYPE plimsoll_contract_proven gauge",
        ]
        for (namespace, deployment), contract in sorted(self.contracts.items()):
            labels = f'namespace="{_label(namespace)}",deployment="{_label(deployment)}"'
            proven = int(contract.state is ContractState.PROVEN)
            lines.append(f"plimsoll_contract_proven{{{labels}}} {proven}")
        lines += [
            "# HELP plimsoll_contract_ceiling The last proven ceiling on a Deployment "
            "(spec.contract), for whichever image it was proven.",
            "# TYPE plimsoll_contract_ceiling gauge",
        ]
        for (namespace, deployment), contract in sorted(self.contracts.items()):
            proof = contract.proven
            if proof is None:
                continue
            lines.append(
                f'plimsoll_contract_ceiling{{namespace="{_label(namespace)}",'
                f'deployment="{_label(deployment)}",unit="{_label(proof.unit)}",'
                f'limited_by="{proof.limited_by.value}"}} {proof.ceiling}'
            )
        return lines
