"""The LLM-proxy seed on this machine: its example target, and its example run for real.

First the proxy alone (`examples/targets/llm_proxy.py`) between three real mocks
(the LLM provider, the key service, the metering sink): a streamed turn is relayed
token by token with the provider's own Server-Timing, the key service is asked
first and the metering sink told after. Then `examples/llm-proxy-multi-user.yaml`
as shipped, only shortened (a faster provider, 4 s trials, two user counts), run by
`run_test` on the local platform: the report has a ceiling and TTFT per user count,
each named mock is measured, and both received the proxy's calls; the proxy tallied
one key per modeled user (`workload.credentials`), N distinct keys for N users, and
the provider counted prompts of the seed's size (a system prompt and the context).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from plimsoll.api.report import Outcome
from plimsoll.api.search_spec import Strategy
from plimsoll.api.step import StepRecord, StepResult, Verdict
from plimsoll.api.upstream import Latency, Llm, Route, Upstream
from plimsoll.cli.spec_file import read_capacity_tests
from plimsoll.platforms.local.platform import LocalPlatform
from plimsoll.platforms.local.processes import free_port
from plimsoll.report.markdown import render_markdown
from plimsoll.run.runner import run_test
from plimsoll.shared.histogram import count, decode, quantile_ms
from plimsoll_mock.server import Running, start
from tests.localrun import ROOT, RecordingSink, marked_processes

PROXY = ROOT / "examples" / "targets" / "llm_proxy.py"
TTFT = 0.2

pytestmark = pytest.mark.usefixtures("mark")


@pytest.fixture
async def mocks() -> AsyncIterator[dict[str, Running]]:
    provider = Upstream(
        llm=Llm(ttft=Latency(fixed=TTFT), itl=Latency(fixed=0.005), output_tokens=8)
    )
    auth = Upstream(routes=[Route(name="verify", method="POST", path="/v1/keys/verify")])
    metering = Upstream(routes=[Route(name="usage", method="POST", path="/v1/usage")])
    running = {
        name: await start(config, "127.0.0.1", 0)
        for name, config in (("provider", provider), ("auth", auth), ("metering", metering))
    }
    yield running
    for server in running.values():
        await server.shutdown(grace=1)


@pytest.fixture
async def proxy(mocks: dict[str, Running]) -> AsyncIterator[str]:
    port = free_port()
    env = {
        **os.environ,
        "PORT": str(port),
        "PROVIDER_BASE_URL": f"http://127.0.0.1:{mocks['provider'].port}",
        "AUTH_URL": f"http://127.0.0.1:{mocks['auth'].port}",
        "METERING_URL": f"http://127.0.0.1:{mocks['metering'].port}",
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(PROXY), env=env, cwd=PROXY.parent
    )
    url = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient() as client:
            for _ in range(100):  # up to 10 s for the interpreter to start
                try:
                    if (await client.get(f"{url}/ready")).status_code == 200:
                        break
                except httpx.TransportError:
                    await asyncio.sleep(0.1)
            else:
                raise AssertionError("the proxy never answered /ready")
        yield url
    finally:
        process.terminate()
        await asyncio.wait_for(process.wait(), 10)


def _answered(server: Running, route: str) -> int:
    return server.state.requests.get((route, 200), 0)


async def test_a_streamed_turn_is_authorised_relayed_and_metered(
    proxy: str, mocks: dict[str, Running]
) -> None:
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi " * 40}]}
    headers = {"Authorization": "Bearer sk-alice", "X-User-Team": "search"}
    async with httpx.AsyncClient(timeout=10) as client:
        async with client.stream(
            "POST", f"{proxy}/v1/chat/completions", json=body, headers=headers
        ) as answer:
            assert answer.status_code == 200
            timing = answer.headers["server-timing"]
            events = [line async for line in answer.aiter_lines() if line.startswith("data: ")]
        # The provider's own time, forwarded: at least its time to first token.
        match = re.fullmatch(r"upstream;dur=([0-9.]+)", timing)
        assert match is not None, timing
        assert float(match.group(1)) >= TTFT * 1000
        deltas = [json.loads(e[6:]) for e in events if e != "data: [DONE]"]
        tokens = [d["choices"][0]["delta"].get("content") for d in deltas if d["choices"]]
        assert len([t for t in tokens if t]) == 8
        assert events[-1] == "data: [DONE]"
        assert _answered(mocks["auth"], "verify") == 1
        for _ in range(50):  # the metering report leaves after the answer, off its path
            if _answered(mocks["metering"], "usage"):
                break
            await asyncio.sleep(0.05)
        assert _answered(mocks["metering"], "usage") == 1
        tally = (await client.get(f"{proxy}/usage")).json()
        assert tally["keys"]["sk-alice"]["requests"] == 1
        assert tally["keys"]["sk-alice"]["out"] == 8
        assert tally["keys"]["sk-alice"]["in"] > 0
        assert tally["metering"] == {"sent": 1, "failed": 0, "dropped": 0}

        # No key: refused before the key service or the provider is asked.
        refused = await client.post(f"{proxy}/v1/chat/completions", json=body)
        assert refused.status_code == 401
        assert _answered(mocks["auth"], "verify") == 1
        assert _answered(mocks["provider"], "llm/openai") == 1


async def test_the_seed_example_runs_locally_with_its_named_mocks(
    tmp_path: Path, mark: str
) -> None:
    test = read_capacity_tests(ROOT / "examples" / "llm-proxy-multi-user.yaml")[0]
    spec = test.spec
    # Shortened, not changed: a faster provider so a 4 s trial holds several turns, two
    # user counts, and a lenient bar (the mechanics are under test on a shared host).
    assert spec.upstream.llm is not None
    spec.upstream.llm = spec.upstream.llm.model_copy(
        update={"ttft": Latency(fixed=TTFT), "itl": Latency(fixed=0.005), "output_tokens": 20}
    )
    spec.trial = spec.trial.model_copy(update={"duration": 4.0, "warm_up": 1.0})
    spec.search = spec.search.model_copy(update={"strategy": Strategy.STEPS, "levels": [2, 5]})
    spec.pass_when = spec.pass_when.model_copy(
        update={"latency": [], "errors": spec.pass_when.errors}
    )
    spec.noise = spec.noise.model_copy(update={"repeat_when_busy": False})
    calls: list[dict[str, int]] = []
    keys: list[set[str]] = []  # the proxy's per-key tally after each step
    usage: list[dict[str, Any]] = []  # the proxy's whole /usage after each step
    platform = LocalPlatform("llm", tmp_path / "w")

    class Probe(RecordingSink):
        """After each step, while the mocks still run, read what each one answered."""

        async def step_finished(self, record: StepRecord, result: StepResult) -> None:
            await super().step_finished(record, result)
            seen = {}
            async with httpx.AsyncClient(timeout=5) as client:
                for role, route in (("mock-auth", "verify"), ("mock-metering", "usage")):
                    text = (await client.get(platform.mock_urls[role] + "/metrics")).text
                    found = re.search(
                        rf'requests_total{{route="{route}",status="200"}} (\d+)', text
                    )
                    seen[role] = int(found.group(1)) if found else 0
                tally = (await client.get(platform.replicas[0].url + "/usage")).json()
                keys.append(set(tally["keys"]))
                usage.append(tally)
            calls.append(seen)

    report = await run_test(test, lambda v: platform, Probe())

    assert marked_processes(mark) == []
    # Whatever the verdicts, every step measured first tokens through the proxy, and
    # every turn asked the key service first and told the metering sink after.
    ttft_by_users = {}
    for step in report.steps:
        assert step.client is not None
        chat = step.client.operations["chat"]
        assert chat.outcomes.ok > 0
        assert chat.ttft is not None
        ttft = decode(chat.ttft)
        assert count(ttft) > 0
        p50 = quantile_ms(ttft, 0.5)
        assert p50 is not None
        assert p50 >= TTFT * 1000  # the proxy can only add to the provider's first token
        ttft_by_users[step.level] = p50
        # The proxy's own share: the client's first token minus the provider's, as the
        # provider's Server-Timing (relayed by the proxy) tells it.
        assert chat.added is not None
        added = decode(chat.added)
        assert count(added) > 0
        added_p50 = quantile_ms(added, 0.5)
        assert added_p50 is not None
        assert 0 <= added_p50 < p50
    # Each modeled user metered under its own key: after the 2-user step the proxy had
    # seen 2 keys, after the 5-user step 5 (users 0 and 1 again, then 2 to 4).
    most = 0
    for step, seen in zip(report.steps, keys, strict=True):
        most = max(most, step.level)
        assert seen == {f"sk-user-{i}" for i in range(most)}, step.index
    # The seed's long prompts: every turn carries the system prompt (about 600 tokens by
    # the provider's count) and the conversation so far, short of the tenth turn's 2,500.
    tallies = usage[-1]["keys"]
    assert tallies
    for key, tally in tallies.items():
        assert 550 <= tally["in"] / tally["requests"] <= 2500, (key, tally)
    oks = sum(s.client.operations["chat"].outcomes.ok for s in report.steps if s.client)
    assert calls[-1]["mock-auth"] >= oks
    assert calls[-1]["mock-metering"] >= oks - 5 * len(report.steps)  # a few still in flight
    assert calls[-1]["mock-metering"] > 0
    markdown = render_markdown(report)
    ttft_section = markdown.split("## Time to first token and added latency")[1].split("\n## ")[0]
    for step in report.steps:
        assert f"| {step.index} | default | {step.level} | chat | " in ttft_section
    assert "| mock-auth |" in markdown
    # Goodput came through the whole path: judged per turn by the generators, merged,
    # in each step's record and report.md (no latency bound here: every ok turn is good).
    for step, record in report.step_pairs():
        assert step.client is not None
        assert record.attainment is not None
        good = step.client.operations["chat"].good
        assert good == step.client.operations["chat"].outcomes.ok
    assert "goodput/s (attainment)" in markdown
    assert "| mock-metering |" in markdown

    if report.outcome is not Outcome.SUCCEEDED:
        # A shared host that stalls the sampler makes a step invalid and stops the run: it
        # must say so, and claim no ceiling it did not find.
        assert "gap between samples" in report.message or "busy" in report.message, report.message
        assert report.ceiling is None or not report.ceiling.complete
        pytest.skip(f"the host was too busy for a verdict here: {report.message}")
    assert report.ceiling is not None
    assert report.ceiling.level in (2, 5), report.ceiling
    assert set(ttft_by_users) == {2, 5}
    for step in report.steps:
        for role in ("mock", "mock-auth", "mock-metering"):
            assert step.others[role].memory_max_bytes is not None, role
        if step.judgement.verdict is Verdict.PASS:
            assert step.level <= report.ceiling.level
