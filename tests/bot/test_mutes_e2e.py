"""Nobody left muted, whatever fails: three georgian games (twelve seats, a spectator in voice, seat
numbers in nicknames) against ``mafiabot run`` in its own process, SIGKILLed right after ``/mafia
start``, mid-vote and right after a result, each time restarted on the same database.

After every game nobody the bot muted is muted, every nickname is the player's own again, and every
action the bot took is in its log; during each game every seat carries its number from the start
to the end. The players act from the game as the store has it (``ProcessHands``).
"""

from __future__ import annotations

import dataclasses
from contextlib import suppress
from pathlib import Path
from typing import Any

from engine import Phase
from mafiabot.core.nicks import seat_nick
from mafiabot.core.runtime import Table
from mafiabot.emulator.state import Permission
from mafiabot.emulator.testing import BOT_PERMISSIONS, emulated_guild
from mafiabot.testing.hands import Strategy
from tests.bot.processes import (
    BotProcess,
    ProcessHands,
    StoredTable,
    bot_and_store,
    next_look,
    owed_mutes_after_stop,
)
from tests.bot.test_kill import RACED
from tests.harness import RESTART_AT_ONCE as FAST

PLAYERS = 12
RENAMING = BOT_PERMISSIONS | Permission.MANAGE_NICKNAMES
VOTE_WINDOW = 60
"""Every hand goes up in the first window (``FirstCandidate``), which closes once all have voted; a
long window outlasts a restart mid-vote on a loaded machine."""
SETTLE = 30.0
"""Seconds a game's end (or a restart after one) may take to lift its mutes and give the names back."""


class FirstCandidate(Strategy):
    """Everyone votes against the first nominee: no window waits for its time to run out."""

    def vote(self, table: Table, seat: int, candidates: tuple[int, ...]) -> int | None:
        return candidates[0]

    def lift(self, table: Table, seat: int) -> bool:
        return True


@dataclasses.dataclass
class Findings:
    """What went wrong, by kind, with the game it went wrong in."""

    muted: list[str] = dataclasses.field(default_factory=list)
    nicknames: list[str] = dataclasses.field(default_factory=list)
    lost: list[str] = dataclasses.field(default_factory=list)
    unnumbered: list[str] = dataclasses.field(default_factory=list)


