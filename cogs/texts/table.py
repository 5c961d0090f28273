"""``/mafia status``: where a running game stands, every seat's fouls included, for everyone."""

from __future__ import annotations

from engine import Phase, critical_fouls, floor_holder
from mafiabot.core.runtime import Table
from mafiabot.host.i18n import countdown, t
from mafiabot.host.presenter import seat_label, seat_list


def status_lines(table: Table, lang: str) -> list[str]:
    """Phase, floor, alive seats, nominees, time left and a pause, in ``lang``."""
    state = table.game.state
    lines = [t(lang, "status.phase", phase=t(lang, f"phase.{state.phase.value}"), day=state.day)]
    holder = floor_holder(state)
    if holder is not None:
        lines.append(t(lang, "status.floor", player=seat_label(table, holder)))
    lines.append(t(lang, "status.alive", seats=seat_list(table, state.alive_seats())))
    if state.nominees and state.phase is not Phase.ENDED:
        lines.append(t(lang, "status.nominees", seats=seat_list(table, state.nominees)))
    deadline = table.deadline()
    if deadline is not None:
        lines.append(t(lang, "status.time_left", countdown=countdown(lang, deadline)))
    if state.paused:
        lines.append(t(lang, "status.paused"))
    return lines


def fouls_lines(table: Table, lang: str) -> list[str]:
    """Every seat with fouls, with those one foul from removal marked critical, in ``lang``."""
    state, rules = table.game.state, table.ruleset
    lines = [t(lang, "fouls.title", count=rules.foul_removal_at)]
    critical = critical_fouls(state, rules)
    for seat in range(1, state.players + 1):
        count = state.foul_count(seat)
        technical = state.technical_count(seat)
        if technical:
            lines.append(t(lang, "fouls.technical", player=seat_label(table, seat), count=technical))
        if not count:
            continue
        if state.removed(seat):
            mark = t(lang, "fouls.removed")
        elif seat in critical:
            mark = t(lang, "fouls.critical")
        else:
            mark = ""
        lines.append(t(lang, "fouls.line", player=seat_label(table, seat), count=count, mark=mark).rstrip())
    if len(lines) == 1:
        lines.append(t(lang, "fouls.none"))
    return lines
