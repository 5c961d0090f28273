"""The fair-play decisions, without Discord: what matters when, and each alert once per player, kind and phase."""

from __future__ import annotations

import pytest

from engine import Game, Phase, StartGame, Timeout, find_ruleset
from mafiabot.core.fairplay import FairPlayWatch, Lapse, alert_for, left_on


def night_zero() -> Game:
    game = Game(find_ruleset("classic"))
    game.apply(StartGame(players=10, seed=3))
    assert game.state.phase is Phase.NIGHT_ZERO
    return game


@pytest.mark.parametrize("lapse", [Lapse.CAMERA, Lapse.STREAM, Lapse.MESSAGE])
def test_what_the_table_sees_by_day_matters_only_at_night(lapse: Lapse) -> None:
    game = night_zero()
    alert = alert_for(game.state, 4, lapse, set())
    assert alert is not None
    assert (alert.seat, alert.at_night, alert.number, alert.lapse) == (4, True, 0, lapse)
    game.apply(Timeout(step=game.state.timer))
    assert game.state.phase is not Phase.NIGHT_ZERO
    assert alert_for(game.state, 4, lapse, set()) is None


def test_deafening_matters_while_someone_speaks_and_a_lifted_mute_always() -> None:
    game = night_zero()
    assert alert_for(game.state, 2, Lapse.DEAFENED, set()) is None
    lifted = alert_for(game.state, 2, Lapse.MUTE_LIFTED, set())
    assert lifted is not None
    assert lifted.at_night
    game.apply(Timeout(step=game.state.timer))
    assert game.state.floor is not None
    deaf = alert_for(game.state, 2, Lapse.DEAFENED, set())
    assert deaf is not None
    assert not deaf.at_night
    assert deaf.number == 1


def test_nobody_unseated_and_nothing_twice_in_one_phase() -> None:
    game = night_zero()
    watch = FairPlayWatch()
    assert watch.observe(game.state, None, Lapse.CAMERA) is None
    assert watch.observe(game.state, 3, Lapse.CAMERA) is not None
    assert watch.observe(game.state, 3, Lapse.CAMERA) is None
    assert watch.observe(game.state, 3, Lapse.STREAM) is not None  # another kind
    assert watch.observe(game.state, 4, Lapse.CAMERA) is not None  # another player


def test_nothing_matters_before_the_deal() -> None:
    game = Game(find_ruleset("classic"))
    assert all(alert_for(game.state, 1, lapse, set()) is None for lapse in Lapse)


def test_a_camera_or_screen_left_on_counts_once_eyes_are_closed() -> None:
    game = night_zero()
    assert left_on(game.state, camera=True, stream=True) == [Lapse.CAMERA, Lapse.STREAM]
    assert left_on(game.state, camera=False, stream=True) == [Lapse.STREAM]
    assert left_on(game.state, camera=False, stream=False) == []
    game.apply(Timeout(step=game.state.timer))
    assert game.state.floor is not None  # by day the table sees the camera anyway
    assert left_on(game.state, camera=True, stream=True) == []
    assert left_on(Game(find_ruleset("classic")).state, camera=True, stream=False) == []
