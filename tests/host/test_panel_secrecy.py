"""The judge's console with the roles hidden tells the judge nothing the roles decide.

Two games that differ only in who holds which hidden card must draw the same console text, at every
moment of the night: a count of who still has to act would drop when the Sheriff or a black player
leaves, and so name that player's kind.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from cogs.texts.panel import panel_lines
from engine import CLASSIC, Check, Command, Disqualify, Game, Leave, Phase, Shoot, StartGame, Timeout
from engine.ids import Role
from mafiabot.core.clock import ManualClock
from mafiabot.core.runtime import Table
from tests.core.test_timers import PLAYERS, Log, make_table

D, M, S, C = Role.DON, Role.MAFIA, Role.SHERIFF, Role.CITIZEN
SHERIFF_AT_4 = (D, M, M, S, C, C, C, C, C, C)
CITIZEN_AT_4 = (D, M, M, C, S, C, C, C, C, C)
BLACK_AT_4 = (D, M, C, M, S, C, C, C, C, C)


def _table(roles: Sequence[Role], commands: Sequence[Command]) -> Table:
    game = Game.replay(CLASSIC, [StartGame(players=len(PLAYERS), roles=tuple(roles)), *commands])
    table, _effects = make_table(ManualClock(), Log(), game)
    return table


def _to_night_one() -> list[Command]:
    """Night zero, Day 1's speeches and an empty vote, all by timeouts: the same for any deal."""
    game = Game(CLASSIC)
    game.apply(StartGame(players=len(PLAYERS), roles=SHERIFF_AT_4))
    commands: list[Command] = []
    while not (game.state.phase is Phase.NIGHT and game.state.day == 1):
        commands.append(Timeout())
        game.apply(commands[-1])
    return commands


@pytest.mark.parametrize("language", ["en", "ru", "ka"])
@pytest.mark.parametrize("deals", [(SHERIFF_AT_4, CITIZEN_AT_4), (BLACK_AT_4, CITIZEN_AT_4)],
                         ids=["sheriff", "black"])
@pytest.mark.parametrize("leaves", [Leave(seat=4), Disqualify(seat=4)], ids=["leave", "removal"])
def test_at_night_the_hidden_console_is_the_same_whoever_holds_the_cards(
    language: str, deals: tuple[Sequence[Role], Sequence[Role]], leaves: Command,
) -> None:
    night = _to_night_one()
    for moment in ([], [leaves]):
        texts = {tuple(panel_lines(_table(roles, [*night, *moment]), language, roles=False))
                 for roles in deals}
        assert len(texts) == 1, texts


def test_the_hidden_console_says_nothing_of_who_has_acted_tonight() -> None:
    night = _to_night_one()
    before = panel_lines(_table(SHERIFF_AT_4, night), "en", roles=False)
    after = panel_lines(_table(SHERIFF_AT_4, [*night, Shoot(seat=1, target=7), Check(seat=4, target=1)]),
                        "en", roles=False)
    assert before == after


def test_a_console_that_shows_the_roles_names_who_still_has_to_act() -> None:
    table = _table(SHERIFF_AT_4, _to_night_one())
    text = "\n".join(panel_lines(table, "en", roles=True))
    assert "Still to act tonight:" in text
