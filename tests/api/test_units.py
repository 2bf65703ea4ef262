"""Durations, quantities and percentages: what users write, what the code gets back."""

import pytest

from plimsoll.api.units import (
    format_cpu,
    format_duration,
    format_fraction,
    format_memory,
    parse_cpu,
    parse_duration,
    parse_fraction,
    parse_memory,
    parse_quantile,
)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("250ms", 0.25), ("1.2s", 1.2), ("5m", 300), ("2m30s", 150), ("1h", 3600), ("800us", 8e-4)],
)
def test_durations_parse_to_seconds(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("seconds", [0.25, 1.2, 90, 300, 3600, 0.0008, 0])
def test_durations_round_trip(seconds: float) -> None:
    assert parse_duration(format_duration(seconds)) == pytest.approx(seconds)


@pytest.mark.parametrize("bad", ["-5s", "5", "5 sec", "", "1.5.2s", True])
def test_bad_durations_say_how_to_write_one(bad: object) -> None:
    with pytest.raises(ValueError, match=r"'30s'|duration"):
        parse_duration(bad)


def test_memory_quantities_follow_kubernetes() -> None:
    assert parse_memory("512Mi") == 512 * 2**20
    assert parse_memory("1Gi") == 2**30
    assert parse_memory("500M") == 500_000_000
    assert parse_memory(4096) == 4096
    assert format_memory(512 * 2**20) == "512Mi"
    assert format_memory(1000) == "1000"


def test_megabytes_spelt_the_desktop_way_get_a_hint() -> None:
    with pytest.raises(ValueError, match=r"did you mean '512Mi'"):
        parse_memory("512MB")


def test_cpu_quantities() -> None:
    assert parse_cpu("500m") == 0.5
    assert parse_cpu("1") == 1.0
    assert parse_cpu(2) == 2.0
    assert format_cpu(0.5) == "500m"
    assert format_cpu(1.0) == "1"
    with pytest.raises(ValueError, match="millicores"):
        parse_cpu("1 core")
    with pytest.raises(ValueError, match="positive"):
        parse_cpu("0")


def test_percentages_are_fractions() -> None:
    assert parse_fraction("0.5%") == pytest.approx(0.005)
    assert parse_fraction("100%") == 1.0
    assert format_fraction(0.005) == "0.5%"
    with pytest.raises(ValueError, match="between 0% and 100%"):
        parse_fraction("150%")
    with pytest.raises(ValueError, match="% sign"):
        parse_fraction("5 percent")


def test_quantiles() -> None:
    assert parse_quantile("p95") == pytest.approx(0.95)
    assert parse_quantile("p99.9") == pytest.approx(0.999)
    with pytest.raises(ValueError, match="strictly between"):
        parse_quantile("p150")
    with pytest.raises(ValueError, match="'p95'"):
        parse_quantile("95th")


@pytest.mark.parametrize(
    ("parse", "text"),
    [
        (parse_memory, "\u0665\u0661\u0662Mi"),  # Arabic-Indic 512Mi
        (parse_cpu, "\u0665"),
        (parse_cpu, "\u0665\u0660\u0660m"),
        (parse_duration, "\u0665s"),
        (parse_duration, "\uff15s"),  # fullwidth 5
        (parse_fraction, "\u0665%"),
        (parse_quantile, "p\u0669\u0669"),
    ],
)
def test_non_ascii_digits_are_refused_as_the_crds_patterns_refuse_them(
    parse: object, text: str
) -> None:
    """Python's \\d matches any script's digits, Kubernetes' patterns only 0-9: the
    model accepted Arabic-Indic '512Mi' that the API server refuses (issue 52)."""
    assert callable(parse)
    with pytest.raises(ValueError, match="is not"):
        parse(text)
