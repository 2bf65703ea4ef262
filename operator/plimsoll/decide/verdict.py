"""The verdict on one step: pass, fail, invalid or noisy, with every reason.

The runner calls `judge(StepInput(...), spec.pass_when, spec.noise, spec.generators)`
after each trial, once the generators' results are merged and the server side
is read, and hands the verdict to the search. Pure: data in, a `Judgement` out.

Precedence:

1. invalid: the measurement cannot be trusted and the run stops. A generator
   returned no result or did not finish; a generator or the mock ran out of
   CPU; the generators dropped more starts than tolerated; server metrics the
   bar or the attribution needs were missing (a PromQL query without a value
   is named, `target.missing` is quoted), unless the target restarted within
   the window: that is a failure, step 4. "No data" is never a pass.
2. noisy: the direct-call floor exceeded `noise.floor_bound` at
   `noise.floor_quantile`, or had no samples, so the host stalled and the
   step is repeated. Only when a floor bound is configured.
3. noisy as well: a criterion failed while the host was busy (`StepInput.contention`,
   decided by `plimsoll.decide.contention`): the failure may be the host's doing,
   so the step is repeated rather than counted against the target.
   Never, for 2 and 3, when the target ran out of memory (OOM-killed, restarted, or its
   working set at the limit, `plimsoll.decide.attribution.memory_exhausted`): that step
   is judged as on a quiet host (a definite failure fails), and the reasons say the busy
   signals were set aside; a quiet host would have killed it too.
   Except, also for 2 and 3: when the target's own saturation explains a failure
   (`plimsoll.decide.attribution.saturated`: its throttling breaks the bar's tail,
   or it used its quota) and the host did not starve it (its wait for a CPU was no
   busy signal: `plimsoll.decide.contention` counts it only outside its throttling,
   with another program busy), the failure is the target's whatever the floor says:
   a host that gave the target all its quota did not make it smaller.
   And where the host's CPU is read (local runs) and no other program was busy, signals
   that the test's own pieces explain (its generators, mocks and target filling the
   host's CPUs: `Contention.pieces_held_host`) are no busy host: a failure then that
   the target's own saturation does not explain is invalid (the pieces may have
   failed the bar, and would again), and the search stops with what passed below.
4. fail: every criterion that failed definitely (its 95% confidence interval,
   `plimsoll.decide.confidence`, lies above the bound), with its measured value
   and its bound.
5. invalid again if nothing failed but a client-side criterion had no samples
   (a latency quantile of an operation that never answered): a definite
   failure elsewhere outranks a missing number, a missing number never passes
   (attainment too, when a generator did not judge its answers).
6. marginal: a latency quantile, an error or shed share, or the attainment of
   `passWhen.goodput` (`plimsoll.decide.goodput`) whose interval straddles its
   bound, passing or failing: the step's own samples cannot tell, so it is
   repeated (`noise.retries`), and one that stays marginal moves neither end of
   the bracket.
7. pass.

The precedence is a chain of rules (`RULES`), each a pure function of the step's facts
(`Facts`) that gives the judgement or passes it on; the criteria themselves, with their
intervals and sentences, are `plimsoll.decide.criteria`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from plimsoll.api.spec import Attribution, Generators, Noise, PassWhen
from plimsoll.api.step import BusySignal, Contention, Criterion, Judgement, Verdict
from plimsoll.api.trial import TrialResult
from plimsoll.decide.attribution import memory_exhausted, saturated
from plimsoll.decide.criteria import criteria_of, describe, floor_criterion
from plimsoll.decide.step_input import StepInput
from plimsoll.decide.untrusted import untrusted_reasons


@dataclass(frozen=True)
class Facts:
    """One step's facts, derived once, that every rule reads."""

    result: StepInput
    client: TrialResult
    bar: PassWhen
    noise: Noise
    generators: Generators
    attribution: Attribution
    criteria: list[Criterion]
    floor: Criterion | None  # None: no floor bound configured
    signals: list[str]  # the host's busy signals, [] when it was not busy
    memory: str | None  # how the target ran out of memory, or None

    @property
    def contention(self) -> Contention | None:
        return self.result.contention

    @property
    def floor_failed(self) -> bool:
        return self.floor is not None and not self.floor.ok

    def failed(self, *, definite: bool) -> list[Criterion]:
        """The criteria that failed with a figure (the floor not among them when
        `definite`, nor a marginal one)."""
        return [
            c
            for c in self.criteria
            if not c.ok
            and c.measured is not None
            and not (definite and (c is self.floor or c.marginal))
        ]


