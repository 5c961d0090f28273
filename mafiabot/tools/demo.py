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
import re
import tempfile
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engine import Phase
from mafiabot.core.clock import ManualClock, TableClock
from mafiabot.core.rulesets import resolve_ruleset
from mafiabot.core.runtime import Table
from mafiabot.emulator.server import Emulator, EmulatorConfig
from mafiabot.emulator.state import Channel, Message
from mafiabot.emulator.testing import BOT_PERMISSIONS, emulated_guild, running
from mafiabot.emulator.testing import Table as EmuTable
from mafiabot.emulator.users import ScriptedUser
from mafiabot.host.bot import MafiaBot
from mafiabot.host.i18n import t
from mafiabot.host.presenter import VOTE_EMOJI, current_vote_message, custom_id
from mafiabot.store import Store, sqlite_url
from mafiabot.tools.config import parse_config
from mafiabot.tools.demo_pictures import posted_pictures, save_pictures
from mafiabot.tools.hands import Hands, Menu, Strategy, Where

__all__ = [
    "DemoOptions", "DemoReport", "Driver", "Harness", "ScriptedClock", "Strategy", "harness", "has_component",
    "main", "muted_by_bot", "open_table", "readable", "run_demo",
]

UPDATE_MESSAGE = 7
"""The interaction response that updates the message a component sits on: the bot took a pick."""
STEP_TIMEOUT = 30.0
END_TIMEOUT = 180.0
SPEC_VIOLATIONS: list[str] = []
"""Every OpenAPI violation any harness in this process saw; the test suite fails on one."""


EVENING = datetime(2026, 1, 9, 19, 0, tzinfo=UTC)
"""Where a scripted clock starts: a club evening, the same for every run."""


class ScriptedClock(ManualClock):
    """A manual table clock that moves only when the demo's driver moves it, from a club evening on.

    The players' actions take no time on it, and a timer fires only once the driver has done all
    it plans for the step, so how fast the machine answers never changes the game: the same seed
    and options play the same game, with the same times on every message.
    """

    def __init__(self, start: datetime = EVENING) -> None:
        super().__init__(start)


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
    seed: int = 0
    language: str = "en"
    ruleset: str = ""
    players: int = 0
    public_channel: list[str] = field(default_factory=list)
    protocol: dict[str, Any] | None = None
    pictures: list[str] = field(default_factory=list)
    """The files ``--pictures`` saved."""

    def to_json(self) -> dict[str, Any]:
        """The report as JSON-ready data."""
        return {
            "ruleset": self.ruleset,
            "players": self.players,
            "seed": self.seed,
            "language": self.language,
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
            "public_channel": self.public_channel,
            "protocol": self.protocol,
        }

    def summary(self) -> list[str]:
        """The end of the demo in words, in its language."""
        lang = self.language
        lines = ["", t(lang, "demo.summary.title")]
        lines.append(t(lang, f"end.result.{self.result}" if self.result else "end.result.abandoned"))
        lines.append(t(lang, "demo.summary.days", count=self.days))
        total = sum(self.requests_by_route.values())
        lines.append(t(lang, "demo.summary.requests", count=total))
        busiest = sorted(self.requests_by_route.items(), key=lambda item: (-item[1], item[0]))[:5]
        lines.extend(f"  {count:>5}  {route}" for route, count in busiest)
        if self.still_muted:
            lines.append(t(lang, "demo.summary.still_muted", count=len(self.still_muted)))
        else:
            lines.append(t(lang, "demo.summary.nobody_muted"))
        if self.spec_violations:
            lines.append(t(lang, "demo.summary.violations", count=len(self.spec_violations)))
        lines.append(t(lang, "demo.summary.seed", seed=self.seed))
        return lines


