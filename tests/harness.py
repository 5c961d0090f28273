"""What the end-to-end tests share: emulator limits, tables played through Discord, reading what the bot did.

The table itself (the emulator, the bot, the scripted people and their driver) is
``mafiabot.testing``'s ``harness`` and ``Driver``; this module holds the steps and readings the
tests repeat around it, so each test says only what is its own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from engine import Phase
from mafiabot.core.runtime import Table
from mafiabot.emulator import EmulatorConfig, RateLimitConfig
from mafiabot.emulator.server import RequestRecord
from mafiabot.emulator.state import Permission
from mafiabot.emulator.users import ScriptedUser
from mafiabot.testing import Driver, Harness, Strategy, open_table

FAST = EmulatorConfig(rate_limits=RateLimitConfig(member_edits=(100, 1.0), reactions=(100, 1.0)))
"""Member edits and reactions that never wait, so a table's turns stay short; the global limit as Discord's."""
FAST_GLOBAL = EmulatorConfig(
    rate_limits=RateLimitConfig(member_edits=(100, 1.0), reactions=(100, 1.0), global_limit=(1000, 1.0))
)
"""``FAST`` with a global limit no table reaches, for whole games at a quick clock."""
RESTART_AT_ONCE = dataclasses.replace(FAST_GLOBAL, identify_window=0.0)
"""``FAST_GLOBAL`` letting a restarted bot process IDENTIFY at once, for the crash tests that are about
what a restart finds, not about when Discord lets it in. Discord refuses a second IDENTIFY within 5 s
and discord.py then waits 5 s: ``test_kill``'s crashed game and the fleet's rolling restart keep
Discord's window (the emulator's default), and pay it at each restart."""


class TwoNominees(Strategy):
    """Seats 1 and 2 nominate 4 and 5; nobody votes unless a test makes them."""

    def nominate(self, table: Table, seat: int) -> int | None:
        if len(table.game.state.nominees) < 2 and seat in (1, 2):
            return 3 + seat
        return None

    def vote(self, table: Table, seat: int, candidates: tuple[int, ...]) -> int | None:
        return None


def public(h: Harness) -> list[str]:
    """The table channel's public messages, oldest first."""
    return [m.content for m in h.emu.messages(h.env.text) if m.ephemeral_for is None]


def refused(h: Harness, route: str, method: str | None = None) -> list[RequestRecord]:
    """The requests on ``route`` (of ``method``, if given) that the emulator answered with an error."""
    return [r for r in h.emu.requests if r.route == route and r.status >= 400 and method in (None, r.method)]


def refusals(h: Harness, route: str) -> list[int]:
    """Error statuses the bot's own requests on ``route`` got."""
    return [r.status for r in h.emu.requests if r.route == route and r.app_id == h.env.app.id and r.status >= 400]


def admin_of(h: Harness) -> ScriptedUser:
    """A new member of the guild with Manage Server: who may change the server's settings and rulesets."""
    role = h.emu.create_role(h.env.guild, "admins", int(Permission.MANAGE_GUILD))
    return h.emu.create_scripted_user("admin", h.env.guild, roles=[role])


async def play_to_the_end(table: Table, driver: Driver) -> None:
    """The driver plays the table until it is over, with a result, and every effect of the end is done."""
    await driver.play()
    await table.done.wait()
    assert table.game.outcome() is not None


async def play_whole_game(h: Harness, ruleset: str, players: int, strategy: Strategy) -> Table:
    """Open a table of ``players`` under ``ruleset`` and play it to its end through Discord."""
    table = await open_table(h, ruleset, players)
    await play_to_the_end(table, Driver(h, table, strategy))
    return table


async def play_until(driver: Driver, table: Table, reached: Callable[[], bool]) -> None:
    """Step the table until ``reached()``; fail (instead of hanging) if it ends first."""
    while not reached():
        assert not table.done.is_set(), "the table ended first"
        await driver.step()


def floor_seat(table: Table) -> int:
    """The seat that holds the floor (fails when nobody does)."""
    floor = table.game.state.floor
    assert floor is not None, "nobody holds the floor"
    return floor.seat


async def first_speech(h: Harness, table: Table) -> None:
    """Let night 0 run out (or wait for the judge's skip) until day 1's first speaker holds the floor."""

    def speaking() -> bool:
        state = table.game.state
        return state.phase is Phase.SPEECHES and state.floor is not None

    await h.run_timers(table, until=speaking)


async def skip_night_zero(h: Harness, table: Table) -> None:
    """The judge skips night 0; wait for the first speech."""
    await h.wait(lambda: table.game.state.phase is Phase.NIGHT_ZERO)
    reply = await h.judge.run_command(h.env.text, "mafia skip")
    assert reply.ephemeral, reply.content
    await first_speech(h, table)
