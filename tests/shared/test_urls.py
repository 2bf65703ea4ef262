"""Credentials in URLs never reach a message: only the userinfo is replaced."""

from __future__ import annotations

import pytest

from plimsoll.shared.urls import redact_url, redact_urls_in


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://user:pass@host:9090/p?q=1", "https://***@host:9090/p?q=1"),
        ("http://token@10.0.0.1", "http://***@10.0.0.1"),
        ("https://:only-a-password@host", "https://***@host"),
        ("http://host/path@not-userinfo", "http://host/path@not-userinfo"),
        ("http://host?who=a@b", "http://host?who=a@b"),
        ("http://host:9090", "http://host:9090"),
        ("HTTPS://u:p@h", "HTTPS://***@h"),
    ],
)
def test_only_the_userinfo_is_redacted(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_every_url_in_a_message_is_redacted() -> None:
    text = "tried https://a:b@one/x then http://c:d@two:80 and gave up"
    assert redact_urls_in(text) == "tried https://***@one/x then http://***@two:80 and gave up"
    assert "b@" not in redact_urls_in(text)
    assert "d@" not in redact_urls_in(text)