@dataclass
class Harness:
    """The emulator, the bot and the scripted people of one table."""

    env: EmuTable
    bot: MafiaBot
    store: Store
    players: list[ScriptedUser]
    judge: ScriptedUser

    @property
    def emu(self) -> Emulator:
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

    def on_change(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` whenever the emulator's world changes, before anything waiting on it wakes."""
        original = self.emu.changed

        def changed() -> None:
            callback()
            original()

        self.emu.changed = changed  # type: ignore[method-assign]  # the emulator has one change hook; chain it


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
    clock: Callable[[], TableClock] | None = None, rate_scale: float | None = None,
    rulesets: Mapping[str, str] | None = None, bot_permissions: int | None = None,
) -> AsyncIterator[Harness]:
    """Start an emulator with a guild of ``players`` + a judge, a store, and the real bot.

    Timers run ``1 / time_scale`` times fast, so the table asks for that many times more requests
    per second than at full speed: Discord's global limit (requests per second, all routes) is
    scaled by the same factor on both sides, the emulator's and the bot's. The per-route buckets
    (member edits, reactions) stay as configured. With ``clock`` (a scripted table clock) the
    timers run on it instead, and ``rate_scale`` stands for ``time_scale`` in the global limit.
    ``rulesets`` (file name to TOML) become the bot's ``[game] rulesets_dir``, as a host's folder would.
    ``bot_permissions``: what the bot's role may do, when not what it asks for on invite.
    """
    emulated = dataclasses.replace(emulator_config or EmulatorConfig())
    limit, window = emulated.rate_limits.global_limit
    per_second = math.ceil(limit / window / min(rate_scale or time_scale, 1.0))
    emulated.rate_limits = dataclasses.replace(emulated.rate_limits, global_limit=(per_second, 1.0))
    with tempfile.TemporaryDirectory() as tmp:
        url = database or sqlite_url(Path(tmp) / "mafiabot.sqlite3")
        permissions = BOT_PERMISSIONS if bot_permissions is None else bot_permissions
        async with emulated_guild(members=players + 1, config=emulated, bot_permissions=permissions) as env:
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
            if clock is not None:
                bot.table_clock = clock
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
    h.bot.tables.watch(table, h.emu.changed)
    return table


class Driver(Hands[Message]):
    """Plays a table to its end through Discord, one action at a time."""

    def __init__(
        self, h: Harness, table: Table, strategy: Strategy, *, clock: ScriptedClock | None = None, pace: float = 0.0,
    ) -> None:
        self.h = h
        self.table = table
        self.strategy = strategy
        self.clock = clock
        """A scripted table clock: the driver then moves time itself, so nothing is left to timing."""
        self.pace = pace
        """Real seconds per second on the scripted clock, so a person can read along (0: no pauses)."""
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
        message = await self.control("text", cid)
        for person in self.h.players:
            reply = await person.press(message, cid)
            if reply.ephemeral:
                self.cards_seen.add(person.id)

    async def step(self) -> None:
        """Do the next thing the table waits for, then wait until the table moves on."""
        table = self.table
        if self.clock is not None:
            await self.settle()
        marker = (len(table.game.events), table.done.is_set())
        if table.game.state.phase is Phase.ENDED:
            # Lifting every mute at the end waits for Discord's member-edit windows (5 per 5 s).
            await self.h.wait(table.done.is_set, timeout=END_TIMEOUT)
            return
        await self.act()

        def moved() -> bool:
            return (len(table.game.events), table.done.is_set()) != marker

        if self.clock is not None:
            await self.run_out(moved)
        await self.h.wait(moved)

    async def settle(self) -> None:
        """Wait until the bot has shown everything the table did so far."""
        await self.h.bot.presenter.drained(self.table.id)

    async def _pass(self, seconds: float) -> None:
        if self.pace > 0 and seconds > 0:
            await asyncio.sleep(seconds * self.pace)  # reading time for a person, not synchronization

    async def run_out(self, moved: Callable[[], bool]) -> None:
        """Nobody acts any more: let the table's timers fire, one after another, until it moves on."""
        clock = self.clock
        assert clock is not None  # noqa: S101
        while True:
            await self.h.wait(lambda: moved() or clock.next_at() is not None)
            at = clock.next_at()
            if moved() or at is None:
                return
            await self.settle()  # what the table shows now is shown at this time, not the next
            await self._pass(at - clock.time())
            clock.fire_next()
            await self.settle()

    async def talk(self, seat: int, seconds: int) -> bool:
        """Let the floor holder speak on the scripted clock; False when their time ran out first."""
        clock = self.clock
        if clock is None:
            return True
        talk = self.strategy.talk(self.table, seat, seconds)
        end = clock.last_at()
        if end is None or clock.time() + talk >= end:
            return False
        await self.settle()
        await self._pass(talk)
        clock.advance(talk)
        await self.settle()
        return True

    async def speak(self, seat: int, kind: str) -> None:
        """The floor holder may nominate, then says "Thank you"."""
        thanks = custom_id("thanks", self.table.id)
        message = await self.control("text", thanks)
        await self.nominate(seat, kind)
        floor = self.table.game.state.floor
        if floor is None or floor.seat != seat or not await self.talk(seat, floor.seconds):
            return
        await self.click(seat, message, thanks)

    def vote_message(self, target: int | str) -> Message | None:
        """The newest vote message for ``target`` (a candidate seat, or "lift")."""
        message_id = current_vote_message(self.table, target)
        return self.h.emu.world.messages.get(message_id) if message_id is not None else None

    # -- the hands: the players' own clicks, picks and reactions in the emulator --

    def _channel(self, where: Where) -> Channel:
        if where == "text":
            return self.h.env.text
        return self.h.emu.world.channels[int(self.table.meta.thread or 0)]

    def latest(self, where: Where, cid: str) -> Message | None:
        """The newest message in ``where`` carrying ``cid``, if there is one now."""
        return self.h.latest(self._channel(where), lambda m: has_component(m, cid))

    async def control(self, where: Where, cid: str) -> Message:
        """The newest message in ``where`` carrying ``cid``, once there is one."""
        found: Message = await self.h.wait(lambda: self.latest(where, cid))
        return found

    def _person(self, seat: int) -> ScriptedUser:
        return self.h.user(self.table.user_at(seat))

    async def click(self, seat: int, message: Message, cid: str) -> Menu[Message] | None:
        """The player of ``seat`` presses ``cid``; the private menu the bot answered with, if any."""
        reply = await self._person(seat).press(message, cid)
        menu = reply.message
        if menu is None or not menu.components:
            return None
        return Menu(menu, menu.components[0]["components"][0]["custom_id"])

    async def select(self, seat: int, message: Message, cid: str, values: Sequence[str]) -> bool:
        """The player of ``seat`` picks ``values`` in ``cid``; whether the bot took it (updated the menu)."""
        answer = await self._person(seat).choose(message, cid, list(values))
        return answer.response_type == UPDATE_MESSAGE

    async def react(self, seat: int, message: Message) -> None:
        """The player of ``seat`` raises a hand on a vote message."""
        self._person(seat).react(message, VOTE_EMOJI)

    async def wait_vote_message(self, target: int | str) -> Message:
        """The current vote message for ``target``, once the bot has posted it."""
        found: Message = await self.h.wait(lambda: self.vote_message(target))
        return found

    async def until(self, predicate: Callable[[], bool]) -> None:
        """Wait until ``predicate()`` holds."""
        await self.h.wait(predicate)


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
        return datetime.fromtimestamp(int(match[1]), UTC).strftime("%H:%M:%S")

    text = re.sub(r"<@!?(\d+)>", user, text)
    text = re.sub(r"<#(\d+)>", channel, text)
    return re.sub(r"<t:(\d+):[RT]>", when, text)


def muted_by_bot(h: Harness, table: Table) -> list[int]:
    """The table's people who are still server-muted (the sticky flag, in voice or not)."""
    people = set(table.seats) | {p.id for p in h.players} | {h.judge.id}
    return sorted(u for u in people if h.env.guild.members[u].mute)


@dataclass(frozen=True)
class DemoOptions:
    """What ``mafiabot demo`` plays: the same options and seed play the same game."""

    ruleset: str = "classic"
    players: int = 0
    """Table size; 0: the ruleset's own."""
    seed: int = 1
    language: str = "en"
    time_scale: float = 0.02
    """Real seconds per second of the game (0: no pauses at all)."""
    report: str | None = None
    rulesets_dir: str | None = None
    """A host's folder of rulesets, where ``ruleset`` may be found by name."""
    web: tuple[str, int] | None = None
    """Serve the table's stream there (host, port) and print its links."""
    pictures: str | None = None
    """A folder to save every picture the table posted in."""


async def run_demo(
    *, ruleset: str, players: int, seed: int, time_scale: float = 0.02, language: str = "en",
    echo: Callable[[str], None] | None = None, latency_ms: float = 0.0,
    emulator_config: EmulatorConfig | None = None, rulesets_dir: str | None = None,
    web: tuple[str, int] | None = None, pictures: Path | None = None,
) -> DemoReport:
    """Play one whole game on a scripted clock and report on it.

    The seed fixes the seating, the cards and every scripted decision; the clock makes the timing
    part of the script, so the public channel comes out the same on every run. ``ruleset`` is a
    preset, a ``.toml`` file or a name in ``rulesets_dir``; a custom one reaches the bot as a
    host's does, through ``[game] rulesets_dir``.
    """
    named = resolve_ruleset(ruleset, rulesets_dir=rulesets_dir)
    hosted = {} if named.source == "preset" else {f"{named.key}.toml": named.text}
    rules = named.ruleset
    players = players or rules.default_players
    config = emulator_config or EmulatorConfig(latency_ms=latency_ms)
    clock = ScriptedClock()
    settings: dict[str, Any] = {"game": {"language": language}}
    if web is not None:
        settings["web"] = {"enabled": True, "host": web[0], "port": web[1]}
    async with harness(
        players, time_scale=1.0, rate_scale=0.02, emulator_config=config, seed=seed,
        config=settings, clock=lambda: clock, rulesets=hosted,
    ) as h:
        printed = 0
        channel: list[str] = []

        def show() -> None:
            nonlocal printed
            messages = [m for m in h.emu.messages(h.env.text) if m.ephemeral_for is None]
            for message in messages[printed:]:
                if message.content:
                    # Stamped with the table's clock: a message's deadline then reads against its own time.
                    stamp = clock.wall(clock.time()).strftime("%H:%M:%S")
                    line = f"{stamp}  " + readable(h, message.content).replace("\n", "\n" + " " * 10)
                    channel.append(line)
                    if echo is not None:
                        echo(line)
            printed = len(messages)

        h.on_change(show)
        table = await open_table(h, named.key, players)
        if h.bot.stream is not None and echo is not None:
            await stream_links(h, table, time_scale, echo)
        await Driver(h, table, Strategy(seed), clock=clock, pace=time_scale).play()
        await table.done.wait()
        saved: list[Path] = []
        if pictures is not None:
            await h.bot.presenter.sender.drained(table.id)  # the summary and its sheet are out
            saved = save_pictures(pictures, posted_pictures(h.emu, h.env.text, h.bot.user.id if h.bot.user else 0))
        show()
        outcome = table.game.outcome()
        routes = h.emu.route_counts(h.env.app)
        protocol = await h.store.game_protocol(table.id)
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
            seed=seed, language=language, ruleset=rules.name, players=players,
            public_channel=channel,
            protocol=json.loads(json.dumps(dataclasses.asdict(protocol), default=str)),
            pictures=[str(path) for path in saved],
        )


async def stream_links(h: Harness, table: Table, time_scale: float, echo: Callable[[str], None]) -> None:
    """Hand out the table's stream links and print one line per tier (the broadcast tier 120 game seconds behind)."""
    from mafiabot.host.web.server import LAYOUTS

    stream = h.bot.stream
    assert stream is not None  # noqa: S101
    tokens = await stream.issue(table.id, 120 * time_scale)
    for tier, token in tokens.items():
        circle, strip = (stream.url(token, layout) for layout in LAYOUTS)
        echo(t(table.language, "demo.web.link", tier=tier, circle=circle, strip=strip))


def main(options: DemoOptions) -> int:
    """``mafiabot demo``: play, print the public channel and a summary, optionally write the report.

    Returns 0, or 1 when the emulator saw a request Discord would refuse or someone was left muted.

    Raises:
        OSError: the report cannot be written (the caller checked its folder first).
    """
    result = asyncio.run(run_demo(
        ruleset=options.ruleset, players=options.players, seed=options.seed, time_scale=options.time_scale,
        language=options.language, echo=print, rulesets_dir=options.rulesets_dir, web=options.web,
        pictures=Path(options.pictures) if options.pictures else None,
    ))
    if options.report:
        Path(options.report).write_text(json.dumps(result.to_json(), indent=2, ensure_ascii=False), encoding="utf-8")
    for line in result.summary():
        print(line)  # noqa: T201
    if options.report:
        print(t(options.language, "demo.summary.report", path=options.report))  # noqa: T201
    if options.pictures:
        shown = t(options.language, "demo.summary.pictures", count=len(result.pictures), path=options.pictures)
        print(shown)  # noqa: T201
    return 0 if not result.spec_violations and not result.still_muted else 1
