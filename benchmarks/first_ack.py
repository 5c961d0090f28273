"""Discord's three seconds: time from an interaction's arrival to its first acknowledgement, with a slow store.

Run: python benchmarks/first_ack.py [--delays 0.5,3] [--repeat 3] [--draw-delay 3]

For each store delay a fresh emulator with one guild and the real bot (the in-process harness of
``mafiabot demo``, Discord's real clock for the bot's deferral). A classic game is played to its end
and a one-table tournament is seated first; then the store's reads that come before each command's
answer are made to take ``delay`` seconds more (the server's settings, whether the channel is a
tournament's table, the game's protocol, the server's tournaments), and the drawings
(the protocol sheet, the standings chart) ``--draw-delay`` seconds more, and each command is run
``--repeat`` times (``tournament round`` once: a tournament opens its round once):
``/mafia start``, ``/mafia new``, ``/mafia game``, ``/mafia tournament round``,
``/mafia tournament standings``. The figure is the time from the command being sent to the
emulator taking its first callback (an answer, or a deferral), the whole under the machine's load;
Discord invalidates an interaction not acknowledged within 3 s (10062), and the emulator too.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# The folder holds a script named like the engine package: the checkout's root goes first.
sys.path[:] = [str(Path(__file__).resolve().parent.parent),
               *(p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent)]

import cogs.history  # noqa: E402
import cogs.tournament  # noqa: E402
from benchmarks._common import print_table  # noqa: E402
from mafiabot.emulator import EmulatorConfig, Permission, RateLimitConfig  # noqa: E402
from mafiabot.emulator.users import ScriptedUser  # noqa: E402
from mafiabot.host.presenter import custom_id  # noqa: E402
from mafiabot.testing import Driver, Harness, Strategy, harness, open_table  # noqa: E402

FAST = EmulatorConfig(
    rate_limits=RateLimitConfig(member_edits=(100, 1.0), reactions=(100, 1.0), global_limit=(1000, 1.0))
)


class Slowness:
    """Extra seconds for the store's reads and the drawings, switched on only while a command is measured."""

    def __init__(self, store_delay: float, draw_delay: float) -> None:
        self.store_delay = store_delay
        self.draw_delay = draw_delay
        self.on = False

    def read(self, owner: Any, name: str) -> None:
        """Make ``owner.name`` (an async read) slower by the store delay."""
        real = getattr(owner, name)

        async def slow(*args: Any, **kwargs: Any) -> Any:
            if self.on:
                await asyncio.sleep(self.store_delay)
            return await real(*args, **kwargs)

        setattr(owner, name, slow)

    def drawing(self, module: Any, name: str) -> None:
        """Make ``module.name`` (a drawing, run in a worker thread) slower by the draw delay."""
        real = getattr(module, name)

        def slow(*args: Any, **kwargs: Any) -> Any:
            if self.on:
                time.sleep(self.draw_delay)  # the drawing's thread, not the event loop
            return real(*args, **kwargs)

        setattr(module, name, slow)


async def first_ack(h: Harness, slowness: Slowness, person: ScriptedUser, name: str, **options: Any) -> tuple[
        float, Any]:
    """Seconds from sending the command to its first acknowledgement; the reply, once answered in full."""
    slowness.on = True
    began = time.perf_counter()
    reply = person.command(h.env.text, name, **options)
    try:
        await h.emu.wait_for(lambda: reply.acknowledged, 30)
        took = time.perf_counter() - began
    except TimeoutError:
        took = math.inf  # never acknowledged: Discord's "This interaction failed"
    if reply.response_type == 5:
        await reply.wait_final(timeout=60)
    slowness.on = False
    return took, reply


async def filled_lobby(h: Harness) -> Any:
    lobby = (await h.judge.run_command(h.env.text, "mafia new", ruleset="classic", seats=10, timeout=60)).message
    assert lobby is not None  # noqa: S101  (the lobby answers with its message)
    join = next(c["custom_id"] for row in lobby.components for c in row["components"] if ":join:" in c["custom_id"])
    for person in h.players:
        await person.press(lobby, join, timeout=60)
    return lobby


