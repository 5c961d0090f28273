"""rules.md#night to rules.md#morning: night actions, their limits, checks, and the dawn."""

from __future__ import annotations

from typing import Unpack

import pytest

from engine import (
    CLASSIC,
    FIIM,
    GEORGIAN,
    AlreadyActedError,
    Check,
    Disqualify,
    FloorKind,
    Game,
    Heal,
    IllegalActionError,
    InvalidTargetError,
    ManiacShoot,
    NotAlivePlayerError,
    NotYourTurnError,
    Phase,
    Ruleset,
    Seat,
    Shoot,
    Timeout,
    WrongPhaseError,
)
from engine import events as ev
from tests.engine.helpers import (
    CLASSIC_DOCTOR,
    TEN,
    TEN_DOCTOR,
    TWELVE,
    NightActions,
    assert_rejected,
    collect,
    of_type,
    play_night,
    start,
    start_preset,
    to_night,
)


def night(ruleset: Ruleset = CLASSIC, seating: str = TEN, n: int = 1) -> Game:
    game = start(ruleset, seating)
    to_night(game, n)
    return game


def dawn(game: Game, **actions: Unpack[NightActions]) -> ev.NightResolved:
    events = collect(game, lambda: play_night(game, **actions))
    return of_type(events, ev.NightResolved)[0]


# -- the mafia's shot -------------------------------------------------------------------------------------


@pytest.mark.parametrize("ruleset", [CLASSIC, FIIM], ids=["classic", "fiim"])
def test_unanimous_shot_kills(ruleset: Ruleset) -> None:
    game = night(ruleset)
    resolved = dawn(game, shots={1: 5, 2: 5, 3: 5})
    assert resolved.killed == (5,)
    assert resolved.mafia_target == 5
    assert not game.state.is_alive(5)


@pytest.mark.parametrize("ruleset", [CLASSIC, FIIM], ids=["classic", "fiim"])
def test_split_shot_is_a_miss(ruleset: Ruleset) -> None:
    # rules.md#mafia-kill: three blacks target #5, #5, #6 -> miss.
    game = night(ruleset)
    resolved = dawn(game, shots={1: 5, 2: 5, 3: 6})
    assert resolved.killed == ()
    assert resolved.mafia_target is None
    assert game.state.alive_seats() == list(range(1, 11))


@pytest.mark.parametrize("ruleset", [CLASSIC, FIIM], ids=["classic", "fiim"])
def test_missing_shooter_is_a_miss(ruleset: Ruleset) -> None:
    # rules.md#mafia-kill: two blacks target #5, the third sends nothing before the timeout.
    game = night(ruleset)
    resolved = dawn(game, shots={1: 5, 2: 5})
    assert resolved.killed == ()


def test_unanimity_counts_only_living_blacks() -> None:
    game = night(CLASSIC)
    game.apply(Disqualify(seat=3))
    resolved = dawn(game, shots={1: 5, 2: 5})
    assert resolved.killed == (5,)


def test_removed_shooters_shot_no_longer_counts() -> None:
    game = night(CLASSIC)
    game.apply(Shoot(seat=3, target=6))
    game.apply(Disqualify(seat=3))
    resolved = dawn(game, shots={1: 5, 2: 5})
    assert resolved.killed == (5,)


def test_black_may_shoot_any_alive_seat_including_a_black_one() -> None:
    game = night(CLASSIC)
    resolved = dawn(game, shots={1: 2, 2: 2, 3: 2})
    assert resolved.killed == (2,)


def test_shot_at_a_dead_seat_is_rejected() -> None:
    game = night(CLASSIC)
    play_night(game, shots={1: 5, 2: 5, 3: 5})
    to_night(game, 2)
    assert_rejected(game, Shoot(seat=1, target=5), InvalidTargetError, "night.target_not_alive")


