"""Rulesets: the presets of rules.md#presets and rules.md#setups, custom TOML rulesets, and their validation."""

from __future__ import annotations

from decimal import Decimal

import pytest

from engine import CLASSIC, FIIM, GEORGIAN, PRESETS, Role, Ruleset, RulesetError, find_ruleset, from_mapping, from_toml

# rules.md#presets, one row per flag, one column per preset.
SPEC_TABLE = {
    # players
    "player_counts": ((6, 7, 8, 9, 10, 11, 12), (11, 12), (10,)),
    "default_players": (10, 12, 10),
    # doctor
    "doctor": (False, True, False),
    "doctor_no_repeat_target": (True, False, False),
    "doctor_self_limit": (1, None, None),
    "doctor_each_seat_once": (False, True, False),
    # maniac (kills, first night)
    "maniac_shots": (2, 2, 2),
    "maniac_first_kill_night": (2, 2, 2),
    "maniac_check": ("red", "red", "red"),
    # mafia kill
    "mafia_kill": ("unanimous", "don_decides", "unanimous"),
    # first-day single nominee: no vote
    "first_day_single_nominee_no_vote": (True, False, True),
    # defense speech before vote
    "defense_before_vote": (False, True, False),
    # nominee recap
    "recap_before_last_speaker": (False, True, False),
    # revote when the tie shrinks
    "revote_when_tie_shrinks": (False, False, True),
    # lift with 3 tied at 9 alive
    "lift_three_tied_at_nine": (True, True, False),
    # 3-foul penalty
    "three_foul_penalty": ("lose_speech", "none", "lose_speech"),
    "muted_can_nominate": (False, False, True),
    "short_speech_alive": (0, 0, 4),
    # removal threshold (fouls): 4 everywhere; classic adds "second oath = removal", georgian counts an
    # oath as one foul (rules.md#fouls-georgian). fiim's oath is a team defeat (rules.md#fouls-fiim), which
    # no flag models; the engine keeps the classic second-oath removal there.
    "foul_removal_at": (4, 4, 4),
    "second_oath_removal": (True, False, True),
    # removal cancels vote
    "removal_cancels_vote": (True, True, True),
    # Best Move / points
    "best_move": (False, False, True),
    "removal_penalty": (Decimal(0), Decimal(0), Decimal("0.5")),
    # no-departure draw rule
    "no_departure_draw": (False, False, True),
    # checks and morning wording (rules.md#checks, rules.md#morning)
    "check_style": ("black_red", "mafia", "black_red"),
    "miss_announcement": ("nobody_hurt", "nobody_hurt", "mafia_missed"),
    # the checker's card: the Sheriff, or in georgian the Detective (rules.md#roles)
    "checker": ("sheriff", "detective", "sheriff"),
    # who meets the host on Night 0 (rules.md#night-zero): georgian adds the Doctor
    "night_zero_meets_host": (
        (Role.DON, Role.SHERIFF), (Role.DON, Role.SHERIFF, Role.DOCTOR), (Role.DON, Role.SHERIFF),
    ),
    # self-nomination (rules.md#nominations)
    "self_nomination": (True, True, True),
    # the final eliminated player's last word after the result (rules.md#final-words)
    "last_word_after_end": (True, True, True),
    # speech / defense / last word (s), and the crash speech of rules.md#vote-tie
    "speech_seconds": (60, 60, 60),
    "defense_seconds": (30, 30, 30),
    "last_word_seconds": (60, 60, 60),
    "tie_speech_seconds": (30, 30, 30),
    "short_speech_seconds": (30, 30, 30),
    "technical_pause_seconds": (120, 120, 120),
}

FLAG_ROWS = [
    pytest.param(preset, flag, expected, id=f"{preset.name}-{flag}")
    for flag, values in SPEC_TABLE.items()
    for preset, expected in zip((CLASSIC, GEORGIAN, FIIM), values, strict=True)
]


