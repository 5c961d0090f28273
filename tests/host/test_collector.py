"""The bot collects garbage less often than CPython's default, and never more often than it was told."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from mafiabot.host.bot import COLLECTOR_THRESHOLD, tune_collector


@pytest.fixture
def thresholds() -> Iterator[None]:
    saved = gc.get_threshold()
    try:
        yield
    finally:
        gc.set_threshold(*saved)


@pytest.mark.usefixtures("thresholds")
def test_the_default_pace_is_slowed_and_the_older_generations_keep_theirs() -> None:
    gc.set_threshold(700, 10, 10)
    tune_collector()
    assert gc.get_threshold() == (COLLECTOR_THRESHOLD, 10, 10)


@pytest.mark.usefixtures("thresholds")
@pytest.mark.parametrize("young", [0, COLLECTOR_THRESHOLD * 2])
def test_a_disabled_or_slower_collector_is_left_alone(young: int) -> None:
    gc.set_threshold(young, 10, 10)
    tune_collector()
    assert gc.get_threshold() == (young, 10, 10)
