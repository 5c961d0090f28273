"""Crash recovery, end to end: the bot process is SIGKILLed mid-speech, mid-vote (reactions in
flight) and mid-night, restarted on the same database, and the game ends exactly as the same
player actions end it without a crash; nothing accepted is lost and nobody stays muted.

The bot runs as a real ``mafiabot run`` process pointed at an emulator in this test process.
The scripted players decide from the game as the store has it (the source of truth), with choices
keyed by the log position, so a retried action is the same action.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import random
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from engine import Game, Phase, Role, Team, command_from_data, from_mapping
from engine import events as ev
from mafiabot.emulator import Emulator
from mafiabot.emulator.testing import Table as EmuTable
from mafiabot.emulator.testing import emulated_guild
from mafiabot.host.presenter import VOTE_EMOJI, custom_id
from mafiabot.store import Store
from tests.bot.processes import SEED, BotProcess, bot_and_store, owed_mutes_after_stop
from tests.harness import FAST_GLOBAL as FAST
from tests.harness import RESTART_AT_ONCE

PLAYERS = 10
PLAY_SECONDS = 300
"""How long a game may take before ``Player.play`` gives up (a guard; pytest's timeout is the other)."""


async def next_look(emu: Emulator) -> None:
    """Wait for the emulator's next change, or 50 ms at most: when to read the store again.

    The bot process writes its database with no word to this one; what it writes it then mostly
    shows in Discord, so a change in the emulator is the cue. The bound only paces the reads when
    no change follows (a write the table does not show); every caller re-checks what it waits for.
    """
    with contextlib.suppress(TimeoutError):
        await emu.wait_for(lambda: False, timeout=0.05)


class Player:
    """The scripted table: reads the store, acts through the emulator."""

    def __init__(self, env: EmuTable, store: Store, bot: BotProcess, kill_at: dict[str, int]) -> None:
        self.env = env
        self.emu = env.emu
        self.store = store
        self.bot = bot
        self.kill_at = dict(kill_at)
        self.actions: dict[str, int] = {"speech": 0, "vote": 0, "night": 0}
        self.game_id = 0
        self.phases_at_kill: list[tuple[str, int]] = []

    async def game(self) -> tuple[Game, dict[str, Any]]:
        stored = await self.store.get_game(self.game_id)
        game = Game.replay(from_mapping(stored.ruleset), [command_from_data(c.command) for c in stored.log])
        return game, stored.discord

    def user(self, seat: int) -> Any:
        return self.env.members[seat - 1]

    def rng(self, game: Game, seat: int) -> random.Random:
        # Keyed by where the table is, not by how many tries it took, so a retried action is the same.
        state = game.state
        return random.Random(f"{SEED}:{state.phase.value}:{state.day}:{state.night}:{seat}")

    def latest(self, channel: Any, cid: str) -> Any:
        for message in reversed(self.emu.messages(channel)):
            if any(c.get("custom_id") == cid for row in message.components for c in row.get("components", [])):
                return message
        return None

    async def progress(self, seq: int) -> None:
        """Wait until the log grows past ``seq``, retrying the step after a while if it does not."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 3
        while loop.time() < deadline:
            stored = await self.store.get_game(self.game_id)
            if stored.last_seq > seq or stored.status != "open":
                return
            await next_look(self.emu)

    async def maybe_kill(self, kind: str) -> bool:
        self.actions[kind] += 1
        if self.kill_at.get(kind) != self.actions[kind]:
            return False
        game, _ = await self.game()
        self.phases_at_kill.append((game.state.phase.value, len(game.history)))
        await self.bot.kill()
        await self.bot.start()
        resumed = sum(1 for m in self.emu.messages(self.env.text) if "The host is back" in m.content)
        await self.emu.wait_for(
            lambda: sum(1 for m in self.emu.messages(self.env.text) if "The host is back" in m.content) > resumed,
            timeout=60,
        )
        return True

    async def open_table(self) -> None:
        for person in self.env.members:
            person.join_voice(self.env.voice)
        judge = self.env.members[PLAYERS]
        reply = await judge.run_command(self.env.text, "mafia new", ruleset="classic", seats=PLAYERS, timeout=20)
        lobby = reply.message
        assert lobby is not None, reply.content
        join = next(c["custom_id"] for row in lobby.components for c in row["components"] if ":join:" in c["custom_id"])
        for person in self.env.members[:PLAYERS]:
            await person.press(lobby, join, timeout=20)
        await judge.run_command(self.env.text, "mafia start", timeout=20)
        games = await self.store.open_games(lambda guild_id: guild_id == self.env.guild.id)
        self.game_id = games[0].id

    async def play(self) -> None:
        deadline = asyncio.get_running_loop().time() + PLAY_SECONDS
        while asyncio.get_running_loop().time() < deadline:
            game, meta = await self.game()
            stored = await self.store.get_game(self.game_id)
            if stored.status != "open":
                return
            await self.advance(game, meta)
        raise AssertionError("the game did not end")

    async def advance(self, game: Game, meta: dict[str, Any]) -> bool:
        """Take the table's next step, then wait for the stored game to move on: whether a player acted.

        With nothing to do yet (the window or button the step looks for not shown, a timer of the
        bot's running) the wait is for the next change in Discord, where what the players wait for
        shows: waiting for the log there would pass only at ``progress``'s retry bound.
        """
        seq = len(game.history)
        if await self.step(game, meta):
            await self.progress(seq)
            return True
        await next_look(self.emu)
        return False

    async def step(self, game: Game, meta: dict[str, Any]) -> bool:
        """Act as the table asks, from the stored ``game``: whether a player did anything."""
        state = game.state
        table = self.game_id
        if state.floor is not None:
            seat = state.floor.seat
            person = self.user(seat)
            if state.phase is Phase.SPEECHES and not state.nominated and self.rng(game, seat).random() < 0.5:
                free = [s for s in state.alive_seats() if s not in state.nominees]
                message = self.latest(self.env.text, custom_id("nominate", table))
                if free and message is not None:
                    person.select(message, custom_id("nominate", table), [str(self.rng(game, seat).choice(free))])
                    await self.maybe_kill("speech")
                    return True
            message = self.latest(self.env.text, custom_id("thanks", table))
            if message is not None:
                person.click(message, custom_id("thanks", table))
                await self.maybe_kill("speech")
                return True
            return False
        if state.phase is Phase.VOTING and state.vote is not None:
            candidate = state.vote.candidates[state.vote.index]
            votes = meta.get("votes", {})
            ids = [m for m in meta.get("round", []) if votes.get(str(m)) == candidate]
            if not ids:
                return False
            message = self.emu.world.messages[max(ids)]
            acted = False
            for seat in state.alive_seats():
                if seat not in state.vote.votes and self.user(seat).id not in message.reactions.get(VOTE_EMOJI, []):
                    self.user(seat).react(message, VOTE_EMOJI)
                    acted = True
                    if await self.maybe_kill("vote"):
                        return True
            return acted
        if state.phase is Phase.NIGHT:
            return await self.night(game, meta)
        return False

    async def night(self, game: Game, meta: dict[str, Any]) -> bool:
        state = game.state
        table = self.game_id
        reds = [s for s in state.alive_seats() if state.role(s).team is Team.RED]
        target = random.Random(f"{SEED}:night:{state.night}").choice(reds)
        thread = self.emu.world.channels.get(int(meta.get("thread", 0)))
        acted = False
        for seat in state.alive_seats():
            role = state.role(seat)
            person = self.user(seat)
            if role.team is Team.BLACK and seat not in state.shots and thread is not None:
                picker = self.latest(thread, custom_id("shoot", table))
                if picker is not None:
                    person.select(picker, custom_id("shoot", table), [str(target)])
                    acted = True
                    if await self.maybe_kill("night"):
                        return True
            if role in (Role.DON, Role.SHERIFF) and seat not in state.checks:
                button = self.latest(self.env.text, custom_id("act", table))
                if button is None:
                    continue
                acted = True
                try:
                    reply = await person.press(button, custom_id("act", table), timeout=5)
                except TimeoutError:
                    return True
                if reply.message is not None and reply.message.components:
                    cid = reply.message.components[0]["components"][0]["custom_id"]
                    others = [s for s in range(1, PLAYERS + 1) if s != seat]
                    person.select(reply.message, cid, [str(self.rng(game, seat).choice(others))])
                    if await self.maybe_kill("night"):
                        return True
        return acted


def normalized(events: list[dict[str, Any]]) -> list[Any]:
    """The event stream with each run of votes sorted: catch-up after a crash may count them in another order."""
    out: list[Any] = []
    run: list[Any] = []
    for event in events:
        if event["type"] == "VoteCast":
            run.append((event["seat"], event["candidate"]))
            continue
        out.extend(sorted(run))
        run = []
        out.append(event)
    return out + sorted(run)


RACED = dict.fromkeys((
    "speech_seconds", "short_speech_seconds", "silent_turn_seconds", "defense_seconds", "tie_speech_seconds",
    "last_word_seconds", "night_seconds",
), 600)
"""Timers the players always beat (a speech ends with thanks, a night once everyone acted), made long.

The bot's timers run on the wall clock of its own process, and a restart on a loaded machine takes
seconds. With a timer that can run out before the table's next action, the crashed game goes
another way than the calm one; a long timer costs nothing when the players act first. Timers that
run out in both games alike (Night 0, a lift vote nobody joins) keep their length."""
VOTE_WINDOW = 60
"""The longest window the settings allow: every player raises a hand in the first window they see,
and voting closes once all have voted. With the default 7 s a restart mid-vote under load outlasted
the window, the rest of the hands went to the next nominee and the game went another way."""


async def play_once(tmp: Path, kill_at: dict[str, int],
                    migrating: asyncio.Lock | None = None) -> tuple[list[Any], Player, EmuTable, list[int]]:
    """One game to its end, the bot killed at ``kill_at``; ``migrating`` keeps two stores of one
    process from migrating at once (alembic's context is global to the process)."""
    async with emulated_guild(members=PLAYERS + 1, config=FAST) as env:
        async with migrating or contextlib.nullcontext():
            bot, store = await bot_and_store(env, tmp, vote_window=VOTE_WINDOW)
        settings = await store.get_settings(env.guild.id)
        await store.save_settings(dataclasses.replace(settings, timers={**settings.timers, **RACED}))
        try:
            await bot.start()
            player = Player(env, store, bot, kill_at)
            await player.open_table()
            await player.play()
            stored = await store.get_game(player.game_id)
            assert_each_window_once(env)
            # Every mute lifted: wait for the unmutes the finished game sends.
            people = env.members[:PLAYERS]
            await env.emu.wait_for(lambda: not any(env.guild.members[p.id].mute for p in people), timeout=30)
            events = [e for c in stored.log for e in c.events]
            owed = [m.user_id for m in await owed_mutes_after_stop(store, [bot], env.guild.id)]
            return normalized(events), player, env, owed
        finally:
            await bot.stop()
            await store.close()


async def test_a_killed_bot_resumes_and_the_game_ends_as_without_the_crash(tmp_path: Path) -> None:
    for name in ("calm", "crash"):
        (tmp_path / name).mkdir()
    # Two guilds, two processes, two databases: the games share nothing, so they run side by side.
    migrating = asyncio.Lock()
    (calm, _, _, _), (crashed, player, _env, owed) = await asyncio.gather(
        play_once(tmp_path / "calm", {}, migrating),
        play_once(tmp_path / "crash", {"speech": 4, "vote": 3, "night": 2}, migrating))
    assert player.bot.starts == 4  # three kills, three restarts
    kinds = [phase for phase, _ in player.phases_at_kill]
    assert "speeches" in kinds
    assert "voting" in kinds
    assert "night" in kinds
    assert crashed == calm
    ended = [e for e in crashed if isinstance(e, dict) and e["type"] == "GameEnded"]
    assert len(ended) == 1
    assert owed == []
    assert ev  # the event module is the vocabulary the normalized stream speaks


WINDOW = re.compile(r"Who votes against #(\d+) ")
ROUND_START = ("Voting on ", "Revote between ")


def windows_per_round(env: EmuTable) -> list[list[int]]:
    """The vote windows the channel shows, by round (a round starts with the message that opens it)."""
    rounds: list[list[int]] = []
    for message in env.emu.messages(env.text):
        if message.ephemeral_for is not None or message.author_id != env.app.user.id:
            continue
        if any(start in message.content for start in ROUND_START) or not rounds:
            rounds.append([])
        rounds[-1].extend(int(seat) for seat in WINDOW.findall(message.content))
    return [r for r in rounds if r]


def assert_each_window_once(env: EmuTable) -> list[list[int]]:
    rounds = windows_per_round(env)
    assert rounds
    for windows in rounds:
        assert len(windows) == len(set(windows)), rounds
    return rounds


async def test_hands_raised_while_the_bot_is_down_are_counted_or_removed_and_explained(tmp_path: Path) -> None:
    async with emulated_guild(members=PLAYERS + 1, config=RESTART_AT_ONCE) as env:
        bot, store = await bot_and_store(env, tmp_path, vote_window=60)
        try:
            await bot.start()
            player = Player(env, store, bot, {})
            await player.open_table()
            for _ in range(3000):
                game, meta = await player.game()
                vote = game.state.vote
                if game.state.phase is Phase.VOTING and vote is not None and len(vote.candidates) >= 2:
                    if [m for m in meta.get("round", []) if meta["votes"].get(str(m)) == vote.candidates[0]]:
                        break
                    await next_look(env.emu)
                    continue
                assert game.state.phase is not Phase.ENDED
                await player.advance(game, meta)
            assert vote is not None
            first, second = vote.candidates[:2]
            early, late, wrong, *fresh = game.state.alive_seats()
            round_messages = meta["round"]
            m_first = env.emu.world.messages[round_messages[0]]
            # A hand for the first nominee, counted live; then the judge moves on to the second window.
            player.user(early).react(m_first, VOTE_EMOJI)
            await wait_logged(player, lambda g: early in (g.state.vote.votes if g.state.vote else {}))
            judge = env.members[PLAYERS]
            await judge.run_command(env.text, "mafia skip", timeout=20)
            game, meta = await wait_logged(player, lambda g: g.state.vote is not None and g.state.vote.index == 1)
            m_second = env.emu.world.messages[await wait_window(player, second)]

            await bot.kill()
            # While the bot is away: two fresh hands, a second vote, a late hand, a judge's, another emoji.
            for seat in fresh[:2]:
                player.user(seat).react(m_second, VOTE_EMOJI)
            player.user(early).react(m_second, VOTE_EMOJI)
            player.user(late).react(m_first, VOTE_EMOJI)
            judge.react(m_second, VOTE_EMOJI)
            player.user(wrong).react(m_second, "\N{THUMBS UP SIGN}")
            await bot.start()

            def settled() -> bool:
                hands = m_second.reactions.get(VOTE_EMOJI, [])
                return (player.user(early).id not in hands and judge.id not in hands
                        and player.user(late).id not in m_first.reactions.get(VOTE_EMOJI, [])
                        and not m_second.reactions.get("\N{THUMBS UP SIGN}"))

            await env.emu.wait_for(settled, timeout=60)
            game, _ = await wait_logged(
                player, lambda g: g.state.vote is None or all(s in g.state.vote.votes for s in fresh[:2]))
            casts = [e for c in (await store.get_game(player.game_id)).log for e in c.events
                     if e["type"] == "VoteCast"]
            assert {(e["seat"], e["candidate"]) for e in casts} >= {(fresh[0], second), (fresh[1], second)}
            assert [e["candidate"] for e in casts if e["seat"] == early] == [first]
            assert not [e for e in casts if e["seat"] in (late, wrong)]
            hands = m_second.reactions.get(VOTE_EMOJI, [])
            assert all(player.user(s).id in hands for s in fresh[:2])

            def told(person: Any, text: str) -> bool:
                return any(text in m.content for m in person.dm_messages(env.app))

            await env.emu.wait_for(lambda: told(judge, "not seated") and told(player.user(early), "already voted")
                                   and told(player.user(late), "late") and told(player.user(wrong), "only"),
                                   timeout=30)
            await player.play()
            rounds = assert_each_window_once(env)
            assert rounds[0][:2] == [first, second]
        finally:
            await bot.stop()
            await store.close()


async def wait_logged(player: Player, predicate: Any) -> tuple[Game, dict[str, Any]]:
    """Wait until the stored game satisfies ``predicate``."""
    for _ in range(600):
        game, meta = await player.game()
        if predicate(game):
            return game, meta
        await next_look(player.emu)
    raise AssertionError("the stored game never got there")


async def wait_window(player: Player, candidate: int) -> int:
    """The stored id of this round's window for ``candidate``, once the bot has shown it."""
    for _ in range(600):
        _, meta = await player.game()
        ids = [m for m in meta.get("round", []) if meta.get("votes", {}).get(str(m)) == candidate]
        if ids:
            return int(max(ids))
        await next_look(player.emu)
    raise AssertionError(f"no window for #{candidate}")


async def test_a_window_that_ran_out_while_the_bot_was_down_is_followed_by_the_next_one_once(tmp_path: Path) -> None:
    async with emulated_guild(members=PLAYERS + 1, config=RESTART_AT_ONCE) as env:
        bot, store = await bot_and_store(env, tmp_path, vote_window=2)
        try:
            await bot.start()
            player = Player(env, store, bot, {})
            await player.open_table()
            for _ in range(3000):
                game, meta = await player.game()
                vote = game.state.vote
                if game.state.phase is Phase.VOTING and vote is not None and len(vote.candidates) >= 2:
                    break
                assert game.state.phase is not Phase.ENDED
                await player.advance(game, meta)
            assert vote is not None
            await wait_window(player, vote.candidates[0])
            await bot.kill()
            stored = await store.get_game(player.game_id)
            assert stored.timer_deadline is not None
            assert stored.timer_id is not None
            # The scenario itself: the window's time ran out just before the bot went down, its timeout
            # not yet written. The restarted bot reads the stored deadline against the moment the game
            # was last known to run: one already gone then is that.
            stopped = stored.stopped_at() or datetime.now(UTC)
            ran_out = min(stored.timer_deadline, stopped) - timedelta(seconds=0.5)
            await store.set_timer(player.game_id, stored.timer_id, ran_out, None)
            await bot.start()
            await wait_window(player, vote.candidates[1])
            await player.play()
            rounds = assert_each_window_once(env)
            assert rounds[0][:2] == list(vote.candidates[:2])
        finally:
            await bot.stop()
            await store.close()
