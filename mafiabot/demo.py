"""A whole table played by scripted players against the real bot on the local emulator.

``mafiabot demo`` uses it to show a game with no Discord account, and the end-to-end tests use it
to play whole games. Players act only through Discord: they click the bot's buttons, pick in its
menus and react to its vote messages, as people would. The strategy decides what they do; it may
read the bot's table (scripted players know their own cards through "My card" anyway).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import json
import math
import random
import re
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine import Phase, Role, Team
from mafiabot.bot import MafiaBot
from mafiabot.config import parse_config
from mafiabot.emulator.server import EmulatorConfig
from mafiabot.emulator.state import Channel, Message
from mafiabot.emulator.testing import Table as EmuTable
from mafiabot.emulator.testing import emulated_guild, running
from mafiabot.emulator.users import Reply, ScriptedUser
from mafiabot.presenter import VOTE_EMOJI, current_vote_message, custom_id
from mafiabot.rulesets import resolve_ruleset
from mafiabot.runtime import Table
from mafiabot.store import Store, sqlite_url

STEP_TIMEOUT = 30.0
END_TIMEOUT = 180.0
SPEC_VIOLATIONS: list[str] = []
"""Every OpenAPI violation any harness in this process saw; the test suite fails on one."""


class Strategy:
    """How the scripted players play; seeded, so a demo run can be repeated."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def nominate(self, table: Table, seat: int) -> int | None:
        """Whom the speaker nominates (None: nobody)."""
        state = table.game.state
        free = [s for s in state.alive_seats() if s not in state.nominees]
        if not free or self.rng.random() > 0.45:
            return None
        return self.rng.choice(free)

    def vote(self, table: Table, seat: int, candidates: tuple[int, ...]) -> int | None:
        """Whom a voter raises a hand against in this round (None: stays silent)."""
        if self.rng.random() < 0.2:
            return None
        return self.rng.choice(candidates)

    def lift(self, table: Table, seat: int) -> bool:
        """Whether a voter wants all the tied players out."""
        return self.rng.random() < 0.5

    def mafia_target(self, table: Table) -> int:
        """The seat the black team agrees on in its room."""
        state = table.game.state
        reds = [s for s in state.alive_seats() if state.role(s).team is not Team.BLACK]
        return self.rng.choice(reds or state.alive_seats())

    def shot(self, table: Table, seat: int, agreed: int) -> int:
        """One black player's pick; now and then one disagrees."""
        if self.rng.random() < 0.1:
            return self.rng.choice(table.game.state.alive_seats())
        return agreed

    def check(self, table: Table, seat: int) -> int:
        """The Don's or the Sheriff's check."""
        return self.rng.choice([s for s in range(1, table.game.state.players + 1) if s != seat])

    def heal(self, table: Table, seat: int) -> list[int]:
        """The Doctor's picks, best first (the rules may refuse some)."""
        alive = table.game.state.alive_seats()
        self.rng.shuffle(alive)
        return alive

    def maniac(self, table: Table, seat: int) -> int | None:
        """The maniac's shot, or None to pass."""
        others = [s for s in table.game.state.alive_seats() if s != seat]
        return self.rng.choice(others) if others and self.rng.random() < 0.6 else None

    def best_move(self, table: Table, seat: int) -> list[int]:
        """Three seats the first night's victim names."""
        others = [s for s in range(1, table.game.state.players + 1) if s != seat]
        return sorted(self.rng.sample(others, 3))


@dataclass
class DemoReport:
    """What a demo run produced; ``to_json`` is what ``--report`` writes."""

    result: str | None = None
    reason: str | None = None
    days: int = 0
    requests_by_route: dict[str, int] = field(default_factory=dict)
    max_member_edits_per_floor_change: int = 0
    spec_violations: list[str] = field(default_factory=list)
    spec_unchecked: str | None = None
    """Why the requests were not checked against the spec (it could not be read), if they were not."""
    still_muted: list[int] = field(default_factory=list)
    public_messages: int = 0

    def to_json(self) -> dict[str, Any]:
        """The report as JSON-ready data."""
        return {
            "result": self.result,
            "reason": self.reason,
            "days_played": self.days,
            "requests_by_route": self.requests_by_route,
            "max_member_edits_per_floor_change": self.max_member_edits_per_floor_change,
            "spec_violations": (
                self.spec_violations if self.spec_unchecked is None else f"not checked: {self.spec_unchecked}"
            ),
            "still_muted_by_bot": self.still_muted,
            "public_messages": self.public_messages,
        }