def test_one_shot_per_shooter() -> None:
    game = night(FIIM)
    game.apply(Shoot(seat=1, target=5))
    assert_rejected(game, Shoot(seat=1, target=6), AlreadyActedError, "night.already_shot")


@pytest.mark.parametrize("seat", [4, 5])
def test_only_blacks_shoot(seat: Seat) -> None:
    game = night(CLASSIC)
    assert_rejected(game, Shoot(seat=seat, target=6), NotYourTurnError, "night.not_a_shooter")


def test_dead_black_cannot_shoot() -> None:
    game = night(CLASSIC)
    play_night(game, shots={1: 2, 2: 2, 3: 2})
    to_night(game, 2)
    assert_rejected(game, Shoot(seat=2, target=6), NotAlivePlayerError, "player.not_alive")


def test_no_shot_during_the_day() -> None:
    game = night(CLASSIC)
    game.apply(Timeout())
    assert game.state.phase is not Phase.NIGHT
    assert_rejected(game, Shoot(seat=1, target=5), WrongPhaseError)


def test_night_ends_at_once_when_every_actor_has_acted() -> None:
    game = night(CLASSIC)
    for command in (Shoot(seat=1, target=5), Shoot(seat=2, target=5), Shoot(seat=3, target=5), Check(seat=1, target=4)):
        game.apply(command)
    assert game.state.phase is Phase.NIGHT
    assert game.waiting().actors == frozenset({4})
    events = collect(game, lambda: game.apply(Check(seat=4, target=1)))
    assert of_type(events, ev.NightResolved)


def test_georgian_don_decides_when_the_mafia_disagree() -> None:
    game = night(GEORGIAN, TWELVE)
    resolved = dawn(game, shots={1: 7, 2: 8, 3: 8})
    assert resolved.killed == (7,)


def test_georgian_lowest_mafioso_decides_when_the_don_is_dead() -> None:
    game = night(GEORGIAN, TWELVE)
    game.apply(Disqualify(seat=1))
    resolved = dawn(game, shots={3: 8, 2: 7})
    assert resolved.killed == (7,)


def test_georgian_plurality_of_picks_when_the_decider_sent_nothing() -> None:
    game = night(GEORGIAN, TWELVE)
    resolved = dawn(game, shots={2: 8, 3: 8})
    assert resolved.killed == (8,)


def test_georgian_split_picks_without_the_don_fall_to_the_next_mafioso() -> None:
    game = night(GEORGIAN, TWELVE)
    resolved = dawn(game, shots={3: 8, 2: 7})
    assert resolved.killed == (7,)


def test_georgian_no_picks_is_no_kill() -> None:
    game = night(GEORGIAN, TWELVE)
    resolved = dawn(game)
    assert resolved.killed == ()


# -- the doctor ----------------------------------------------------------------------------------------


def test_classic_doctor_save_looks_like_a_miss_in_the_morning() -> None:
    # rules.md#doctor: mafia target #5 and Doctor #5 -> no death.
    game = night(CLASSIC_DOCTOR, TEN_DOCTOR)
    saved = dawn(game, shots={1: 6, 2: 6, 3: 6}, heal=(5, 6))
    assert saved.killed == ()
    assert saved.healed == 6
    missed = dawn_after_miss()
    assert missed.killed == saved.killed
    assert of_type(game.events, ev.DayStarted)[-1].opener == 2


def dawn_after_miss() -> ev.NightResolved:
    game = night(CLASSIC_DOCTOR, TEN_DOCTOR)
    return dawn(game, shots={1: 6, 2: 6, 3: 7})


def test_classic_doctor_cannot_save_the_same_seat_two_nights_in_a_row() -> None:
    game = night(CLASSIC_DOCTOR, TEN_DOCTOR)
    play_night(game, heal=(5, 7))
    to_night(game, 2)
    assert_rejected(game, Heal(seat=5, target=7), InvalidTargetError, "doctor.same_seat_twice_in_a_row")
    play_night(game, heal=(5, 8))
    to_night(game, 3)
    game.apply(Heal(seat=5, target=7))


