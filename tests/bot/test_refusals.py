"""Discord refuses a side effect; the table loses no public message, and the judge hears once, with the fix.

The real bot plays whole tables on the emulator while the emulator answers as Discord does when
a server requires 2FA for moderation and the bot's owner has none (403, code 60003), when a
moderator archived the mafia's room, when the bot lost a permission, and when DMs are closed.
"""

from __future__ import annotations

from typing import Any

from engine import Phase, Team
from engine import events as ev
from mafiabot.core.runtime import Table
from mafiabot.emulator import FaultRule
from mafiabot.emulator.state import Channel
from mafiabot.host.presenter import VOTE_EMOJI, seat_label
from mafiabot.testing import Driver, Harness, Strategy, harness, muted_by_bot, open_table
from tests.harness import FAST_GLOBAL as FAST
from tests.harness import first_speech, play_to_the_end, public, refused

EVERY_TIME = 1_000_000
TWO_FACTOR = FaultRule(method="PATCH", route="/channels/{channel_id}", status=403, code=60003,
                       message="Two factor is required for this operation", times=EVERY_TIME)
MEMBER_REMOVAL = "/channels/{channel_id}/thread-members/{user_id}"


def judge_dms(h: Harness) -> list[str]:
    return [m.content for m in h.judge.dm_messages(h.env.app)]


def assert_every_public_line(h: Harness, table: Table) -> None:
    """Each morning, each death, Day 1 and the result are in the channel."""
    text = "\n".join(public(h))
    first = next(e for e in table.game.events if isinstance(e, ev.DayStarted) and e.day == 1)
    assert f"Day 1. {seat_label(table, first.opener)} opens the day." in text
    nights = [e for e in table.game.events if isinstance(e, ev.NightResolved)]
    for night in nights:
        assert f"Day {night.night + 1}. Morning." in text
        for seat in night.killed:
            assert f"Tonight {seat_label(table, seat)} was killed." in text
    assert any(line.startswith("🏆") for line in text.splitlines())


async def finish_cleanly(h: Harness, table: Table, driver: Driver) -> None:
    """Play to the end; the game is over, stored as finished, and nobody is left muted."""
    await play_to_the_end(table, driver)
    assert table.game.outcome() is not None
    stored = await h.store.get_game(table.id)
    assert stored.status == "finished"
    assert muted_by_bot(h, table) == []


def removals(h: Harness, user: int) -> list[int]:
    """Where the requests that take ``user`` out of a thread are in the emulator's log."""
    return [i for i, r in enumerate(h.emu.requests)
            if r.method == "DELETE" and r.route == MEMBER_REMOVAL and r.path.endswith(f"/{user}")]


async def test_a_whole_game_with_every_room_lock_refused_for_2fa() -> None:
    async with harness(10, emulator_config=FAST) as h:
        h.emu.inject_fault(TWO_FACTOR)
        table = await open_table(h, "classic", 10)
        await finish_cleanly(h, table, Driver(h, table, Strategy(3)))
        assert_every_public_line(h, table)
        patches = refused(h, "/channels/{channel_id}")
        assert len(patches) >= 3  # the first lock, a night's unlock, the archive at the end
        told = [dm for dm in judge_dms(h) if "60003" in dm]
        assert len(told) == 1
        assert len(judge_dms(h)) == 1


async def test_a_whole_game_in_a_2fa_server_whose_bot_owner_has_none() -> None:
    async with harness(10, emulator_config=FAST) as h:
        h.env.app.owner_mfa = False
        h.emu.require_mfa(h.env.guild)
        table = await open_table(h, "classic", 10)
        await finish_cleanly(h, table, Driver(h, table, Strategy(3)))
        assert_every_public_line(h, table)
        patches = refused(h, "/channels/{channel_id}")
        assert len(patches) >= 3  # the first lock, a night's unlock, the archive at the end
        told = [dm for dm in judge_dms(h) if "60003" in dm]
        assert len(told) == 1
        assert "enables 2FA" in told[0]
        assert "Require 2FA for moderator actions" in told[0]
        assert f"<#{h.env.text.id}>" in told[0]


