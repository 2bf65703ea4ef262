"""`plimsoll operator --peering`: bad values are refused naming the option and the fix."""

from __future__ import annotations

import pytest
import typer

from plimsoll.cli.operator import Peering


def test_a_lifetime_too_short_for_a_keep_alive_is_refused() -> None:
    with pytest.raises(typer.BadParameter, match=r"--peering-lifetime 2: give 3 to 3600"):
        Peering("plimsoll", 2)


def test_an_empty_peering_name_is_refused() -> None:
    with pytest.raises(typer.BadParameter, match="--peering needs the peering object's name"):
        Peering(" ", 30)


def test_the_chart_default_is_accepted() -> None:
    assert Peering("plimsoll").lifetime == 30