@dataclass
class Harness:
    """The emulator, the bot and the scripted people of one table."""

    env: EmuTable
    bot: MafiaBot
    store: Store
    players: list[ScriptedUser]
    judge: ScriptedUser

    @property
    def emu(self) -> Any:
        """The emulator."""
        return self.env.emu

    async def wait(self, predicate: Callable[[], Any], timeout: float = STEP_TIMEOUT) -> Any:  # noqa: ASYNC109
        """Wait until ``predicate()`` holds, woken by the emulator and the bot's tables."""
        return await self.env.emu.wait_for(predicate, timeout)

    def table(self) -> Table | None:
        """The running table of the text channel."""
        return self.bot.tables.table_in(self.env.text.id)

    def user(self, user_id: int) -> ScriptedUser:
        """The scripted person with ``user_id``."""
        return next(p for p in [*self.players, self.judge] if p.id == user_id)

    def latest(self, channel: Channel, predicate: Callable[[Message], bool]) -> Message | None:
        """The newest message in ``channel`` matching ``predicate``."""
        return next((m for m in reversed(self.emu.messages(channel)) if predicate(m)), None)


def has_component(message: Message, cid: str) -> bool:
    """Whether a message carries the control ``cid``."""
    stack = list(message.components)
    while stack:
        component = stack.pop()
        if component.get("custom_id") == cid:
            return True
        stack.extend(component.get("components") or [])
    return False


@contextlib.asynccontextmanager
async def harness(
    players: int, *, time_scale: float = 0.02, database: str | None = None,
    emulator_config: EmulatorConfig | None = None, config: dict[str, Any] | None = None, seed: int | None = None,
    rulesets: Mapping[str, str] | None = None,
) -> AsyncIterator[Harness]:
    """Start an emulator with a guild of ``players`` + a judge, a store, and the real bot.

    Timers run ``1 / time_scale`` times fast, so the table asks for that many times more requests
    per second than at full speed: Discord's global limit (requests per second, all routes) is
    scaled by the same factor on both sides, the emulator's and the bot's. The per-route buckets
    (member edits, reactions) stay as configured. ``rulesets`` (file name to TOML) become the bot's
    ``[game] rulesets_dir``, as a host's folder would.
    """
    emulated = dataclasses.replace(emulator_config or EmulatorConfig())
    limit, window = emulated.rate_limits.global_limit
    per_second = math.ceil(limit / window / min(time_scale, 1.0))
    emulated.rate_limits = dataclasses.replace(emulated.rate_limits, global_limit=(per_second, 1.0))
    with tempfile.TemporaryDirectory() as tmp:
        url = database or sqlite_url(Path(tmp) / "mafiabot.sqlite3")
        async with emulated_guild(members=players + 1, config=emulated) as env:
            settings: dict[str, Any] = {
                "discord": {"guild_ids": [env.guild.id], "global_rate_limit": per_second},
                "game": {"time_scale": time_scale},
            }
            if seed is not None:
                settings["game"]["seed"] = seed
            if rulesets:
                settings["game"]["rulesets_dir"] = _rulesets_folder(Path(tmp), rulesets)
            for section, values in (config or {}).items():
                settings.setdefault(section, {}).update(values)
            store = await Store.open(url)
            bot = MafiaBot(parse_config(settings), store, guild_ready_timeout=0.05)
            try:
                async with running(bot, env):
                    yield Harness(env, bot, store, env.members[:players], env.members[players])
            finally:
                SPEC_VIOLATIONS.extend(str(v) for v in env.emu.violations)
                await store.close()