class TwoOnDayOne(Strategy):
    """Day 1: #1 nominates #4 and #2 nominates #5, so there is a vote; later days as the seed says."""

    def nominate(self, table: Table, seat: int) -> int | None:
        state = table.game.state
        if state.day == 1:
            return 3 + seat if seat in (1, 2) and len(state.nominees) < 2 else None
        return super().nominate(table, seat)


async def day_one(h: Harness, table: Table, driver: Driver) -> None:
    """Everyone looks at their card; wait for the first speech (night 0 runs out on its own)."""
    await driver.look_at_cards()
    await first_speech(h, table)


def seats_by_team(table: Table) -> tuple[int, int]:
    state = table.game.state
    assert state.floor is not None
    black = next(s for s in state.alive_seats() if state.role(s).team is Team.BLACK and state.floor.seat != s)
    red = next(s for s in state.alive_seats() if state.role(s).team is Team.RED and state.floor.seat != s)
    return black, red


def request_index(h: Harness, predicate: Any) -> int:
    return next(i for i, r in enumerate(h.emu.requests) if predicate(r))


def posted(text: str) -> Any:
    return lambda r: r.method == "POST" and isinstance(r.body, dict) and text in str(r.body.get("content", ""))


async def disqualify(h: Harness, table: Table, seat: int) -> str:
    text = f"{seat_label(table, seat)} is disqualified by the judge."
    reply = await h.judge.run_command(h.env.text, "mafia remove", seat=seat, reason="phone at the table")
    assert reply.ephemeral
    await h.wait(lambda: any(text in c for c in public(h)))
    return text


async def test_a_departure_is_announced_before_its_room_change_and_a_refused_removal_costs_nothing() -> None:
    async with harness(10, emulator_config=FAST, time_scale=0.05) as h:
        h.emu.inject_fault(FaultRule(method="DELETE", route=MEMBER_REMOVAL, status=403, code=50013,
                                     message="Missing Permissions", times=EVERY_TIME))
        table = await open_table(h, "classic", 10)
        driver = Driver(h, table, Strategy(6))
        await day_one(h, table, driver)
        black, red = seats_by_team(table)
        for seat in (black, red):
            text = await disqualify(h, table, seat)
            user = table.user_at(seat)
            announced = request_index(h, posted(text))
            if seat == black:
                await h.wait(lambda: removals(h, user))  # noqa: B023 -- awaited before the loop moves on
            room = removals(h, user)
            assert bool(room) == (seat == black)
            assert all(i > announced for i in room), (seat, announced, room)
        await finish_cleanly(h, table, driver)
        assert_every_public_line(h, table)
        told = [dm for dm in judge_dms(h) if "Manage Threads" in dm]
        assert len(told) == 1
        assert len(judge_dms(h)) == 1


def keep_archived_by_day(h: Harness, table: Table) -> None:
    """A moderator who archives the mafia's room whenever it is open by day."""

    def archive() -> None:
        thread_id = table.meta.thread
        thread: Channel | None = h.emu.world.channels.get(int(thread_id)) if thread_id else None
        if thread is not None and not thread.archived and table.game.state.phase is not Phase.NIGHT \
                and not table.game.over:
            thread.archived = True
            h.emu.emit_channel("THREAD_UPDATE", thread)

    h.on_change(archive)


async def test_a_whole_game_with_the_room_archived_by_day() -> None:
    async with harness(10, emulator_config=FAST, time_scale=0.05) as h:
        table = await open_table(h, "classic", 10)
        driver = Driver(h, table, Strategy(6))
        await day_one(h, table, driver)
        keep_archived_by_day(h, table)
        black, _ = seats_by_team(table)
        await disqualify(h, table, black)
        await h.wait(lambda: refused(h, MEMBER_REMOVAL, "DELETE"))
        await finish_cleanly(h, table, driver)
        assert_every_public_line(h, table)
        told = [dm for dm in judge_dms(h) if "50083" in dm]
        assert len(told) == 1
        assert len(judge_dms(h)) == 1


