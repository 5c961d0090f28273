"""Helper tokens: member edits spread over every token's budget, read from Discord's headers.

The emulator keeps a member-edit bucket per token and guild (5 per 5 s here, as Discord was
observed to), so a whole-table mute with the bot's token alone must wait a window, and with three
helpers must not.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterable
from pathlib import Path

import pytest

from mafiabot.core.nicks import Rename
from mafiabot.core.voice import EditBudget, VoiceReconciler
from mafiabot.emulator import EmulatorConfig, RateLimitConfig, RequestRecord
from mafiabot.emulator.state import DEFAULT_EVERYONE, Permission
from mafiabot.emulator.testing import Table as EmuTable
from mafiabot.emulator.testing import assert_no_spec_violations, emulated_guild, running
from mafiabot.host.bot import MafiaBot
from mafiabot.host.members import DiscordMemberEditor
from mafiabot.store import Store, sqlite_url
from mafiabot.tools.check import check
from mafiabot.tools.config import parse_config

MEMBER_EDIT = "PATCH /guilds/{guild_id}/members/{user_id}"
LIMITS = EmulatorConfig(rate_limits=RateLimitConfig(member_edits=(5, 5.0)))


# -- the budget, without Discord ---------------------------------------------------------------------


def test_budget_spreads_edits_over_tokens_by_what_each_has_left() -> None:
    budget = EditBudget(3)
    picks = [budget.pick(1, 0.0) for _ in range(15)]
    assert sorted(picks) == sorted([0, 1, 2] * 5)
    assert picks[:3] == [1, 2, 0]  # the fullest first, helpers on a tie, so a burst fans out at once


def test_budget_says_how_long_to_wait_when_every_token_is_spent() -> None:
    budget = EditBudget(1)
    for left in range(4, -1, -1):
        assert budget.pick(1, 0.0) == 0
        budget.answered(0, 1, 0.1, limit=5, remaining=left, reset_after=4.9)
    wait = budget.pick(1, 0.2)
    assert isinstance(wait, float)
    assert wait == pytest.approx(4.8)
    assert budget.pick(1, 5.1) == 0  # the window reset: full again


def test_budget_learns_the_limit_from_the_headers_and_keeps_the_lowest_remaining() -> None:
    budget = EditBudget(2)
    for _ in range(2):
        budget.pick(7, 0.0)
    # Answers of one window may arrive out of order: the lowest remaining is the truth.
    budget.answered(0, 7, 0.05, limit=10, remaining=8, reset_after=4.95)
    budget.answered(0, 7, 0.05, limit=10, remaining=9, reset_after=4.95)
    assert budget.available(0, 7, 0.1) == 8
    assert budget.available(0, 8, 0.1) == 10  # a fresh guild gets the learned limit
    budget.bar(1, 7)
    assert budget.available(1, 7, 0.1) == 0


# -- against the emulator --------------------------------------------------------------------------


class NoLedger:
    async def record_mutes(self, guild_id: int, user_ids: Iterable[int], game_id: int) -> None:
        return None

    async def clear_mutes(self, guild_id: int, user_ids: Iterable[int]) -> None:
        return None


HELPER = int(DEFAULT_EVERYONE | Permission.MUTE_MEMBERS)


def add_helpers(env: EmuTable, count: int, permissions: int = HELPER) -> list[str]:
    tokens = []
    for i in range(count):
        app = env.emu.create_application(f"helper{i + 1}")
        env.emu.add_bot(env.guild, app, permissions)
        tokens.append(app.token)
    return tokens


@contextlib.asynccontextmanager
async def table_in_voice(env: EmuTable, helpers: list[str], tmp_path: Path) -> AsyncIterator[VoiceReconciler]:
    """Everyone in voice, the bot (with ``helpers``) connected, and a reconciler for the guild."""
    for person in env.members:
        person.join_voice(env.voice)
    store = await Store.open(sqlite_url(tmp_path / "m.sqlite3"))
    config = parse_config({"discord": {"sync_commands": False}, "voice": {"helper_tokens": helpers}})
    bot = MafiaBot(config, store, guild_ready_timeout=0.05)
    try:
        async with running(bot, env):
            guild = bot.get_guild(env.guild.id)
            assert guild is not None

            def everyone_in_voice() -> bool:
                return all((m := guild.get_member(p.id)) is not None and m.voice for p in env.members)

            await env.emu.wait_for(everyone_in_voice)
            voice = VoiceReconciler(bot.editor, NoLedger(), guild_id=env.guild.id, game_id=1)
            voice.start()
            yield voice
            await voice.close()
    finally:
        await store.close()


async def until_handed(handed: list[int], count: int) -> None:
    """Yield to the loop (no time passes for it) until the reconciler has handed ``count`` edits to the editor."""
    for _ in range(1000):
        if len(handed) >= count:
            return
        await asyncio.sleep(0)
    raise AssertionError(f"{len(handed)} edits handed to the editor, not {count}")


def editor_of(voice: VoiceReconciler) -> DiscordMemberEditor:
    """The bot's member editor behind a reconciler, with the counts these tests read."""
    assert isinstance(voice.editor, DiscordMemberEditor)
    return voice.editor


def edits(env: EmuTable) -> list[RequestRecord]:
    return [r for r in env.emu.requests if f"{r.method} {r.route}" == MEMBER_EDIT]