@pytest.mark.parametrize(("preset", "flag", "expected"), FLAG_ROWS)
def test_preset_flag_matches_spec_table(preset: Ruleset, flag: str, expected: object) -> None:
    assert getattr(preset, flag) == expected


C, S, H, M, D, K = Role.CITIZEN, Role.SHERIFF, Role.DOCTOR, Role.MAFIA, Role.DON, Role.MANIAC


@pytest.mark.parametrize(("players", "black"), [(6, 2), (7, 2), (8, 2), (9, 3), (10, 3), (11, 3), (12, 3)])
def test_classic_setup_for_each_table_size(players: int, black: int) -> None:
    counts = CLASSIC.roles_for(players)
    assert counts[D] == 1
    assert counts[S] == 1
    assert counts[M] == black - 1
    assert counts[C] == players - black - 1
    assert H not in counts
    assert sum(counts.values()) == players


def test_classic_ten_is_six_citizens_sheriff_two_mafia_and_don() -> None:
    assert CLASSIC.roles_for(10) == {C: 6, S: 1, M: 2, D: 1}


@pytest.mark.parametrize("players", [8, 9, 10, 11, 12])
def test_classic_doctor_option_replaces_a_citizen_from_eight_players(players: int) -> None:
    plain = CLASSIC.roles_for(players)
    with_doctor = CLASSIC.replace(doctor=True).roles_for(players)
    assert with_doctor[H] == 1
    assert with_doctor[C] == plain[C] - 1


@pytest.mark.parametrize("players", [6, 7])
def test_classic_doctor_option_is_off_below_eight_players(players: int) -> None:
    assert H not in CLASSIC.replace(doctor=True).roles_for(players)


@pytest.mark.parametrize(
    ("players", "expected"),
    [
        (12, {C: 6, S: 1, H: 1, M: 2, D: 1, K: 1}),
        (11, {C: 5, S: 1, H: 1, M: 2, D: 1, K: 1}),
    ],
)
def test_georgian_setups(players: int, expected: dict[Role, int]) -> None:
    assert GEORGIAN.roles_for(players) == expected


def test_fiim_is_ten_players_without_a_doctor() -> None:
    assert FIIM.roles_for(10) == {C: 6, S: 1, M: 2, D: 1}


@pytest.mark.parametrize(("preset", "players"), [(GEORGIAN, 10), (GEORGIAN, 13), (FIIM, 9), (FIIM, 12), (CLASSIC, 5)])
def test_unsupported_table_size_is_refused(preset: Ruleset, players: int) -> None:
    with pytest.raises(RulesetError) as error:
        preset.roles_for(players)
    assert error.value.field == "players"


# -- find_ruleset ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "preset"),
    [
        ("classic", CLASSIC),
        ("CLASSIC", CLASSIC),
        (" Classic ", CLASSIC),
        ("russian", CLASSIC),
        ("club", CLASSIC),
        ("georgian", GEORGIAN),
        ("ka", GEORGIAN),
        ("ge", GEORGIAN),
        ("fiim", FIIM),
        ("tournament", FIIM),
        ("FIIM", FIIM),
    ],
)
def test_find_ruleset_by_name_or_alias(name: str, preset: Ruleset) -> None:
    assert find_ruleset(name) is preset


def test_find_ruleset_refuses_an_unknown_name() -> None:
    with pytest.raises(RulesetError) as error:
        find_ruleset("chess")
    assert error.value.field == "ruleset"


def test_every_preset_is_registered_under_its_name() -> None:
    assert PRESETS == {"classic": CLASSIC, "georgian": GEORGIAN, "fiim": FIIM}