async def measure(delay: float, draw_delay: float, repeat: int) -> dict[str, list[float]]:
    """Every command's first-acknowledgement times at one store delay."""
    figures: dict[str, list[float]] = {}
    # Real time, as the figures were first taken: the acknowledgements are read on the loop's clock anyway.
    async with harness(10, emulator_config=FAST, real_time=True) as h:
        for person in [*h.players, h.judge]:
            person.join_voice(h.env.voice)
        table = await open_table(h, "classic", 10)
        await Driver(h, table, Strategy(4)).play()
        await table.done.wait()
        await h.emu.wait_for(lambda: h.table() is None, 60)
        role = h.emu.create_role(h.env.guild, "admins", int(Permission.MANAGE_GUILD))
        admin = h.emu.create_scripted_user("admin", h.env.guild, roles=[role])
        slowness = Slowness(delay, draw_delay)
        slowness.read(h.bot, "guild_settings")
        slowness.read(h.bot.store.tournaments, "table_at")
        for name in ("game_protocol", "guild_tournaments"):
            slowness.read(h.store, name)
        slowness.drawing(cogs.history, "draw_sheet")
        slowness.drawing(cogs.tournament, "draw_league")

        def note(command: str, took: float) -> None:
            figures.setdefault(command, []).append(took)

        for _ in range(repeat):
            await filled_lobby(h)
            note("/mafia start", (await first_ack(h, slowness, h.judge, "mafia start"))[0])
            await h.judge.run_command(h.env.text, "mafia cancel", timeout=60)
            await h.emu.wait_for(lambda: h.table() is None, 60)
            note("/mafia new", (await first_ack(h, slowness, h.judge, "mafia new", ruleset="classic", seats=10))[0])
            await h.judge.run_command(h.env.text, "mafia cancel", timeout=60)
            note("/mafia game", (await first_ack(h, slowness, h.players[0], "mafia game", id=table.id))[0])
        announced = await admin.run_command(h.env.text, "mafia tournament new", title="Cup", ruleset="fiim",
                                            rounds=1, tables=1, timeout=60)
        tm = (await h.store.guild_tournaments(h.env.guild.id))[0]
        assert announced.message is not None  # noqa: S101  (the announcement is a message)
        for person in h.players:
            await person.press(announced.message, custom_id("tjoin", tm.id), timeout=60)
        await (await admin.run_command(h.env.text, "mafia tournament seat", timeout=60)).wait_final(timeout=120)
        for _ in range(repeat):
            note("/mafia tournament standings",
                 (await first_ack(h, slowness, h.players[0], "mafia tournament standings"))[0])
        channels = {"text-1": h.env.text, "voice-1": h.env.voice, "judge-1": h.judge}
        note("/mafia tournament round", (await first_ack(h, slowness, admin, "mafia tournament round", **channels))[0])
    return figures


def row(label: str, times: list[float], within: Callable[[float], bool]) -> list[Any]:
    return [label, len(times), f"{min(times):.2f}", f"{max(times):.2f}", sum(map(within, times))]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delays", default="0.5,3", help="extra seconds per store read, comma-separated")
    parser.add_argument("--draw-delay", type=float, default=3.0, help="extra seconds per drawing")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for delay in (float(d) for d in args.delays.split(",")):
        figures = await measure(delay, args.draw_delay, args.repeat)
        print_table(f"store reads +{delay:g} s, drawings +{args.draw_delay:g} s: seconds to the first acknowledgement",
                    ["command", "n", "min", "max", "within 3 s"],
                    [row(c, times, lambda s: s < 3.0) for c, times in figures.items()])
        print()


if __name__ == "__main__":
    asyncio.run(main())
