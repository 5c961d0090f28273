"""``/mafia rules`` and ``/mafia ruleset show``: a ruleset's decisions in words."""

from __future__ import annotations

from engine import Role, Ruleset, critical_foul_count
from mafiabot.host.i18n import POINT_PLACES, decimal_text, ordinal, role_name, ruleset_name, t

ROLE_ORDER = (Role.CITIZEN, Role.SHERIFF, Role.DOCTOR, Role.MAFIA, Role.DON, Role.MANIAC)


def rules_lines(lang: str, rules: Ruleset, players: int) -> list[str]:
    """The ruleset's decisions in words, for a table of ``players``."""
    return [
        *_setup_lines(lang, rules, players),
        t(lang, f"rules.kill.{rules.mafia_kill}"),
        t(lang, f"rules.checker.{rules.checker}", answer=t(lang, f"rules.check.{rules.check_style}")),
        *_doctor_lines(lang, rules),
        *_maniac_lines(lang, rules),
        *_foul_lines(lang, rules),
        *_removal_lines(lang, rules),
        *_vote_lines(lang, rules),
        *_ending_lines(lang, rules),
    ]


def _setup_lines(lang: str, rules: Ruleset, players: int) -> list[str]:
    """The title, the cards dealt at this size, the sizes and the timers."""
    base = ""
    if rules.base and rules.base != rules.name:
        base = t(lang, "rules.base", base=ruleset_name(lang, rules.base))
    lines = [t(lang, "rules.title", name=ruleset_name(lang, rules), base=base)]
    if players in rules.setups:
        counts = rules.roles_for(players)
        roles = ", ".join(t(lang, "rules.role_count", role=role_name(lang, rules, role), count=counts[role])
                          for role in ROLE_ORDER if counts.get(role))
        lines.append(t(lang, "rules.roles", players=players, roles=roles))
    lines.append(t(lang, "rules.sizes", sizes=", ".join(map(str, rules.player_counts))))
    lines.append(t(lang, "rules.timers", speech=rules.speech_seconds, defense=rules.defense_seconds,
                   tie=rules.tie_speech_seconds, last_word=rules.last_word_seconds,
                   vote=rules.vote_window_seconds, lift=rules.lift_window_seconds, night=rules.night_seconds))
    return lines


def _doctor_lines(lang: str, rules: Ruleset) -> list[str]:
    if not rules.has_role(Role.DOCTOR):
        return []
    lines = [t(lang, "rules.doctor", count=rules.doctor_min_players)]
    if rules.doctor_no_repeat_target:
        lines.append(t(lang, "rules.doctor.no_repeat"))
    if rules.doctor_self_limit is not None:
        lines.append(t(lang, "rules.doctor.self_limit", count=rules.doctor_self_limit))
    if rules.doctor_each_seat_once:
        lines.append(t(lang, "rules.doctor.each_seat_once"))
    return lines


def _maniac_lines(lang: str, rules: Ruleset) -> list[str]:
    if not rules.has_role(Role.MANIAC):
        return []
    night = ordinal(lang, rules.maniac_first_kill_night)
    return [t(lang, "rules.maniac", count=rules.maniac_shots, night=night,
              seen=t(lang, f"check.result.{rules.maniac_check_result}"))]


def _foul_lines(lang: str, rules: Ruleset) -> list[str]:
    lines = [t(lang, "rules.fouls", count=rules.foul_removal_at)]
    if rules.technical_fouls:
        lines.append(t(lang, "rules.fouls.technical", count=rules.technical_foul_removal_at))
    if rules.three_foul_penalty == "short_speech":
        return [*lines, t(lang, "rules.fouls.short_once", count=critical_foul_count(rules),
                          seconds=rules.short_speech_seconds)]
    if rules.three_foul_penalty != "lose_speech":
        return [*lines, t(lang, "rules.fouls.critical", count=critical_foul_count(rules))]
    lines.append(t(lang, "rules.fouls.lose_speech", count=critical_foul_count(rules)))
    if rules.muted_can_nominate:
        lines.append(t(lang, "rules.fouls.silent_turn", count=rules.silent_turn_seconds))
    if rules.short_speech_alive:
        lines.append(t(lang, "rules.fouls.short_speech", count=rules.short_speech_alive,
                       seconds=rules.short_speech_seconds))
    return lines


def _removal_lines(lang: str, rules: Ruleset) -> list[str]:
    lines = [t(lang, "rules.oath.second" if rules.second_oath_removal else "rules.oath.foul"),
             t(lang, "rules.removal.cancels" if rules.removal_cancels_vote else "rules.removal.keeps")]
    if rules.removal_penalty:
        lines.append(t(lang, "rules.removal.penalty", points=decimal_text(lang, rules.removal_penalty, POINT_PLACES)))
    if rules.presence != "off":
        lines.append(t(lang, f"rules.presence.{rules.presence}"))
    minutes = rules.protest_window // 60
    lines.append(t(lang, "rules.protest.window", count=minutes) if minutes else t(lang, "rules.protest.during"))
    return lines


def _vote_lines(lang: str, rules: Ruleset) -> list[str]:
    lines = [t(lang, "rules.nomination.self" if rules.self_nomination else "rules.nomination.no_self")]
    if rules.first_day_single_nominee_no_vote:
        lines.append(t(lang, "rules.vote.day_one_single"))
    if rules.defense_before_vote:
        lines.append(t(lang, "rules.vote.defense"))
    if rules.recap_before_last_speaker:
        lines.append(t(lang, "rules.vote.recap"))
    lines.append(t(lang, "rules.vote.tie_shrinks" if rules.revote_when_tie_shrinks else "rules.vote.tie"))
    if not rules.lift_three_tied_at_nine:
        lines.append(t(lang, "rules.vote.no_lift_three_at_nine"))
    return lines


def _ending_lines(lang: str, rules: Ruleset) -> list[str]:
    lines = []
    if rules.best_move:
        lines.append(t(lang, "rules.best_move"))
    if rules.no_departure_draw:
        lines.append(t(lang, "rules.no_departure_draw"))
    lines.append(t(lang, "rules.last_word_after_end" if rules.last_word_after_end else "rules.no_last_word_after_end"))
    lines.append(t(lang, "rules.technical_pause", count=rules.technical_pause_seconds))
    return lines