def test_classic_doctor_saves_himself_once_per_game() -> None:
    game = night(CLASSIC_DOCTOR, TEN_DOCTOR)
    play_night(game, heal=(5, 5))
    to_night(game, 2)
    play_night(game, heal=(5, 7))
    to_night(game, 3)
    assert_rejected(game, Heal(seat=5, target=5), InvalidTargetError, "doctor.self_limit")


def test_classic_doctor_missing_pick_is_no_save_and_uses_nothing() -> None:
    game = night(CLASSIC_DOCTOR, TEN_DOCTOR)
    resolved = dawn(game, shots={1: 6, 2: 6, 3: 6})
    assert resolved.healed is None
    assert resolved.killed == (6,)
    to_night(game, 2)
    game.apply(Heal(seat=5, target=5))


def test_georgian_doctor_saves_each_seat_once() -> None:
    # rules.md#doctor: #4 on Night 1 -> #4 on Night 3 rejected; self on Night 2 accepted; self on Night 5 rejected.
    game = night(GEORGIAN, TWELVE)
    play_night(game, heal=(5, 4))
    to_night(game, 2)
    play_night(game, heal=(5, 5))
    to_night(game, 3)
    assert_rejected(game, Heal(seat=5, target=4), InvalidTargetError, "doctor.seat_already_saved")
    play_night(game, heal=(5, 9))
    to_night(game, 5)
    assert_rejected(game, Heal(seat=5, target=5), InvalidTargetError, "doctor.seat_already_saved")
    game.apply(Heal(seat=5, target=10))


def test_georgian_doctor_may_save_the_same_seat_as_classic_forbids_only_in_a_row() -> None:
    game = night(GEORGIAN, TWELVE)
    play_night(game, heal=(5, 5))
    to_night(game, 2)
    game.apply(Heal(seat=5, target=7))


def test_doctor_saves_only_alive_seats_once_a_night() -> None:
    game = night(CLASSIC_DOCTOR, TEN_DOCTOR)
    game.apply(Heal(seat=5, target=6))
    assert_rejected(game, Heal(seat=5, target=7), AlreadyActedError, "night.already_healed")


def test_only_the_doctor_heals() -> None:
    game = night(CLASSIC_DOCTOR, TEN_DOCTOR)
    assert_rejected(game, Heal(seat=6, target=6), NotYourTurnError, "night.not_the_doctor")


# -- the maniac ---------------------------------------------------------------------------------------------


def test_maniac_cannot_fire_on_night_one() -> None:
    # rules.md#maniac.
    game = night(GEORGIAN, TWELVE)
    assert_rejected(game, ManiacShoot(seat=6, target=7), IllegalActionError, "maniac.too_early")
    assert 6 not in game.waiting().actors


def test_maniac_shot_on_night_two_kills_and_uses_a_shot() -> None:
    game = night(GEORGIAN, TWELVE, 2)
    assert 6 in game.waiting().actors
    resolved = dawn(game, maniac=(6, 7))
    assert resolved.killed == (7,)
    assert game.state.maniac_shots_used == 1


def test_maniac_has_two_shots_per_game() -> None:
    # rules.md#maniac.
    game = night(GEORGIAN, TWELVE, 2)
    play_night(game, maniac=(6, 7))
    to_night(game, 3)
    play_night(game, maniac=(6, 8))
    to_night(game, 4)
    assert_rejected(game, ManiacShoot(seat=6, target=9), IllegalActionError, "maniac.no_shots_left")
    assert 6 not in game.waiting().actors


def test_maniac_may_pass_without_using_a_shot() -> None:
    game = night(GEORGIAN, TWELVE, 2)
    resolved = dawn(game, maniac=(6, None))
    assert resolved.killed == ()
    assert game.state.maniac_shots_used == 0