# -- custom rulesets ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "flag", "value"),
    [
        ("doctor = true", "doctor", True),
        ("mafia_kill = 'don_decides'", "mafia_kill", "don_decides"),
        ("first_day_single_nominee_no_vote = false", "first_day_single_nominee_no_vote", False),
        ("defense_before_vote = true", "defense_before_vote", True),
        ("recap_before_last_speaker = true", "recap_before_last_speaker", True),
        ("revote_when_tie_shrinks = true", "revote_when_tie_shrinks", True),
        ("lift_three_tied_at_nine = false", "lift_three_tied_at_nine", False),
        ("self_nomination = false", "self_nomination", False),
        ("three_foul_penalty = 'none'", "three_foul_penalty", "none"),
        ("muted_can_nominate = true", "muted_can_nominate", True),
        ("short_speech_alive = 4", "short_speech_alive", 4),
        ("foul_removal_at = 5", "foul_removal_at", 5),
        ("second_oath_removal = false", "second_oath_removal", False),
        ("removal_cancels_vote = false", "removal_cancels_vote", False),
        ("best_move = true", "best_move", True),
        ("removal_penalty = 0.5", "removal_penalty", Decimal("0.5")),
        ("removal_penalty = '0.25'", "removal_penalty", Decimal("0.25")),
        ("no_departure_draw = true", "no_departure_draw", True),
        ("last_word_after_end = false", "last_word_after_end", False),
        ("check_style = 'mafia'", "check_style", "mafia"),
        ("checker = 'detective'", "checker", "detective"),
        ("night_zero_meets_host = ['don']", "night_zero_meets_host", (Role.DON,)),
        ("night_zero_meets_host = []", "night_zero_meets_host", ()),
        ("miss_announcement = 'mafia_missed'", "miss_announcement", "mafia_missed"),
        ("speech_seconds = 45", "speech_seconds", 45),
        ("vote_window_seconds = 5", "vote_window_seconds", 5),
        ("technical_pause_seconds = 90", "technical_pause_seconds", 90),
        ("name = 'Tbilisi club'", "name", "Tbilisi club"),
    ],
)
def test_custom_toml_sets_any_flag(line: str, flag: str, value: object) -> None:
    ruleset = from_toml(line)
    assert getattr(ruleset, flag) == value
    assert ruleset.base == "classic"


def test_custom_toml_starts_from_the_named_base() -> None:
    ruleset = from_toml("base = 'georgian'\ndefense_before_vote = false")
    assert ruleset.base == "georgian"
    assert ruleset.mafia_kill == "don_decides"
    assert ruleset.defense_before_vote is False
    assert ruleset.player_counts == (11, 12)


def test_custom_toml_doctor_limits_with_a_doctor() -> None:
    ruleset = from_toml("doctor = true\ndoctor_self_limit = 2\ndoctor_each_seat_once = true")
    assert ruleset.doctor_self_limit == 2
    assert ruleset.doctor_each_seat_once is True


def test_custom_toml_role_counts() -> None:
    ruleset = from_toml(
        """
        default_players = 12
        [setups.12]
        citizen = 7
        sheriff = 1
        mafia = 3
        don = 1
        [setups.8]
        citizen = 4
        sheriff = 1
        doctor = 1
        mafia = 1
        don = 1
        """
    )
    assert ruleset.player_counts == (8, 12)
    assert ruleset.roles_for(12) == {C: 7, S: 1, M: 3, D: 1}
    assert ruleset.roles_for(8) == {C: 4, S: 1, H: 1, M: 1, D: 1}


def test_custom_toml_maniac_setup() -> None:
    ruleset = from_toml(
        """
        maniac_shots = 1
        maniac_first_kill_night = 1
        default_players = 9
        [setups.9]
        citizen = 5
        sheriff = 1
        mafia = 1
        don = 1
        maniac = 1
        """
    )
    assert ruleset.roles_for(9)[K] == 1
    assert ruleset.maniac_shots == 1


def test_ruleset_round_trips_through_its_dict() -> None:
    for preset in (CLASSIC, GEORGIAN, FIIM):
        data = preset.to_dict()
        data.pop("base")
        rebuilt = from_mapping({**data, "base": preset.name})
        assert rebuilt.replace(base="") == preset