def _rulesets_folder(tmp: Path, rulesets: Mapping[str, str]) -> str:
    folder = tmp / "rulesets"
    folder.mkdir()
    for name, text in rulesets.items():
        (folder / name).write_text(text, encoding="utf-8")
    return str(folder)


async def open_table(h: Harness, ruleset: str, seats: int) -> Table:
    """Everyone sits in voice, the judge opens a table, everyone joins, the judge starts."""
    for person in [*h.players, h.judge]:
        person.join_voice(h.env.voice)
    reply = await h.judge.run_command(h.env.text, "mafia new", ruleset=ruleset, seats=seats)
    lobby = reply.message
    if lobby is None:
        raise RuntimeError(f"/mafia new was refused: {reply.content}")
    join = next(c["custom_id"] for row in lobby.components for c in row["components"] if ":join:" in c["custom_id"])
    for person in h.players:
        answer = await person.press(lobby, join)
        if answer.ephemeral:
            raise RuntimeError(f"join refused: {answer.content}")
    start = await h.judge.run_command(h.env.text, "mafia start")
    table = h.table()
    if table is None:
        raise RuntimeError(f"/mafia start was refused: {start.content}")
    table.observers.append(h.emu.changed)
    return table


class Driver:
    """Plays a table to its end through Discord, one action at a time."""

    def __init__(self, h: Harness, table: Table, strategy: Strategy) -> None:
        self.h = h
        self.table = table
        self.strategy = strategy
        self.cards_seen: set[int] = set()

    async def play(self, max_steps: int = 5000) -> None:
        """Act until the game is over."""
        await self.look_at_cards()
        for _ in range(max_steps):
            if self.table.done.is_set():
                return
            await self.step()
        raise RuntimeError("the game did not end")

    async def look_at_cards(self) -> None:
        """Every player presses "My card" once."""
        cid = custom_id("card", self.table.id)
        message = await self.h.wait(lambda: self.h.latest(self.h.env.text, lambda m: has_component(m, cid)))
        for person in self.h.players:
            reply = await person.press(message, cid)
            if reply.ephemeral:
                self.cards_seen.add(person.id)

    async def step(self) -> None:
        """Do the next thing the table waits for, then wait until the table moves on."""
        table = self.table
        state = table.game.state
        marker = (len(table.game.events), table.done.is_set())
        if state.phase is Phase.ENDED:
            # Lifting every mute at the end waits for Discord's member-edit windows (5 per 5 s).
            await self.h.wait(table.done.is_set, timeout=END_TIMEOUT)
            return
        if state.paused or state.phase in (Phase.NIGHT_ZERO, Phase.NEW):
            pass
        elif state.floor is not None:
            await self.speak(state.floor.seat, state.floor.kind.value)
        elif state.phase is Phase.VOTING and state.vote is not None:
            await self.vote()
        elif state.phase is Phase.LIFT_VOTE:
            await self.lift()
        elif state.phase is Phase.NIGHT:
            await self.night()
        elif state.phase is Phase.BEST_MOVE:
            await self.best_move()
        await self.h.wait(lambda: (len(table.game.events), table.done.is_set()) != marker)

    async def speak(self, seat: int, kind: str) -> None:
        """The floor holder may nominate, then says "Thank you"."""
        table = self.table
        person = self.h.user(table.user_at(seat))
        thanks = custom_id("thanks", table.id)
        message = await self.h.wait(lambda: self.h.latest(self.h.env.text, lambda m: has_component(m, thanks)))
        if kind in ("speech", "silent") and not table.game.state.nominated and not table.game.state.vote_cancelled:
            target = self.strategy.nominate(table, seat)
            nominate = custom_id("nominate", table.id)
            latest = self.h.latest(self.h.env.text, lambda m: has_component(m, nominate))
            if target is not None and latest is not None:
                await person.choose(latest, nominate, [str(target)])
        if table.game.state.floor is not None and table.game.state.floor.seat == seat:
            await person.press(message, thanks)

    def vote_message(self, target: int | str) -> Message | None:
        """The newest vote message for ``target`` (a candidate seat, or "lift")."""
        message_id = current_vote_message(self.table, target)
        return self.h.emu.world.messages.get(message_id) if message_id is not None else None

    async def vote(self) -> None:
        """Voters raise a hand in the open window, as planned for this round."""
        table = self.table
        vote = table.game.state.vote
        assert vote is not None  # noqa: S101
        candidate = vote.candidates[vote.index]
        message = await self.h.wait(lambda: self.vote_message(candidate))
        for seat in table.game.state.alive_seats():
            if seat in vote.votes or table.game.state.vote is not vote or vote.candidates[vote.index] != candidate:
                continue
            if self.strategy.vote(table, seat, vote.candidates[vote.index:]) == candidate:
                self.h.user(table.user_at(seat)).react(message, VOTE_EMOJI)
                await self.h.wait(self._counted(seat, vote))

    def _counted(self, seat: int, vote: object) -> Callable[[], bool]:
        state = self.table.game.state
        return lambda: state.vote is not vote or (state.vote is not None and seat in state.vote.votes)

    async def lift(self) -> None:
        """Everyone decides on "shall all of them leave?"."""
        table = self.table
        message = await self.h.wait(lambda: self.vote_message("lift"))
        vote = table.game.state.vote
        for seat in table.game.state.alive_seats():
            if vote is None or table.game.state.vote is not vote:
                return
            if self.strategy.lift(table, seat):
                self.h.user(table.user_at(seat)).react(message, VOTE_EMOJI)
                await self.h.wait(self._counted(seat, vote))

    async def night(self) -> None:
        """The black team shoots in its room; everyone presses "Night action"; actors pick."""
        table = self.table
        state = table.game.state
        night = state.night
        act = custom_id("act", table.id)
        button = await self.h.wait(lambda: self.h.latest(self.h.env.text, lambda m: has_component(m, act)))
        agreed = self.strategy.mafia_target(table)
        shoot = custom_id("shoot", table.id)
        thread = self.h.emu.world.channels[int(table.meta["thread"])]
        for seat in list(state.alive_seats()):
            if table.game.state.phase is not Phase.NIGHT or table.game.state.night != night:
                return
            person = self.h.user(table.user_at(seat))
            role = state.role(seat)
            if role.team is Team.BLACK and seat not in state.shots:
                picker = await self.h.wait(lambda: self.h.latest(thread, lambda m: has_component(m, shoot)))
                await person.choose(picker, shoot, [str(self.strategy.shot(table, seat, agreed))])
            if table.game.state.phase is not Phase.NIGHT:
                return
            reply = await person.press(button, act)
            await self.night_choice(person, seat, role, reply)

    async def night_choice(self, person: ScriptedUser, seat: int, role: Role, reply: Reply) -> None:
        """Answer the private menu the "Night action" button gave, if any."""
        message = reply.message
        if message is None or not message.components:
            return
        table = self.table
        cid = message.components[0]["components"][0]["custom_id"]
        if role in (Role.DON, Role.SHERIFF):
            await person.choose(message, cid, [str(self.strategy.check(table, seat))])
        elif role is Role.DOCTOR:
            for target in self.strategy.heal(table, seat):
                answer = await person.choose(message, cid, [str(target)])
                if answer.response_type == 7:
                    break
        elif role is Role.MANIAC:
            shot = self.strategy.maniac(table, seat)
            await person.choose(message, cid, [str(shot or 0)])

    async def best_move(self) -> None:
        """The first night's victim names three seats."""
        table = self.table
        seat = table.game.state.best_move_seat
        assert seat is not None  # noqa: S101
        person = self.h.user(table.user_at(seat))
        cid = custom_id("bestmove", table.id)
        message = await self.h.wait(lambda: self.h.latest(self.h.env.text, lambda m: has_component(m, cid)))
        reply = await person.press(message, cid)
        if reply.message is not None and reply.message.components:
            pick = reply.message.components[0]["components"][0]["custom_id"]
            await person.choose(reply.message, pick, [str(s) for s in self.strategy.best_move(table, seat)])


