"""One turn's request body (`plimsoll_generator.conversation.turn_body`): the
conversation so far after its system prompt, where each API takes one."""

from __future__ import annotations

import json
import random

from plimsoll.api.workload import Conversation, Protocol
from plimsoll_generator.conversation import prompt, turn_body

HISTORY = [
    {"role": "user", "content": "hello"},
    {"role": "assistant", "content": "hi"},
    {"role": "user", "content": "again"},
]


def test_openai_gets_the_system_prompt_as_its_first_message() -> None:
    config = Conversation(system_chars=30, max_tokens=16)
    body = json.loads(turn_body(config, Protocol.OPENAI, HISTORY, "you are terse"))
    assert body["messages"] == [{"role": "system", "content": "you are terse"}, *HISTORY]
    assert "system" not in body
    assert (body["max_tokens"], body["stream"], body["model"]) == (16, True, "plimsoll-echo")


def test_anthropic_gets_it_in_its_own_field_and_no_system_message() -> None:
    body = json.loads(turn_body(Conversation(), Protocol.ANTHROPIC, HISTORY, "you are terse"))
    assert body["system"] == "you are terse"
    assert body["messages"] == HISTORY
    assert all(m["role"] != "system" for m in body["messages"])


def test_without_a_system_prompt_the_body_is_the_history_alone() -> None:
    for protocol in Protocol.OPENAI, Protocol.ANTHROPIC:
        body = json.loads(turn_body(Conversation(), protocol, HISTORY, ""))
        assert body["messages"] == HISTORY
        assert "system" not in body


def test_a_prompt_has_the_asked_length_in_words() -> None:
    text = prompt(random.Random(1), 2400)
    assert len(text) == 2400
    assert len(text.split()) > 200  # words, so a tokenizer counts it as text