@pytest.mark.parametrize(("preset", "role", "card"), [
    (CLASSIC, S, "sheriff"), (FIIM, S, "sheriff"), (GEORGIAN, S, "detective"), (GEORGIAN, D, "don"),
    (GEORGIAN, K, "maniac"), (CLASSIC, C, "citizen"),
])
def test_card_name_is_the_checkers_title_for_the_sheriff(preset: Ruleset, role: Role, card: str) -> None:
    assert preset.card_name(role) == card


@pytest.mark.parametrize(("preset", "black", "result"), [
    (CLASSIC, True, "black"), (CLASSIC, False, "red"), (FIIM, True, "black"),
    (GEORGIAN, True, "mafia"), (GEORGIAN, False, "not_mafia"),
])
def test_check_result_follows_the_check_style(preset: Ruleset, black: bool, result: str) -> None:
    assert preset.check_result(black=black) == result


def test_the_maniac_is_checked_as_red_or_not_mafia() -> None:
    assert GEORGIAN.maniac_check_result == "not_mafia"
    assert GEORGIAN.replace(maniac_check="black").maniac_check_result == "mafia"
    assert CLASSIC.maniac_check_result == "red"


def test_meets_host_skips_roles_the_table_does_not_deal() -> None:
    assert GEORGIAN.meets_host(12) == (D, S, H)
    assert CLASSIC.meets_host(10) == (D, S)
    # The classic Doctor option does not wake the Doctor on Night 0 unless the club says so.
    assert CLASSIC.replace(doctor=True).meets_host(10) == (D, S)
    assert CLASSIC.replace(night_zero_meets_host=(D, H, S)).meets_host(10) == (D, S)
    assert CLASSIC.replace(doctor=True, night_zero_meets_host=(D, H, S)).meets_host(10) == (D, H, S)


def test_night_zero_meeters_round_trip_as_role_names() -> None:
    data = GEORGIAN.to_dict()
    assert data["night_zero_meets_host"] == ["don", "sheriff", "doctor"]
    assert data["checker"] == "detective"
    assert from_mapping({**data, "base": "georgian"}).replace(base="") == GEORGIAN


def setup_toml(players: int, **counts: object) -> str:
    lines = [f"default_players = {players}", f"[setups.{players}]"]
    lines += [f"{role} = {n!r}" if isinstance(n, str) else f"{role} = {n}" for role, n in counts.items()]
    return "\n".join(lines)