async def test_closed_dms_cost_nothing_and_the_judge_is_told_in_the_channel_once() -> None:
    async with harness(10, emulator_config=FAST, time_scale=0.1) as h:
        for person in [*h.players, h.judge]:
            person.close_dms()
        table = await open_table(h, "classic", 10)
        driver = Driver(h, table, TwoOnDayOne(2))
        await driver.look_at_cards()
        while table.game.state.phase is not Phase.VOTING:
            assert table.game.state.day <= 1
            await driver.step()
        message = await h.wait(lambda: driver.vote_message(4))
        for person in (h.judge, h.user(table.user_at(1))):  # not seated; then the first hand of #1 counts
            person.react(message, VOTE_EMOJI)
        await h.wait(lambda: h.judge.id not in message.reactions.get(VOTE_EMOJI, []))
        notice = await h.wait(lambda: [c for c in public(h) if c.startswith("To the judge:")])
        assert "50007" in notice[0]
        await finish_cleanly(h, table, driver)
        assert_every_public_line(h, table)
        notices = [c for c in public(h) if c.startswith("To the judge:")]
        assert len(notices) == 1


async def test_a_table_whose_room_cannot_be_opened_is_cancelled_with_the_reason() -> None:
    async with harness(10, emulator_config=FAST) as h:
        h.emu.inject_fault(FaultRule(method="POST", route="/channels/{channel_id}/threads", status=403,
                                     code=50013, message="Missing Permissions"))
        table = await open_table(h, "classic", 10)
        await h.wait(table.done.is_set, timeout=60)
        text = next(c for c in public(h) if c.startswith("The mafia's room could not be opened"))
        assert "Create Private Threads" in text
        assert "cancelled" in text
        assert any("abandoned" in c for c in public(h))
        stored = await h.store.get_game(table.id)
        assert stored.status == "abandoned"
        assert muted_by_bot(h, table) == []
        assert table.meta.thread is None


def thread_edits(h: Harness, thread_id: int) -> list[tuple[dict[str, Any], int]]:
    """The bot's edits of the mafia's room, in order: what each asked, and the status Discord answered."""
    path = f"/channels/{thread_id}"
    return [(dict(r.body), r.status) for r in h.emu.requests
            if r.method == "PATCH" and r.path.rstrip("/").endswith(path) and isinstance(r.body, dict)]


async def test_a_refused_lock_is_tried_again_at_the_next_day_and_no_unlock_goes_to_an_open_room() -> None:
    """The room is reconciled: Discord kept it open, so the night sends nothing, and the next day locks it."""
    async with harness(10, emulator_config=FAST) as h:
        h.emu.inject_fault(FaultRule(method="PATCH", route="/channels/{channel_id}", status=403, code=60003,
                                     message="Two factor is required for this operation", times=1))
        table = await open_table(h, "classic", 10)
        await finish_cleanly(h, table, Driver(h, table, Strategy(3)))
        thread = int(table.meta.thread or 0)
        edits = thread_edits(h, thread)
        assert edits[0] == ({"archived": False, "locked": True}, 403)  # Day 1's lock, refused
        assert edits[1][0]["locked"] is True, edits  # not Night 1's unlock: the room was open all along
        assert all(status < 400 for _, status in edits[1:]), edits
        assert h.emu.world.channels[thread].locked
        assert len([dm for dm in judge_dms(h) if "60003" in dm]) == 1


async def test_a_refused_removal_from_the_room_is_sent_again_with_the_next_change_of_the_room() -> None:
    async with harness(10, emulator_config=FAST, time_scale=0.05) as h:
        h.emu.inject_fault(FaultRule(method="DELETE", route=MEMBER_REMOVAL, status=403, code=50013,
                                     message="Missing Permissions", times=1))
        table = await open_table(h, "classic", 10)
        driver = Driver(h, table, Strategy(6))
        await day_one(h, table, driver)
        black, _ = seats_by_team(table)
        user = table.user_at(black)
        room = h.emu.world.channels[int(table.meta.thread or 0)]
        await disqualify(h, table, black)
        await h.wait(lambda: refused(h, MEMBER_REMOVAL, "DELETE"))
        assert user in room.thread_members
        await finish_cleanly(h, table, driver)  # the night unlocks the room: the removal goes with it
        assert user not in room.thread_members
        assert len(removals(h, user)) == 2
        assert len([dm for dm in judge_dms(h) if "Manage Threads" in dm]) == 1