def readable(h: Harness, text: str) -> str:
    """Discord markup as a terminal shows it: mentions as names, countdowns as times."""
    users = h.emu.world.users
    channels = h.emu.world.channels

    def user(match: re.Match[str]) -> str:
        found = users.get(int(match[1]))
        return f"@{found.name}" if found is not None else match[0]

    def channel(match: re.Match[str]) -> str:
        found = channels.get(int(match[1]))
        return f"#{found.name}" if found is not None else match[0]

    def when(match: re.Match[str]) -> str:
        return time.strftime("%H:%M:%S", time.localtime(int(match[1])))

    text = re.sub(r"<@!?(\d+)>", user, text)
    text = re.sub(r"<#(\d+)>", channel, text)
    return re.sub(r"<t:(\d+):[RT]>", when, text)


def muted_by_bot(h: Harness, table: Table) -> list[int]:
    """The table's people who are still server-muted (the sticky flag, in voice or not)."""
    people = set(table.seats) | {p.id for p in h.players} | {h.judge.id}
    return sorted(u for u in people if h.env.guild.members[u].mute)


async def run_demo(
    *, ruleset: str, players: int, seed: int, time_scale: float = 0.02,
    echo: Callable[[str], None] | None = None, latency_ms: float = 0.0, rulesets_dir: str | None = None,
) -> DemoReport:
    """Play one whole game and report on it.

    ``ruleset`` is a preset, a ``.toml`` file or a name in ``rulesets_dir``; a custom one reaches the
    bot as a host's does, through ``[game] rulesets_dir``.
    """
    named = resolve_ruleset(ruleset, rulesets_dir=rulesets_dir)
    hosted = {} if named.source == "preset" else {f"{named.key}.toml": named.text}
    config = EmulatorConfig(latency_ms=latency_ms)
    async with harness(players, time_scale=time_scale, emulator_config=config, seed=seed, rulesets=hosted) as h:
        printed = 0

        def show() -> None:
            nonlocal printed
            messages = [m for m in h.emu.messages(h.env.text) if m.ephemeral_for is None]
            for message in messages[printed:]:
                if echo is not None and message.content:
                    echo(readable(h, message.content))
            printed = len(messages)

        original_changed = h.emu.changed

        def changed() -> None:
            show()
            original_changed()

        h.emu.changed = changed
        table = await open_table(h, named.key, players)
        await Driver(h, table, Strategy(seed)).play()
        await table.done.wait()
        show()
        outcome = table.game.outcome()
        routes = h.emu.route_counts(h.env.app)
        return DemoReport(
            result=outcome.result.value if outcome else None,
            reason=outcome.reason.value if outcome else None,
            days=table.game.state.day,
            requests_by_route=dict(sorted(collections.Counter(routes).items())),
            max_member_edits_per_floor_change=table.voice.stats.most_in_one_change,
            spec_violations=[str(v) for v in h.emu.violations],
            spec_unchecked=h.emu.spec.skip_reason,
            still_muted=muted_by_bot(h, table),
            public_messages=printed,
        )


def main(
    ruleset: str, players: int, seed: int, report: str | None, time_scale: float, *, rulesets_dir: str | None = None,
) -> int:
    """``mafiabot demo``: play, print the public channel, optionally write the report."""
    result = asyncio.run(run_demo(ruleset=ruleset, players=players, seed=seed, time_scale=time_scale, echo=print,
                                  rulesets_dir=rulesets_dir))
    data = result.to_json()
    if report:
        Path(report).write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    summary = {k: data[k] for k in ("result", "reason", "days_played", "max_member_edits_per_floor_change")}
    print(json.dumps(summary))  # noqa: T201
    return 0 if not result.spec_violations and not result.still_muted else 1