@pytest.mark.parametrize(
    ("text", "field"),
    [
        # black >= red at the start
        (setup_toml(6, citizen=2, sheriff=1, mafia=2, don=1), "setups.6"),
        (setup_toml(8, citizen=3, sheriff=1, mafia=3, don=1), "setups.8"),
        # unknown role
        (setup_toml(10, citizen=6, sheriff=1, mafia=2, don=1, werewolf=0), "setups.10.werewolf"),
        # unknown key
        ("nominations_per_speech = 2", "nominations_per_speech"),
        ("[doctor]\nself_limit = 1", "doctor"),
        # doctor limits without a doctor
        ("base = 'fiim'\ndoctor_self_limit = 1", "doctor_self_limit"),
        ("base = 'fiim'\ndoctor_each_seat_once = true", "doctor_each_seat_once"),
        ("base = 'fiim'\ndoctor_no_repeat_target = true", "doctor_no_repeat_target"),
        # maniac shots without a maniac
        ("maniac_shots = 3", "maniac_shots"),
        # wrong types
        ("doctor = 'yes'", "doctor"),
        ("doctor = 1", "doctor"),
        ("foul_removal_at = 'four'", "foul_removal_at"),
        ("foul_removal_at = true", "foul_removal_at"),
        ("foul_removal_at = 4.5", "foul_removal_at"),
        ("mafia_kill = 'vote'", "mafia_kill"),
        ("three_foul_penalty = 3", "three_foul_penalty"),
        ("removal_penalty = 'half'", "removal_penalty"),
        ("name = 5", "name"),
        ("setups = 10", "setups"),
        ("[setups.ten]\ncitizen = 7", "setups.ten"),
        (setup_toml(10, citizen="six", sheriff=1, mafia=2, don=1), "setups.10.citizen"),
        # seat counts outside 6-12
        (setup_toml(5, citizen=3, sheriff=1, don=1), "setups.5"),
        (setup_toml(13, citizen=8, sheriff=1, mafia=3, don=1), "setups.13"),
        # sums that don't match
        (setup_toml(10, citizen=5, sheriff=1, mafia=2, don=1), "setups.10"),
        (setup_toml(10, citizen=7, sheriff=1, mafia=2, don=1), "setups.10"),
        # impossible counts
        (setup_toml(10, citizen=7, sheriff=1, mafia=3, don=-1), "setups.10"),
        (setup_toml(10, citizen=5, sheriff=2, mafia=2, don=1), "setups.10"),
        (setup_toml(10, citizen=9, sheriff=1), "setups.10"),
        # other bounds
        ("default_players = 9\n[setups.10]\ncitizen = 6\nsheriff = 1\nmafia = 2\ndon = 1", "default_players"),
        ("speech_seconds = 0", "speech_seconds"),
        ("foul_removal_at = 0", "foul_removal_at"),
        ("technical_fouls = true\ntechnical_foul_removal_at = 0", "technical_foul_removal_at"),
        ("technical_fouls = 'yes'", "technical_fouls"),
        ("three_foul_penalty = 'short'", "three_foul_penalty"),
        ("base = 'georgian'\nmaniac_first_kill_night = 0", "maniac_first_kill_night"),
        ("doctor = true\ndoctor_self_limit = -1", "doctor_self_limit"),
        ("base = 'chess'", "base"),
        ("doctor = [", "toml"),
        # the checker and the Night 0 meeters
        ("checker = 'commissar'", "checker"),
        ("night_zero_meets_host = 'don'", "night_zero_meets_host"),
        ("night_zero_meets_host = ['don', 'werewolf']", "night_zero_meets_host"),
        ("night_zero_meets_host = ['don', 'don']", "night_zero_meets_host"),
        ("night_zero_meets_host = ['citizen']", "night_zero_meets_host"),
        ("night_zero_meets_host = ['mafia']", "night_zero_meets_host"),
    ],
)
def test_invalid_custom_ruleset_is_refused_naming_the_field(text: str, field: str) -> None:
    with pytest.raises(RulesetError) as error:
        from_toml(text)
    assert error.value.field == field


def test_ruleset_replace_is_validated_again() -> None:
    with pytest.raises(RulesetError) as error:
        CLASSIC.replace(speech_seconds=-5)
    assert error.value.field == "speech_seconds"


def test_the_modules_examples_hold() -> None:
    import doctest

    from engine import ruleset

    result = doctest.testmod(ruleset)
    assert result.attempted >= 2
    assert result.failed == 0


def test_an_unknown_setting_names_the_closest_known_one() -> None:
    # docs and players write "defence"; the flag is spelt "defense": the error points at it.
    with pytest.raises(RulesetError) as caught:
        from_toml("defence_before_vote = true\n")
    assert (caught.value.field, caught.value.code, caught.value.suggestion) == (
        "defence_before_vote", "unknown_setting", "defense_before_vote")
    assert "did you mean defense_before_vote?" in str(caught.value)


def test_an_unknown_setting_far_from_every_flag_suggests_nothing() -> None:
    with pytest.raises(RulesetError) as caught:
        from_mapping({"base": "classic", "banana": 3})
    assert (caught.value.field, caught.value.code, caught.value.suggestion) == ("banana", "unknown_setting", None)
    assert str(caught.value) == "banana: unknown setting"
