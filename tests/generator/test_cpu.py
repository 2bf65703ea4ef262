from __future__ import annotations

import pytest

from plimsoll_generator.cpu import peak_fraction


def test_peak_is_the_busiest_window() -> None:
    # 10 s of samples: idle, then 5 s at 90% of a core.
    samples = [(float(t), 0.0) for t in range(6)]
    cpu = 0.0
    for t in range(6, 11):
        cpu += 0.9
        samples.append((float(t), cpu))
    assert peak_fraction(samples, 5.0) == pytest.approx(0.9)


def test_a_short_run_reports_its_average() -> None:
    assert peak_fraction([(0.0, 0.0), (2.0, 1.0)], 5.0) == pytest.approx(0.5)
    assert peak_fraction([(0.0, 0.0)], 5.0) == 0.0