def judge(
    result: StepInput,
    bar: PassWhen,
    noise: Noise,
    generators: Generators,
    attribution: Attribution | None = None,
) -> Judgement:
    client = result.client
    if client is None:
        return Judgement(verdict=Verdict.INVALID, reasons=["a generator returned no result"])
    thresholds = attribution or Attribution()
    criteria = criteria_of(result, client, bar)
    floor = floor_criterion(result, client, noise)
    if floor is not None:
        criteria.append(floor)
    contention = result.contention
    facts = Facts(
        result=result,
        client=client,
        bar=bar,
        noise=noise,
        generators=generators,
        attribution=thresholds,
        criteria=criteria,
        floor=floor,
        signals=contention.signals if contention is not None and contention.busy else [],
        memory=memory_exhausted(result.target, thresholds),
    )
    for rule in RULES:
        judgement = rule(facts)
        if judgement is not None:
            return judgement
    raise AssertionError("the last rule judges every step")  # pragma: no cover


def _untrusted(facts: Facts) -> Judgement | None:
    """1. invalid: the measurement cannot be trusted."""
    reasons = untrusted_reasons(facts.result, facts.client, facts.bar, facts.generators)
    if not reasons:
        return None
    return Judgement(verdict=Verdict.INVALID, reasons=reasons, criteria=facts.criteria)


def _out_of_memory(facts: Facts) -> Judgement | None:
    """The target ran out of memory: judged on merit, the host's signals set aside."""
    if facts.memory is None:
        return None
    return _memory_exhausted(facts.criteria, facts.client, facts.memory, facts.signals, facts.floor)


def _own_saturation_on_a_busy_host(facts: Facts) -> Judgement | None:
    """A definite failure on a host that looked busy (the floor, or its signals), which
    the target's own saturation explains: the target's."""
    failed = facts.failed(definite=True)
    busy = facts.floor_failed or (facts.signals and facts.noise.repeat_when_busy)
    if not failed or not busy:
        return None
    own = _own_saturation(facts.result, facts.attribution, facts.bar)
    if own is None:
        return None
    shown = list(facts.signals)
    contention, floor = facts.contention, facts.floor
    named = contention is not None and BusySignal.FLOOR in contention.busy_by
    if floor is not None and facts.floor_failed and floor.measured is not None and not named:
        shown.append(f"the direct-call floor: {describe(floor, facts.client)}")
    host = "; ".join(shown) or "the direct-call floor had no samples"
    reasons = [describe(c, facts.client) for c in failed]
    reasons.append(
        f"the host looked busy ({host}), but the target's own saturation explains "
        f"the failure ({own}): it is the target's"
    )
    return Judgement(verdict=Verdict.FAIL, reasons=reasons, criteria=facts.criteria)


def _pieces_held_the_host(facts: Facts) -> Judgement | None:
    """invalid: a failure while the test's own pieces filled the host's CPUs (no other
    program busy), which the target's own saturation does not explain. The generators
    and mocks may have failed the bar, not the target: a fail would put the host's
    limit in the target's ceiling; noisy would repeat the step into the same pieces."""
    contention = facts.contention
    if contention is None or not contention.pieces_held_host:
        return None
    failed = facts.failed(definite=False)
    if not failed:
        return None
    if _own_saturation(facts.result, facts.attribution, facts.bar) is not None:
        return None  # the target's own: judged on merit
    shown = "; ".join(describe(c, facts.client) for c in failed)
    return Judgement(
        verdict=Verdict.INVALID,
        reasons=[
            f"{shown}, but {contention.not_the_host}. This host cannot load the target "
            "harder without its measuring pieces becoming the limit: what passed below is "
            "a lower bound (run the generators elsewhere: a cluster, or a larger host)"
        ],
        criteria=facts.criteria,
    )