def test_maniac_cannot_target_himself() -> None:
    game = night(GEORGIAN, TWELVE, 2)
    assert_rejected(game, ManiacShoot(seat=6, target=6), InvalidTargetError, "maniac.self_target")


def test_maniac_fires_once_a_night() -> None:
    game = night(GEORGIAN, TWELVE, 2)
    game.apply(ManiacShoot(seat=6, target=7))
    assert_rejected(game, ManiacShoot(seat=6, target=8), AlreadyActedError, "night.already_acted")


def test_maniac_shot_is_used_even_when_the_doctor_saves_the_target() -> None:
    # rules.md#dawn (seats moved): mafia #9, maniac #8, Doctor #8 -> only #9 dies, shots 2 -> 1.
    game = night(GEORGIAN, TWELVE, 2)
    resolved = dawn(game, shots={1: 9}, maniac=(6, 8), heal=(5, 8))
    assert resolved.killed == (9,)
    assert game.state.maniac_shots_used == 1


def test_mafia_and_maniac_on_the_same_seat_is_one_death_and_a_used_shot() -> None:
    game = night(GEORGIAN, TWELVE, 2)
    resolved = dawn(game, shots={1: 9}, maniac=(6, 9))
    assert resolved.killed == (9,)
    assert game.state.maniac_shots_used == 1


def test_doctor_covers_both_kills_on_the_same_seat() -> None:
    game = night(GEORGIAN, TWELVE, 2)
    resolved = dawn(game, shots={1: 9}, maniac=(6, 9), heal=(5, 9))
    assert resolved.killed == ()


def test_mafia_and_maniac_on_different_seats_kill_two() -> None:
    game = night(GEORGIAN, TWELVE, 2)
    resolved = dawn(game, shots={1: 9}, maniac=(6, 7))
    assert resolved.killed == (7, 9)


def test_maniac_may_kill_a_mafioso_and_the_mafia_may_kill_the_maniac() -> None:
    game = night(GEORGIAN, TWELVE, 2)
    resolved = dawn(game, shots={1: 6}, maniac=(6, 2))
    assert resolved.killed == (2, 6)


# -- checks ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("target", "sheriff"), [(4, True), (7, False), (2, False)])
def test_don_check_says_whether_the_seat_is_the_sheriff(target: Seat, sheriff: bool) -> None:
    # rules.md#checks.
    game = night(CLASSIC)
    events = game.apply(Check(seat=1, target=target))
    assert events[0] == ev.DonChecked(seat=1, target=target, sheriff=sheriff)


@pytest.mark.parametrize(("target", "black"), [(1, True), (2, True), (5, False), (7, False)])
def test_sheriff_check_says_black_or_red(target: Seat, black: bool) -> None:
    # rules.md#checks: S checks D -> black, M -> black, Doctor -> red.
    game = night(CLASSIC_DOCTOR, TEN_DOCTOR)
    events = game.apply(Check(seat=4, target=target))
    assert events[0] == ev.SheriffChecked(seat=4, target=target, black=black)


@pytest.mark.parametrize(("target", "mafia"), [(6, False), (1, True), (3, True), (5, False), (9, False)])
def test_georgian_detective_sees_the_maniac_as_not_mafia(target: Seat, mafia: bool) -> None:
    # rules.md#checks.
    game = night(GEORGIAN, TWELVE)
    events = game.apply(Check(seat=4, target=target))
    assert events[0] == ev.SheriffChecked(seat=4, target=target, black=mafia)


def test_georgian_don_finds_the_detective() -> None:
    game = night(GEORGIAN, TWELVE)
    events = game.apply(Check(seat=1, target=4))
    assert events[0] == ev.DonChecked(seat=1, target=4, sheriff=True)


def test_maniac_check_flag_black_shows_him_as_mafia() -> None:
    game = night(GEORGIAN.replace(maniac_check="black"), TWELVE)
    events = game.apply(Check(seat=4, target=6))
    assert events[0] == ev.SheriffChecked(seat=4, target=6, black=True)