class Run:
    """The guild, the bot process, its store and what the checks found."""

    def __init__(self, env: Any, bot: BotProcess, store: Any, own: dict[int, str | None]) -> None:
        self.env = env
        self.emu = env.emu
        self.bot = bot
        self.store = store
        self.own = own
        self.players = env.members[:PLAYERS]
        self.judge = env.members[PLAYERS]
        self.spectator = env.members[PLAYERS + 1]
        self.found = Findings()

    def host_back(self) -> int:
        return sum(1 for m in self.emu.messages(self.env.text) if "The host is back" in m.content)

    async def kill_and_restart(self, *, resumes: bool) -> None:
        back = self.host_back()
        await self.bot.kill()
        await self.bot.start()
        if resumes:
            await self.emu.wait_for(lambda: self.host_back() > back, timeout=60)

    def muted(self) -> list[str]:
        people = [*self.players, self.spectator]
        return [p.name for p in people if self.env.guild.members[p.id].mute]

    def numbered(self, table: StoredTable) -> list[int]:
        """The seats whose nickname is not their seat number."""
        wrong = []
        for seat, user in enumerate(table.seats, 1):
            name = self.own[user] or self.emu.world.users[user].name
            if self.env.guild.members[user].nick != seat_nick(seat, name):
                wrong.append(seat)
        return wrong

    async def open_game(self, *, kill_after_start: bool) -> StoredTable:
        joins: list[str] = []
        for _ in range(20):  # the table before may still be closing (its last edits, its cues): ask again
            reply = await self.judge.run_command(self.env.text, "mafia new", ruleset="georgian", seats=PLAYERS,
                                                 timeout=30)
            lobby = reply.message
            assert lobby is not None, reply.content
            joins = [c["custom_id"] for row in lobby.components for c in row["components"]
                     if ":join:" in c["custom_id"]]
            if joins:
                break
            await next_look(self.emu)
        assert joins, reply.content
        join = joins[0]
        for person in self.players:
            await person.press(lobby, join, timeout=30)
        await self.judge.run_command(self.env.text, "mafia start", timeout=30)
        if kill_after_start:
            await self.kill_and_restart(resumes=True)
        (game,) = await self.store.open_games(lambda guild_id: guild_id == self.env.guild.id)
        return await StoredTable.open(self.store, game.id)

    def result_shown(self, table: StoredTable) -> bool:
        name = f"protocol-{table.id}.png"
        return any(a.filename == name for m in self.emu.messages(self.env.text) for a in m.attachments)

    async def play(self, number: int, seed: int, *, kills: set[str]) -> None:
        table = await self.open_game(kill_after_start="start" in kills)
        hands = ProcessHands(self.env, table, FirstCandidate(seed))
        if "vote" in kills:
            async def mid_vote() -> None:
                if len(hands.hands) == 3:
                    await self.kill_and_restart(resumes=True)
            hands.on_react = mid_vote
        game = f"game {number}"
        first_day = False
        for _ in range(3000):
            await table.refresh()
            if table.status != "open" or table.game.state.phase is Phase.ENDED:
                break
            if table.game.state.day >= 1 and table.game.state.phase is not Phase.NIGHT_ZERO:
                if not first_day:
                    first_day = True
                    with suppress(TimeoutError):  # the start's renames ride on its mutes: their round trips
                        await self.emu.wait_for(lambda: not self.numbered(table), timeout=SETTLE)
                    assert self.env.guild.members[self.spectator.id].mute, "the spectator is muted during play"
                wrong = self.numbered(table)
                if wrong:
                    self.found.unnumbered.append(f"{game}, day {table.game.state.day}: seats {wrong}")
            await hands.step()
        else:
            raise AssertionError(f"{game} did not end")
        if "result" in kills:
            await self.emu.wait_for(lambda: self.result_shown(table), timeout=60)
            await self.kill_and_restart(resumes=False)
        await self.settled(game, table, hands)

    async def settled(self, game: str, table: StoredTable, hands: ProcessHands) -> None:
        try:
            await self.emu.wait_for(lambda: not self.muted(), timeout=SETTLE)
        except TimeoutError:
            self.found.muted.append(f"{game}: {self.muted()}")
        own = [self.own[u] for u in table.seats]
        try:
            await self.emu.wait_for(lambda: [self.env.guild.members[u].nick for u in table.seats] == own,
                                    timeout=SETTLE)
        except TimeoutError:
            self.found.nicknames.append(f"{game}: {[self.env.guild.members[u].nick for u in table.seats]}")
        await table.refresh()
        assert table.status == "finished", f"{game} is {table.status}"
        self.found.lost.extend(f"{game}: {a}" for a in hands.lost())


async def test_three_georgian_games_through_kills_leave_nobody_muted_and_every_seat_numbered(tmp_path: Path) -> None:
    async with emulated_guild(members=PLAYERS + 2, config=FAST, bot_permissions=RENAMING) as env:
        own = {p.id: (f"Own{i}" if i % 2 else None) for i, p in enumerate(env.members[:PLAYERS])}
        for person in env.members[:PLAYERS]:
            env.guild.members[person.id].nick = own[person.id]
        bot, store = await bot_and_store(env, tmp_path, vote_window=VOTE_WINDOW, seat_nicknames=True)
        settings = await store.get_settings(env.guild.id)
        await store.save_settings(dataclasses.replace(settings, timers={**settings.timers, **RACED}))
        run = Run(env, bot, store, own)
        try:
            await bot.start()
            for person in env.members:
                person.join_voice(env.voice)  # the players, the judge and a spectator
            await run.play(1, 11, kills={"start", "result"})
            await run.play(2, 12, kills={"vote"})
            await run.play(3, 13, kills={"result"})
            assert bot.starts == 5
            owed = await owed_mutes_after_stop(store, [bot], env.guild.id)
        finally:
            await bot.stop()
        assert await store.owed_nicks(env.guild.id) == []
        await store.close()
    assert run.found.muted == []
    assert owed == []
    assert run.found.nicknames == []
    assert run.found.lost == []
    assert run.found.unnumbered == []
