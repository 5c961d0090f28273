"""The judge's console in words: the table seat by seat, the floor, the night's actors, and the controls' labels.

Pure: a table and what the panel knows in, text out. Roles are named only when the panel may show them;
without them nothing is said of the night's actors, since who acts at night, or how many, would tell the roles.
"""

from __future__ import annotations

from engine import Phase, critical_fouls, floor_holder, night_actors
from mafiabot.core.runtime import Table
from mafiabot.host.i18n import countdown, t
from mafiabot.host.presenter import role_name, seat_label, seat_list

QUIET = frozenset({Phase.NIGHT, Phase.ENDED})
"""Phases in which the day's nominations no longer stand, though the state still lists them."""


def seat_line(table: Table, lang: str, seat: int, *, roles: bool, critical: tuple[int, ...]) -> str:
    """``#3 Name · out · 2 fouls ⚠️ critical · nominated · Sheriff``: one seat as the judge sees it."""
    state = table.game.state
    marks = [seat_label(table, seat)]
    if not state.is_alive(seat):
        marks.append(t(lang, "panel.removed" if state.removed(seat) else "panel.out"))
    fouls = state.foul_count(seat)
    if fouls:
        marks.append(t(lang, "panel.fouls", count=fouls))
        if state.is_alive(seat) and seat in critical:
            marks.append(t(lang, "fouls.critical"))
    technical = state.technical_count(seat)
    if technical:
        marks.append(t(lang, "panel.technical", count=technical))
    if seat in state.nominees and state.phase not in QUIET:
        marks.append(t(lang, "panel.nominated"))
    if roles:
        marks.append(role_name(table, state.role(seat)))
    return " · ".join(marks)


def _floor_lines(table: Table, lang: str) -> list[str]:
    state = table.game.state
    lines = [t(lang, "status.phase", phase=t(lang, f"phase.{state.phase.value}"), day=state.day)]
    holder = floor_holder(state)
    if holder is not None:
        lines.append(t(lang, "status.floor", player=seat_label(table, holder)))
    deadline = table.deadline()
    if deadline is not None:
        lines.append(t(lang, "status.time_left", countdown=countdown(lang, deadline)))
    if state.paused:
        lines.append(t(lang, "status.paused"))
    return lines


def night_line(table: Table, lang: str, *, roles: bool) -> str | None:
    """Who still has to act tonight (never what they chose); with the roles hidden, nothing of it.

    Even a count would tell: it drops when the Sheriff or a black player leaves and not when a
    citizen does, and it drops as each of them acts.
    """
    state = table.game.state
    if state.phase is not Phase.NIGHT:
        return None
    if not roles:
        return t(lang, "panel.night_hidden")
    return t(lang, "panel.to_act", seats=seat_list(table, night_actors(state, table.ruleset)))


def panel_lines(table: Table, lang: str, *, roles: bool, note: str = "", confirm: str = "",
                expires_at: float = 0.0) -> list[str]:
    """The whole console: the last action's answer, the floor, every seat, tonight's actors, and the footer."""
    state = table.game.state
    lines = [t(lang, "panel.title", table=table.id)]
    if note:
        lines.append(note)
    lines += _floor_lines(table, lang)
    critical = critical_fouls(state, table.ruleset)
    lines += [seat_line(table, lang, seat, roles=roles, critical=critical) for seat in range(1, state.players + 1)]
    if state.nominees and state.phase not in QUIET:
        lines.append(t(lang, "status.nominees", seats=seat_list(table, state.nominees)))
    camera_off = table.camera_off()
    if camera_off:
        lines.append(t(lang, "panel.camera_off", seats=seat_list(table, camera_off)))
    night = night_line(table, lang, roles=roles)
    if night is not None:
        lines.append(night)
    if confirm:
        lines.append(t(lang, f"panel.confirm.{confirm}"))
    if table.over:
        lines.append(t(lang, "panel.over"))
    elif expires_at:
        lines.append(t(lang, "panel.footer", until=f"<t:{int(expires_at)}:t>"))
    return lines


BUTTONS = ("pause", "resume", "extend", "skip", "refresh", "undo", "draw", "end", "yes_draw", "yes_end", "back",
           "technical", "ordinary")
"""The console's buttons, each labelled ``panel.button.<name>``."""
CONFIRMABLE = ("end", "draw")
"""The console's actions that ask first, each with its question ``panel.confirm.<name>``."""
MENUS = ("foul", "technical", "unfoul", "remove")
"""The console's seat menus, each with the placeholder ``panel.menu.<name>``."""


def button_label(lang: str, name: str) -> str:
    """A button's label."""
    return t(lang, f"panel.button.{name}")


def menu_placeholder(lang: str, name: str) -> str:
    """A seat menu's placeholder."""
    return t(lang, f"panel.menu.{name}")