def _stalled_floor(facts: Facts) -> Judgement | None:
    """2. noisy: the direct-call floor passed its bound, or had no samples."""
    floor = facts.floor
    if floor is None or floor.ok:
        return None
    why = (
        "the direct-call floor had no samples: the host stalled"
        if floor.measured is None
        else f"the direct-call floor: {describe(floor, facts.client)}: the host stalled"
    )
    return Judgement(verdict=Verdict.NOISY, reasons=[why], criteria=facts.criteria)


def _busy_host(facts: Facts) -> Judgement | None:
    """3. noisy: a criterion failed while the host was busy."""
    failed = facts.failed(definite=False)
    if not failed or not facts.signals or not facts.noise.repeat_when_busy:
        return None
    reasons = [
        "the host was busy (" + "; ".join(facts.signals) + "), so this failure is "
        "not the target's: " + "; ".join(describe(c, facts.client) for c in failed)
    ]
    return Judgement(verdict=Verdict.NOISY, reasons=reasons, criteria=facts.criteria)


def _merit(facts: Facts) -> Judgement:
    """4 to 7: fail, invalid, marginal or pass, on the criteria alone."""
    note = (
        "the host was busy (" + "; ".join(facts.signals) + "); "
        "noise.repeatWhenBusy is off, so this counts as a fail"
        if facts.signals
        else None
    )
    return _on_merit(facts.criteria, facts.criteria, facts.client, note)


# The precedence, in order: the first rule with a judgement gives it.
RULES: tuple[Callable[[Facts], Judgement | None], ...] = (
    _untrusted,
    _out_of_memory,
    _own_saturation_on_a_busy_host,
    _pieces_held_the_host,
    _stalled_floor,
    _busy_host,
    _merit,
)


def _on_merit(
    criteria: list[Criterion], judged: list[Criterion], client: TrialResult, note: str | None
) -> Judgement:
    """Steps 4 to 7 over the `judged` criteria: fail, invalid, marginal or pass; `note`
    joins the reasons of a fail."""
    failed = [c for c in judged if not c.ok and c.measured is not None]
    if any(not c.marginal for c in failed):
        reasons = [describe(c, client) for c in failed]
        if note is not None:
            reasons.append(note)
        return Judgement(verdict=Verdict.FAIL, reasons=reasons, criteria=criteria)
    missing = [c for c in judged if c.measured is None]
    if missing:
        reasons = [f"no data for {c.name}: no data is never a pass" for c in missing]
        return Judgement(verdict=Verdict.INVALID, reasons=reasons, criteria=criteria)
    marginal = [c for c in judged if c.marginal]
    if marginal:
        reasons = [f"marginal: {describe(c, client)}" for c in marginal]
        return Judgement(verdict=Verdict.MARGINAL, reasons=reasons, criteria=criteria)
    return Judgement(verdict=Verdict.PASS, criteria=criteria)


def _memory_exhausted(
    criteria: list[Criterion],
    client: TrialResult,
    memory: str,
    signals: list[str],
    floor: Criterion | None,
) -> Judgement:
    """A step where the target ran out of memory, judged without the host's signals: the
    floor is set aside with them (a host stalled by the target's own reclaim or restart
    is not a busy host)."""
    shown = list(signals)
    if floor is not None and not floor.ok:
        shown.append(
            "the direct-call floor had no samples"
            if floor.measured is None
            else f"the direct-call floor: {describe(floor, client)}"
        )
    aside = (
        f"the host looked busy ({'; '.join(shown)}), but the target ran out of memory "
        f"({memory}): the failure is the target's, as it would be on a quiet host"
        if shown
        else None
    )
    return _on_merit(criteria, [c for c in criteria if c is not floor], client, aside)


def _own_saturation(result: StepInput, thresholds: Attribution, bar: PassWhen) -> str | None:
    """The target's saturation that explains a failure, unless the host starved it: then
    the floor and the busy signals judge. Starved is what `decide.contention` decided
    (`BusySignal.TARGET_WAIT`): a wait for a CPU outside the target's throttling, with
    another program busy. A target throttled in most of its CFS periods waits too, every
    worker of a many-process server (nginx's) through the group's throttled time: that
    wait is its own saturation, not a busy host (issue 51, nginx at 0.05 CPU: 80% of its
    runnable time, on a quiet host, had been taken as the host's)."""
    contention = result.contention
    if contention is not None and BusySignal.TARGET_WAIT in contention.busy_by:
        return None
    return saturated(result.target, thresholds, bar)