async def test_a_whole_table_is_muted_without_a_429_with_three_helpers(tmp_path: Path) -> None:
    async with emulated_guild(members=12, config=LIMITS) as env:
        helpers = add_helpers(env, 3)
        async with table_in_voice(env, helpers, tmp_path) as voice:
            editor = editor_of(voice)
            voice.update({p.id: True for p in env.members}, kind="start")
            await asyncio.wait_for(voice.settled(), 10)
            assert all(env.guild.members[p.id].mute for p in env.members)
            sent = edits(env)
            assert len(sent) == 12
            assert [r.status for r in sent] == [200] * 12
            assert len({r.app_id for r in sent}) == 4  # the bot and every helper took a share
            assert editor.rate_limited == 0
            assert editor.waited == 0
            assert len(voice.stats.latencies_of("start")) == 1
        assert_no_spec_violations(env.emu)


async def test_without_helpers_the_twelfth_mute_waits_for_the_window_instead_of_hitting_429(tmp_path: Path) -> None:
    fast = EmulatorConfig(rate_limits=RateLimitConfig(member_edits=(5, 0.5)))
    async with emulated_guild(members=12, config=fast) as env, table_in_voice(env, [], tmp_path) as voice:
        editor = editor_of(voice)
        voice.update({p.id: True for p in env.members}, kind="start")
        await asyncio.wait_for(voice.settled(), 10)
        assert all(env.guild.members[p.id].mute for p in env.members)
        assert [r.status for r in edits(env)] == [200] * 12
        assert editor.waited > 0


async def until_delivered(bot: MafiaBot, env: EmuTable) -> None:
    """Wait until the bot has read every gateway event sent to it so far (the echoes of its edits among them).

    A member's message goes out on the bot's session behind them, and a session delivers in order.
    """
    person = env.members[-1]
    # discord.py's wait_for registers its listener when called, so the message cannot slip past it.
    seen = bot.wait_for("message", check=lambda m: m.author.id == person.id, timeout=10)
    person.send(env.text, "the last event")
    await seen


async def test_a_burst_of_passes_costs_at_most_two_edits_per_floor_change(tmp_path: Path) -> None:
    # The start's edits go out under windows that end at once (the headers say so), so the passes
    # begin with a fresh window for every token, in the emulator and in the bot's budget alike.
    limits = RateLimitConfig(member_edits=(5, 0.0))
    async with emulated_guild(members=12, config=EmulatorConfig(latency_ms=20, rate_limits=limits)) as env:
        helpers = add_helpers(env, 3)
        async with table_in_voice(env, helpers, tmp_path) as voice:
            editor = editor_of(voice)
            bot = editor.guilds
            assert isinstance(bot, MafiaBot)
            seats = [p.id for p in env.members[:11]]
            voice.update(dict.fromkeys(seats, True), kind="start")
            await asyncio.wait_for(voice.settled(), 10)
            # An echo read after the reconciler settled may still send an edit (on a loaded machine one
            # token was an edit short here): every echo in, then settled again.
            await until_delivered(bot, env)
            await asyncio.wait_for(voice.settled(), 10)
            now = asyncio.get_running_loop().time()
            assert [editor.budget.available(t, env.guild.id, now) for t in range(4)] == [5] * 4
            limits.member_edits = LIMITS.rate_limits.member_edits  # 5 per 5 s from here on
            handed: list[int] = []
            send = editor.set_mute

            async def spy(
                guild_id: int, user_id: int, *, mute: bool, still_wanted: Callable[[], bool] | None = None,
                nick: Rename | None = None, table: int | None = None, batch: bool = False,
            ) -> bool:
                handed.append(user_id)
                return await send(
                    guild_id, user_id, mute=mute, still_wanted=still_wanted, nick=nick, table=table, batch=batch,
                )

            editor.set_mute = spy  # type: ignore[method-assign]
            for holder in range(10):  # ten speakers pass one after another, each edit on its way before the next
                voice.update({u: i != holder for i, u in enumerate(seats)})
                # The new holder's unmute at once; the one before is muted once their unmute is answered
                # (one edit of a member on the wire at a time).
                await until_handed(handed, len(handed) + 1)
            voice.update({u: i != 10 for i, u in enumerate(seats)})
            await asyncio.wait_for(voice.settled(), 10)
            await until_delivered(bot, env)  # the gateway's echoes of the edits have arrived
            assert all(editor.voice_mute(env.guild.id, u) == env.guild.members[u].mute for u in seats)
            await asyncio.wait_for(voice.settled(), 10)
            muted = {u for u in seats if env.guild.members[u].mute}
            assert muted == set(seats[:10])
            play = [n for g, n in voice.stats.edits.items() if voice.stats.kinds[g] == "play"]
            # At most two edits per floor change in all; a holder's mute that waited for their unmute's
            # answer goes out with a later change, so one change may carry several.
            assert sum(play) <= 2 * 11
            assert editor.rate_limited == 0


async def test_check_verifies_each_helper_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISCORD_TOKEN", raising=False)
    async with emulated_guild(members=2) as env:
        good = add_helpers(env, 1)[0]
        weak = add_helpers(env, 1, permissions=int(DEFAULT_EVERYONE))[0]
        outsider = env.emu.create_application("outsider").token
        config = parse_config({
            "discord": {"token": env.token, "api_base": env.emu.api_url, "gateway_url": env.emu.gateway_url},
            "voice": {"helper_tokens": [good, weak, outsider, "1.not-a-token"]},
        })
        report = await check(config)
        text = "\n".join(report.lines())
        where = f"in server {env.guild.id}"
        assert f"[ok] helper token 1 {where}: a member with Mute Members" in text
        assert f"[missing] helper token 2 {where}: the helper lacks Mute Members" in text
        assert f"[missing] helper token 3 {where}: the helper is not in this server" in text
        assert "[refused] helper token 4: Discord refused the token" in text
        assert not report.ok
