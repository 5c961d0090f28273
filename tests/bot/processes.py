"""``mafiabot run`` in its own OS process against an emulator in the test's process: start, SIGKILL, restart."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import signal
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterable, Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

from engine import Game, Ruleset, command_from_data, from_mapping
from mafiabot.core.meta import TableMeta
from mafiabot.emulator import Emulator
from mafiabot.emulator.state import Application, Message
from mafiabot.emulator.testing import Table
from mafiabot.host import render
from mafiabot.host.presenter import VOTE_EMOJI, custom_id
from mafiabot.store import GuildSettings, Store
from mafiabot.testing.hands import Hands, Menu, Strategy, Where
from mafiabot.testing.harness import migrated_sqlite
from tests.harness import FAST_GLOBAL

SEED = 7
READY_AFTER = 0.2
"""``guild_ready_timeout``: the emulator sends every server right after READY, so the process need
not wait discord.py's 2 s for more before its tables resume (the in-process harness waits 0.05 s)."""


class BotProcess:
    """The real bot, as a user runs it, with a config file written for this emulator and database.

    ``discord`` adds keys to the config's ``[discord]`` section (``guild_ids``, ``shard_ids``, ...);
    with ``shard`` set, the process counts as connected once that shard's session is.
    """

    def __init__(
        self, emu: Emulator, app: Application, workdir: Path, database_url: str, *,
        name: str = "bot", shard: int | None = None, discord: dict[str, Any] | None = None,
    ) -> None:
        self.emu = emu
        self.app = app
        self.shard = shard
        self.db = database_url
        self.config = workdir / f"{name}.toml"
        self.log = workdir / f"{name}.log"
        settings = {"token": app.token, "api_base": emu.api_url, "gateway_url": emu.gateway_url,
                    "guild_ready_timeout": READY_AFTER, **(discord or {})}
        lines = ["[discord]", *(f"{key} = {json.dumps(value)}" for key, value in settings.items()),
                 "[database]", f"url = {json.dumps(database_url)}",
                 "[game]", f"seed = {SEED}", 'seat_order = "join"']
        self.config.write_text("\n".join(lines) + "\n", encoding="utf-8")
        self.proc: asyncio.subprocess.Process | None = None
        self.starts = 0
        self._log_file = self.log.open("ab")

    def sessions(self) -> list[Any]:
        """This process's gateway sessions in the emulator (its shard's only, for a shard process)."""
        return [s for s in self.emu.gateway.connected(self.app) if self.shard is None or s.shard_id == self.shard]

    async def start(self) -> None:
        """Start ``mafiabot run`` and wait until its gateway session is up."""
        environment = {k: v for k, v in os.environ.items() if k != "DISCORD_TOKEN"}
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "mafiabot", "run", "--config", str(self.config),
            stdout=self._log_file, stderr=subprocess.STDOUT, env=environment,
        )
        self.starts += 1
        await self.emu.wait_for(lambda: bool(self.sessions()), timeout=60)

    async def kill(self) -> None:
        """SIGKILL: no shutdown code runs; wait until the emulator sees the connection drop."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        await self.proc.wait()
        await self.emu.wait_for(lambda: not self.sessions(), timeout=30)

    async def signal_stop(self, signum: int = signal.SIGTERM) -> int:
        """Send ``signum`` (a service manager's stop is SIGTERM) and wait for the process to end: its status."""
        assert self.proc is not None
        self.proc.send_signal(signum)
        status = await asyncio.wait_for(self.proc.wait(), timeout=60)
        await self.emu.wait_for(lambda: not self.sessions(), timeout=30)
        return status

    async def stop(self) -> None:
        """Stop politely (SIGINT), or kill after 20 s."""
        if self.proc is not None and self.proc.returncode is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                await asyncio.wait_for(self.proc.wait(), timeout=20)
            except TimeoutError:
                await self.kill()
        self._log_file.close()


async def next_look(emu: Emulator) -> None:
    """Wait for the emulator's next change, or 50 ms at most: when to read the store again.

    The bot process writes its database with no word to this one; what it writes it then mostly
    shows in Discord, so a change in the emulator is the cue. The bound only paces the reads when
    no change follows; every caller re-checks what it waits for.
    """
    with suppress(TimeoutError):
        await emu.wait_for(lambda: False, timeout=0.05)


GLOBAL_RATE_LIMIT = FAST_GLOBAL.rate_limits.global_limit[0]
"""The bot keeps the emulator's global limit (the tests' ``FAST_GLOBAL``), as it keeps Discord's."""


async def bot_and_store(env: Table, workdir: Path, **settings: Any) -> tuple[BotProcess, Store]:
    """A bot process for this guild and the store it writes, with a short Night 0 and ``settings`` saved."""
    bot = BotProcess(env.emu, env.app, workdir, migrated_sqlite(workdir / "mafia.sqlite3"), discord={
        "guild_ids": [env.guild.id], "global_rate_limit": GLOBAL_RATE_LIMIT,
    })
    store = await Store.open(bot.db)
    await store.save_settings(GuildSettings(env.guild.id, timers={"night_zero_seconds": 1}, **settings))
    return bot, store


def shard_process(emu: Emulator, shard: int, shards: int, url: str, workdir: Path) -> BotProcess:
    """``mafiabot run`` for one shard of ``shards``, all of them in one database."""
    return BotProcess(emu, next(iter(emu.world.applications.values())), workdir, url, name=f"shard{shard}",
                      shard=shard, discord={"shard_count": shards, "shard_ids": [shard],
                                            "global_rate_limit": GLOBAL_RATE_LIMIT})


async def owed_mutes_after_stop(store: Any, bots: Iterable[BotProcess], guild_id: int | None = None) -> list[Any]:
    """The mute ledger once every bot process has stopped politely.

    A process clears a finished game's ledger rows right after Discord answers its unmutes, a moment
    after the emulator has seen them; a polite stop lets those writes land first, so the ledger then
    says what the bot still owes.
    """
    for bot in bots:
        await bot.stop()
    return list(await store.owed_mutes(guild_id))


class StoredTable:
    """A game as a bot process stored it, for players in the test's process: the store is the source of truth.

    New log entries are applied to one ``Game``, so a state a player holds on to stays current.
    """

    def __init__(self, store: Store, game_id: int, seats: list[int], ruleset: Ruleset) -> None:
        self.store = store
        self.id = game_id
        self.seats = seats
        self.game = Game(ruleset)
        self.meta = TableMeta()
        self.status = "open"
        self.log: list[dict[str, Any]] = []
        """Each stored command's data, in order."""

    @classmethod
    async def open(cls, store: Store, game_id: int) -> StoredTable:
        stored = await store.get_game(game_id)
        seats = [s.user_id for s in sorted(stored.seats, key=lambda s: s.seat)]
        table = cls(store, game_id, seats, from_mapping(stored.ruleset))
        await table.refresh()
        return table

    async def refresh(self) -> None:
        """Read what the bot stored since the last look."""
        stored = await self.store.get_game(self.id)
        for command in stored.log[len(self.game.history):]:
            self.game.apply(command_from_data(command.command))
            self.log.append(dict(command.command))
        self.meta = TableMeta.from_json(stored.discord)
        self.status = stored.status

    def user_at(self, seat: int) -> int:
        return self.seats[seat - 1]

    def vote_message(self, target: int | str) -> int | None:
        """The id of this round's window for ``target`` (a candidate seat, or "lift"), once shown."""
        return self.meta.window(target, render.vote_round(self.game.events))


@dataclasses.dataclass
class Action:
    """An action a player took that the bot took (answered it, or left the hand standing)."""

    seat: int
    at: int
    """The log's length when it was taken: the command it made is stored after that."""
    message_id: int | None = None
    candidate: int | str | None = None


class ProcessHands(Hands[Message]):
    """Scripted players for a bot in another process: ``Hands``' decisions, read from the store, clicked here."""

    UPDATE_MESSAGE = 7

    def __init__(self, env: Table, table: StoredTable, strategy: Strategy) -> None:
        self.env = env
        self.emu = env.emu
        self.table = table  # type: ignore[assignment]  # the store's copy: ``Hands`` reads only id and game
        self.stored = table
        self.people = {person.id: person for person in env.members}
        self.strategy = strategy
        self.taken: list[Action] = []
        self.hands: list[Action] = []
        self.on_react: Callable[[], Awaitable[None]] | None = None
        """Called after each hand is raised (a test kills the bot there)."""

    def _channel(self, where: Where) -> Any:
        if where == "text":
            return self.env.text
        return self.emu.world.channels.get(int(self.stored.meta.thread or 0))

    def latest(self, where: Where, cid: str) -> Message | None:
        channel = self._channel(where)
        if channel is None:
            return None
        for message in reversed(self.emu.messages(channel)):
            if any(c.get("custom_id") == cid for row in message.components for c in row.get("components", [])):
                return message
        return None

    async def until(self, predicate: Callable[[], bool]) -> None:
        for _ in range(2400):
            await self.stored.refresh()
            if predicate():
                return
            await next_look(self.emu)
        raise AssertionError("the table never got there")

    async def control(self, where: Where, cid: str) -> Message:
        found: list[Message] = []

        def there() -> bool:
            message = self.latest(where, cid)
            if message is not None:
                found.append(message)
            return message is not None

        await self.until(there)
        return found[-1]

    def _person(self, seat: int) -> Any:
        return self.people[self.stored.user_at(seat)]

    async def click(self, seat: int, message: Message, cid: str) -> Menu[Message] | None:
        at = len(self.stored.game.history)
        try:
            reply = await self._person(seat).press(message, cid, timeout=20)
        except TimeoutError:
            return None
        menu = reply.message
        if menu is not None and menu.components:
            return Menu(menu, menu.components[0]["components"][0]["custom_id"])
        if reply.acknowledged and not reply.ephemeral:
            self.taken.append(Action(seat, at))
        return None

    async def select(self, seat: int, message: Message, cid: str, values: Sequence[str]) -> bool:
        at = len(self.stored.game.history)
        try:
            answer = await self._person(seat).choose(message, cid, list(values), timeout=20)
        except TimeoutError:
            return False
        took: bool = answer.response_type == self.UPDATE_MESSAGE
        if took:
            self.taken.append(Action(seat, at))
        return took

    async def react(self, seat: int, message: Message) -> None:
        vote = self.stored.game.state.vote
        candidate = vote.candidates[vote.index] if vote is not None else None
        self._person(seat).react(message, VOTE_EMOJI)
        self.hands.append(Action(seat, len(self.stored.game.history), message.id, candidate))
        if self.on_react is not None:
            await self.on_react()

    async def _raise_hand(self, seat: int, message: Message, vote: object) -> None:
        """Raise the hand, then wait until it is counted, refused (taken off the message) or its window is over."""
        await self.react(seat, message)
        state = self.stored.game.state
        index = state.vote.index if state.vote is not None else None
        person = self._person(seat)

        def done() -> bool:
            now = state.vote
            return (now is not vote or now is None or now.index != index or seat in now.votes
                    or person.id not in message.reactions.get(VOTE_EMOJI, []))

        await self.until(done)

    async def wait_vote_message(self, target: int | str) -> Message:
        found: list[int] = []

        def shown() -> bool:
            message_id = self.stored.vote_message(target)
            if message_id is not None and message_id in self.emu.world.messages:
                found.append(message_id)
            return bool(found)

        await self.until(shown)
        message: Message = self.emu.world.messages[found[-1]]
        return message

    async def speak(self, seat: int, kind: str) -> None:
        thanks = custom_id("thanks", self.stored.id)
        message = await self.control("text", thanks)
        await self.nominate(seat, kind)
        await self.stored.refresh()
        if self.holds_floor(seat):
            await self.click(seat, message, thanks)

    async def step(self) -> None:
        """Do what the table waits for, then wait until the stored game moves on (or ends)."""
        await self.stored.refresh()
        marker = len(self.stored.game.history)
        await self.act()
        await self.until(lambda: len(self.stored.game.history) != marker or self.stored.status != "open")

    def lost(self) -> list[Action]:
        """Actions the bot took that its log does not hold: a command of that seat after the action's place."""
        def stored(action: Action) -> bool:
            return any(c.get("seat") == action.seat for c in self.stored.log[action.at:])

        lost = [a for a in self.taken if not stored(a)]
        for hand in self.hands:
            message = self.emu.world.messages.get(hand.message_id or 0)
            kept = message is not None and self._person(hand.seat).id in message.reactions.get(VOTE_EMOJI, [])
            if kept and not stored(hand):
                lost.append(hand)
        return lost