@pytest.mark.parametrize("seat", [1, 4])
def test_self_check_is_rejected(seat: Seat) -> None:
    game = night(CLASSIC)
    assert_rejected(game, Check(seat=seat, target=seat), InvalidTargetError, "night.self_check")


@pytest.mark.parametrize("seat", [2, 7])
def test_only_don_and_sheriff_check(seat: Seat) -> None:
    game = night(CLASSIC)
    assert_rejected(game, Check(seat=seat, target=5), NotYourTurnError, "night.cannot_check")


def test_one_check_a_night() -> None:
    game = night(CLASSIC)
    game.apply(Check(seat=4, target=1))
    assert_rejected(game, Check(seat=4, target=2), AlreadyActedError, "night.already_checked")


def test_check_on_a_dead_seat_is_allowed_and_still_informative() -> None:
    game = night(CLASSIC)
    play_night(game, shots={1: 2, 2: 2, 3: 2})
    to_night(game, 2)
    events = game.apply(Check(seat=4, target=2))
    assert events[0] == ev.SheriffChecked(seat=4, target=2, black=True)


def test_repeat_checks_are_allowed() -> None:
    game = night(CLASSIC)
    play_night(game, checks={4: 1})
    to_night(game, 2)
    game.apply(Check(seat=4, target=1))


def test_dead_sheriff_cannot_check() -> None:
    game = night(CLASSIC)
    play_night(game, shots={1: 4, 2: 4, 3: 4})
    to_night(game, 2)
    assert_rejected(game, Check(seat=4, target=1), NotAlivePlayerError)


# -- actions of a player killed the same night ----------------------------------------------------------------------


def test_sheriff_shot_that_night_still_gets_his_check() -> None:
    game = night(CLASSIC)
    events = collect(game, lambda: play_night(game, shots={1: 4, 2: 4, 3: 4}, checks={4: 2}))
    assert ev.SheriffChecked(seat=4, target=2, black=True) in events
    assert of_type(events, ev.NightResolved)[0].killed == (4,)


def test_doctor_shot_that_night_still_saves() -> None:
    game = night(GEORGIAN, TWELVE, 2)
    resolved = dawn(game, shots={1: 5}, maniac=(6, 8), heal=(5, 8))
    assert resolved.killed == (5,)


def test_don_shot_by_the_maniac_still_checks_and_decides() -> None:
    game = night(GEORGIAN, TWELVE, 2)
    events = collect(game, lambda: play_night(game, shots={1: 9, 2: 10}, checks={1: 4}, maniac=(6, 1)))
    assert ev.DonChecked(seat=1, target=4, sheriff=True) in events
    assert of_type(events, ev.NightResolved)[0].killed == (1, 9)


# -- the morning ----------------------------------------------------------------------------------------------


def test_no_kills_means_nobody_died_and_day_starts_without_last_words() -> None:
    game = night(CLASSIC)
    events = collect(game, lambda: game.apply(Timeout()))
    assert of_type(events, ev.NightResolved)[0].killed == ()
    assert of_type(events, ev.StageStarted)[0] == ev.StageStarted(phase=Phase.LAST_WORDS, turns=())
    assert game.state.phase is Phase.SPEECHES


@pytest.mark.parametrize(("preset", "wording"), [("classic", "nobody_hurt"), ("fiim", "mafia_missed")])
def test_miss_announcement_style_by_preset(preset: str, wording: str) -> None:
    game = start_preset(preset)
    assert game.ruleset.miss_announcement == wording


def test_night_deaths_get_a_sixty_second_last_word() -> None:
    game = night(CLASSIC)
    play_night(game, shots={1: 5, 2: 5, 3: 5})
    assert game.state.phase is Phase.LAST_WORDS
    assert game.state.floor == ev.Turn(5, FloorKind.LAST_WORD, 60)
