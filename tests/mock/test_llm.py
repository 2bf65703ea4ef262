"""LLM endpoints with the real `openai` and `anthropic` SDK clients as peers."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import anthropic
import openai
import pytest

from tests.mock.conftest import base_url

CONFIG: dict[str, Any] = {
    "llm": {
        "ttft": {"fixed": "100ms"},
        "itl": {"fixed": "5ms"},
        "outputTokens": 20,
        "model": "mock-1",
    }
}
MESSAGES: Any = [{"role": "user", "content": "Hello there, how are you?"}]


async def test_openai_streams_with_ttft_and_usage(mock_server: Any) -> None:
    running = await mock_server(CONFIG)
    client = openai.AsyncOpenAI(base_url=f"{base_url(running)}/v1", api_key="test")
    started = time.perf_counter()
    stream = await client.chat.completions.create(
        model="gpt-x", messages=MESSAGES, stream=True, stream_options={"include_usage": True}
    )
    first_token_at = None
    text = ""
    usage = None
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            first_token_at = first_token_at or time.perf_counter()
            text += chunk.choices[0].delta.content
        if chunk.usage:
            usage = chunk.usage
    finished = time.perf_counter()
    await client.close()
    assert first_token_at is not None
    assert first_token_at - started >= 0.099
    assert finished - started >= 0.1 + 19 * 0.005 - 0.002
    assert len(text.split()) == 20
    assert usage is not None
    assert usage.completion_tokens == 20
    assert usage.prompt_tokens > 0


async def test_openai_non_streaming_with_max_tokens_cap(mock_server: Any) -> None:
    running = await mock_server(CONFIG)
    client = openai.AsyncOpenAI(base_url=f"{base_url(running)}/v1", api_key="test")
    completion = await client.chat.completions.create(model="m", messages=MESSAGES, max_tokens=5)
    await client.close()
    assert completion.choices[0].finish_reason == "length"
    assert completion.usage is not None
    assert completion.usage.completion_tokens == 5
    assert len((completion.choices[0].message.content or "").split()) == 5


async def test_anthropic_streams_and_counts_tokens(mock_server: Any) -> None:
    running = await mock_server(CONFIG)
    client = anthropic.AsyncAnthropic(base_url=base_url(running), api_key="test")
    async with client.messages.stream(
        model="claude-x", max_tokens=100, messages=MESSAGES
    ) as stream:
        text = "".join([t async for t in stream.text_stream])
        message = await stream.get_final_message()
    assert len(text.split()) == 20
    assert message.usage.output_tokens == 20
    assert message.usage.input_tokens > 0
    assert message.stop_reason == "end_turn"
    plain = await client.messages.create(model="claude-x", max_tokens=3, messages=MESSAGES)
    await client.close()
    assert plain.stop_reason == "max_tokens"
    assert plain.usage.output_tokens == 3


async def test_llm_errors_use_the_provider_shape(mock_server: Any) -> None:
    running = await mock_server(
        {"llm": {"ttft": {"fixed": "1ms"}, "errors": {"fraction": "100%", "status": 529}}}
    )
    client = anthropic.AsyncAnthropic(base_url=base_url(running), api_key="t", max_retries=0)
    with pytest.raises(anthropic.APIStatusError) as caught:
        await client.messages.create(model="c", max_tokens=3, messages=MESSAGES)
    await client.close()
    assert caught.value.status_code == 529
    assert caught.value.body["error"]["type"] == "overloaded_error"  # type: ignore[index]


async def test_a_client_leaving_mid_stream_frees_the_call(mock_server: Any) -> None:
    running = await mock_server(
        {"llm": {"ttft": {"fixed": "10ms"}, "itl": {"fixed": "50ms"}, "outputTokens": 100}}
    )
    reader, writer = await asyncio.open_connection("127.0.0.1", running.port)
    body = b'{"stream":true,"messages":[{"role":"user","content":"hi"}]}'
    writer.write(
        b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: %d\r\n\r\n%s"
        % (len(body), body)
    )
    head = await reader.readuntil(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200")
    assert running.state.in_flight == 1
    writer.close()
    await writer.wait_closed()
    for _ in range(100):
        if running.state.in_flight == 0:
            break
        await asyncio.sleep(0.01)
    assert running.state.in_flight == 0
