"""The bot against an emulator that refuses what Discord refuses: the requests it makes are ones Discord takes.

Each test plays a real table and provokes a situation where the bot used to send a request Discord
answers with an error: a custom-emoji reaction removed by its chat form, an edit of the mafia's
thread after Discord archived it, a server that requires 2FA from a bot whose owner has none, and
rate-limit headers that lie.
"""

from __future__ import annotations

import discord

from engine import Phase
from mafiabot.emulator import EmulatorConfig, FaultRule, RateLimitConfig
from mafiabot.host.presenter import VOTE_EMOJI
from mafiabot.testing import Driver, Strategy, harness, muted_by_bot, open_table
from tests.harness import FAST_GLOBAL as FAST
from tests.harness import TwoNominees, floor_seat, play_until, refusals, skip_night_zero

CUSTOM = "blob:112233445566778899"


async def test_a_custom_emoji_on_a_vote_is_removed_and_explained() -> None:
    async with harness(10, emulator_config=FAST, time_scale=0.2) as h:
        table = await open_table(h, "classic", 10)
        driver = Driver(h, table, TwoNominees(1))
        await driver.look_at_cards()
        await play_until(driver, table, lambda: table.game.state.phase is Phase.VOTING)
        vote = table.game.state.vote
        assert vote is not None
        message = await h.wait(lambda: driver.vote_message(vote.candidates[0]))
        voter = h.user(table.user_at(1))
        voter.react(message, CUSTOM)
        await h.wait(lambda: CUSTOM not in message.reactions)
        dms = await h.wait(lambda: [m for m in voter.dm_messages(h.env.app) if VOTE_EMOJI in m.content])
        assert "only" in dms[-1].content
        assert 1 not in vote.votes
        assert refusals(h, "/channels/{channel_id}/messages/{message_id}/reactions/{emoji_name}/{user_id}") == []


async def test_the_mafia_thread_archived_by_discord_is_reopened_at_night() -> None:
    async with harness(10, emulator_config=FAST) as h:
        table = await open_table(h, "classic", 10)
        driver = Driver(h, table, Strategy(4))
        await driver.look_at_cards()
        await play_until(driver, table, lambda: table.game.state.phase is Phase.SPEECHES)
        thread = h.emu.world.channels[int(table.meta.thread or 0)]
        await h.wait(lambda: thread.locked)
        # A quiet day: Discord archives the thread for inactivity (and discord.py forgets it).
        h.emu.auto_archive(thread)
        await h.wait(lambda: h.bot.get_channel(thread.id) is None)
        await play_until(driver, table, lambda: table.game.state.phase is Phase.NIGHT and table.game.state.day >= 1)
        night = await h.wait(lambda: [m for m in h.emu.messages(thread) if m.content.startswith("Night 1")])
        assert night
        assert not thread.archived
        assert not thread.locked
        assert refusals(h, "/channels/{channel_id}") == []
        assert refusals(h, "/channels/{channel_id}/messages") == []
        await driver.play()
        await table.done.wait()
        assert refusals(h, "/channels/{channel_id}") == []
        assert thread.archived
        assert thread.locked


async def test_in_a_2fa_server_a_bot_whose_owner_lacks_2fa_still_explains_a_vote_that_does_not_count() -> None:
    async with harness(10, emulator_config=FAST, time_scale=0.2) as h:
        table = await open_table(h, "classic", 10)
        driver = Driver(h, table, TwoNominees(1))
        await driver.look_at_cards()
        await play_until(driver, table, lambda: table.game.state.phase is Phase.VOTING)
        vote = table.game.state.vote
        assert vote is not None
        message = await h.wait(lambda: driver.vote_message(vote.candidates[0]))
        # The server's owner turns on server-wide 2FA mid-game; the bot's owner has none.
        h.env.app.owner_mfa = False
        h.emu.require_mfa(h.env.guild)
        await h.wait(lambda: (g := h.bot.get_guild(h.env.guild.id)) is not None
                     and g.mfa_level == discord.MFALevel.require_2fa)
        h.judge.react(message, VOTE_EMOJI)
        # The judge hears both: why the hand does not count, and (once) why the bot could not remove it.
        dms = await h.wait(lambda: [m for m in h.judge.dm_messages(h.env.app) if "not seated" in m.content])
        assert dms
        assert sum("60003" in m.content for m in h.judge.dm_messages(h.env.app)) == 1
        # Removing another's reaction needs MANAGE_MESSAGES, void here: Discord keeps the reaction.
        assert h.judge.id in message.reactions[VOTE_EMOJI]
        assert refusals(h, "/channels/{channel_id}/messages/{message_id}/reactions/{emoji_name}/{user_id}") == [403]
        assert h.judge.id not in {table.user_at(s) for s in vote.votes}


async def test_lying_rate_limit_headers_on_member_edits_cost_429s_but_the_game_ends_with_nobody_muted() -> None:
    lying = EmulatorConfig(
        rate_limits=RateLimitConfig(member_edits=(5, 0.25), reactions=(100, 1.0), global_limit=(1000, 1.0))
    )
    async with harness(10, emulator_config=lying) as h:
        route = "/guilds/{guild_id}/members/{user_id}"
        # Every answer claims the bucket has room, and names a bucket shared with no other route.
        h.emu.inject_fault(
            FaultRule(
                method="PATCH", route=route, headers={"X-RateLimit-Remaining": "5", "X-RateLimit-Bucket": "x"},
                times=100_000,
            )
        )
        table = await open_table(h, "classic", 10)
        await Driver(h, table, Strategy(6)).play()
        await table.done.wait()
        assert muted_by_bot(h, table) == []
        statuses = [r.status for r in h.emu.requests if r.route == route]
        # The lies cost 429s, each met by waiting for the window, never a storm of retries.
        assert 0 < statuses.count(429) <= statuses.count(200)


async def test_a_mafioso_removed_while_discord_archived_the_room_leaves_it_and_one_taken_back_returns() -> None:
    async with harness(10, emulator_config=FAST, time_scale=1.0) as h:
        table = await open_table(h, "classic", 10)
        await skip_night_zero(h, table)
        speaker = floor_seat(table)
        black = next(s for s in table.black_seats() if s != speaker)
        await h.wait(lambda: table.meta.thread is not None)
        room = h.emu.world.channels[table.meta.thread or 0]
        user = table.user_at(black)
        await h.wait(lambda: user in room.thread_members and room.locked)
        # A quiet day: Discord archives the room; a member change now needs it unarchived first (50083).
        h.emu.auto_archive(room)
        await h.wait(lambda: h.bot.get_channel(room.id) is None)
        reply = await h.judge.run_command(h.env.text, "mafia remove", seat=black, reason="phone")
        assert reply.ephemeral, reply.content
        await h.wait(lambda: user not in room.thread_members)
        h.emu.auto_archive(room)
        await h.wait(lambda: h.bot.get_channel(room.id) is None)
        reply = await h.judge.run_command(h.env.text, "mafia judge undo")
        assert reply.content.startswith("Taken back"), reply.content
        await h.wait(lambda: user in room.thread_members)
        member_routes = "/channels/{channel_id}/thread-members/{user_id}"
        assert refusals(h, member_routes) == []
        assert room.locked  # still the day: the room stays shut while it is open again
