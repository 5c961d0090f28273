"""Fair-play alerts, end to end: the real bot on the emulator tells the judge, and only the judge.

A seated player's camera or screen share or a line in the table's chat at night, a mute lifted by a
moderator, a player deafening themselves during a speech: each gives the judge one direct message
naming the seat and the time, once per player, kind and phase, and nothing public.
"""

from __future__ import annotations

import re

from engine import Phase
from mafiabot.core.runtime import Table
from mafiabot.emulator.users import ScriptedUser
from mafiabot.testing import Driver, Harness, Strategy, harness, open_table
from tests.harness import FAST, floor_seat, play_until, public, skip_night_zero

SLOW_CLOCK = 0.5
"""Night zero lasts 30 s: long enough for each test's steps, with no timer running out meanwhile."""


async def at_night_zero(h: Harness, table: Table) -> None:
    """Wait for night zero and for the game's opening post to be on Discord, so a test's "before" holds it.

    The phase turns before the opening is queued, and the post can trail other public messages.
    """
    await h.wait(lambda: table.game.state.phase is Phase.NIGHT_ZERO)
    await h.wait(lambda: any(m.startswith("The game begins") for m in public(h)))
    await h.bot.presenter.drained(table.id)


def alerts(h: Harness, person: ScriptedUser) -> list[str]:
    """The fair-play alerts ``person`` got from the bot in direct messages."""
    return [m.content for m in person.dm_messages(h.env.app) if m.content.startswith("Fair play")]


async def alerted(h: Harness, count: int, judge: ScriptedUser | None = None) -> list[str]:
    """Wait until the judge (or ``judge``) has ``count`` alerts; all of them."""
    who = judge or h.judge
    return list(await h.wait(lambda: found if len(found := alerts(h, who)) >= count else None))


def nobody_else_told(h: Harness, channel_before: list[str], watcher: ScriptedUser | None = None) -> None:
    """No alert reached anyone but the judge, and the table's channel got nothing while it happened.

    ``watcher``: a spectator in the table's voice channel, who sees what the public sees.
    """
    assert public(h) == channel_before
    others = [p for p in h.players if p.id != h.judge.id] + ([watcher] if watcher else [])
    assert all(not alerts(h, p) for p in others)
    assert not [m for m in h.emu.messages(h.env.text) if "Fair play" in m.content]
    for person in others:
        assert not [m for m in person.visible_messages(h.env.text) if "Fair play" in m.content]


async def test_a_camera_at_night_gives_the_judge_one_private_alert_and_a_second_one_none() -> None:
    async with harness(6, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        table = await open_table(h, "classic", 6)
        await at_night_zero(h, table)
        spectator = h.emu.create_scripted_user("spectator", h.env.guild)
        spectator.join_voice(h.env.voice)
        before = public(h)
        player = h.user(table.user_at(4))
        player.set_camera(h.env.guild)
        (alert,) = await alerted(h, 1)
        assert "#4" in alert
        assert player.name in alert
        assert "night 0" in alert
        assert "camera" in alert
        player.set_camera(h.env.guild, on=False)
        player.set_camera(h.env.guild)  # the same night: no second alert
        h.user(table.user_at(5)).set_stream(h.env.guild)  # a later alert, to know the bot has seen the toggles
        told = await alerted(h, 2)
        assert len(told) == 2, told
        assert "#5" in told[1]
        assert "screen" in told[1]
        assert table.game.state.phase is Phase.NIGHT_ZERO
        nobody_else_told(h, before, spectator)


async def test_a_line_in_the_tables_chat_at_night_gives_one_alert_and_by_day_none() -> None:
    async with harness(6, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        table = await open_table(h, "classic", 6)
        await at_night_zero(h, table)
        writer = h.user(table.user_at(2))
        writer.send(h.env.text, "psst")
        writer.send(h.env.text, "psst again")
        (alert,) = await alerted(h, 1)
        assert "#2" in alert
        assert "chat" in alert
        assert "night 0" in alert
        spectator = h.emu.create_scripted_user("spectator", h.env.guild)
        spectator.send(h.env.text, "not seated: not the judge's business")
        await skip_night_zero(h, table)
        writer.send(h.env.text, "by day the table sees it anyway")
        h.user(table.user_at(3)).set_camera(h.env.guild)  # by day: no alert either
        floor = table.game.state.floor
        listener = next(s for s in range(1, 7) if floor is None or s != floor.seat)
        await h.wait(lambda: h.env.guild.members[table.user_at(listener)].mute)
        moderator_lifts(h, table.user_at(listener))  # a later alert, to know the bot has seen the rest
        told = await alerted(h, 2)
        assert len(told) == 2, told
        assert f"#{listener}" in told[1]
        assert "day 1" in told[1]
        assert not [p for p in h.players if p.id != h.judge.id and alerts(h, p)]
        assert not [m for m in public(h) if "Fair play" in m]


def moderator_lifts(h: Harness, user_id: int) -> None:
    """A moderator lifts a member's server mute, as Discord reports it to the bot."""
    h.env.guild.members[user_id].mute = False
    h.emu.emit_voice_state(h.env.guild, user_id)


async def test_a_mute_lifted_by_a_moderator_is_made_again_with_one_alert_per_phase() -> None:
    async with harness(6, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        table = await open_table(h, "classic", 6)
        await at_night_zero(h, table)
        victim = table.user_at(3)
        await h.wait(lambda: h.env.guild.members[victim].mute)
        before = public(h)
        moderator_lifts(h, victim)
        await h.wait(lambda: h.env.guild.members[victim].mute)  # muted again
        (alert,) = await alerted(h, 1)
        assert "#3" in alert
        assert "muted them again" in alert
        assert "night 0" in alert
        moderator_lifts(h, victim)
        await h.wait(lambda: h.env.guild.members[victim].mute)
        h.user(table.user_at(6)).set_camera(h.env.guild)
        told = await alerted(h, 2)
        assert len(told) == 2, told
        assert "#6" in told[1]
        nobody_else_told(h, before)


async def test_deafening_during_a_speech_is_told_and_at_night_it_is_not() -> None:
    async with harness(6, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        table = await open_table(h, "classic", 6)
        await at_night_zero(h, table)
        sleeper = h.user(table.user_at(5))
        sleeper.set_self_deaf(h.env.guild)  # at night nobody speaks
        sleeper.set_self_deaf(h.env.guild, deaf=False)
        await skip_night_zero(h, table)
        speaker = table.game.state.floor
        assert speaker is not None
        listener = next(s for s in range(1, 7) if s != speaker.seat)
        h.user(table.user_at(listener)).set_self_deaf(h.env.guild)
        (alert,) = await alerted(h, 1)
        assert f"#{listener}" in alert
        assert "deafened" in alert
        assert "day 1" in alert
        assert not [m for m in public(h) if "Fair play" in m]


async def test_a_judge_who_takes_no_dms_gets_no_public_alert_during_the_game() -> None:
    async with harness(6, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        h.judge.close_dms()
        table = await open_table(h, "classic", 6)
        await at_night_zero(h, table)
        before = public(h)
        h.user(table.user_at(2)).set_camera(h.env.guild)
        await h.wait(lambda: "dms_closed" in table.meta.refused)
        assert table.game.state.phase is Phase.NIGHT_ZERO
        assert public(h) == before
        assert not alerts(h, h.judge)


def seats_named(alert: str) -> list[int]:
    """The seat numbers an alert names, leaving out the mentions of channels in it."""
    return [int(n) for n in re.findall(r"(?<![<\d])#(\d+)\b", alert)]


async def test_a_camera_and_a_screen_share_already_on_at_the_start_are_told_once_as_night_zero_falls() -> None:
    async with harness(6, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        watcher, sharer = h.players[1], h.players[4]
        for person in (watcher, sharer):
            person.join_voice(h.env.voice)
        watcher.set_camera(h.env.guild)  # before the deal nothing matters: no voice update comes after it
        sharer.set_stream(h.env.guild)
        table = await open_table(h, "classic", 6)
        await at_night_zero(h, table)
        told = await alerted(h, 2)
        camera = next(a for a in told if "camera" in a)
        screen = next(a for a in told if "screen" in a)
        # The seat as the alert names the player ("#3 name"), not the channel's mention ("<#...>").
        assert seats_named(camera) == [table.seat_of(watcher.id)]
        assert seats_named(screen) == [table.seat_of(sharer.id)]
        assert all("night 0" in a for a in told)
        h.user(table.user_at(6 if table.seat_of(watcher.id) != 6 else 5)).send(h.env.text, "psst")
        told = await alerted(h, 3)  # a later alert, to know nothing more came of the cameras meanwhile
        assert len(told) == 3, told
        assert "chat" in told[2]
        assert not [p for p in h.players if p.id != h.judge.id and alerts(h, p)]
        assert not [m for m in public(h) if "Fair play" in m]


async def test_a_camera_turned_on_by_day_and_left_on_is_told_when_night_falls() -> None:
    async with harness(6, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        table = await open_table(h, "classic", 6)
        await skip_night_zero(h, table)
        state = table.game.state
        seat = next(s for s in range(1, 7) if s != floor_seat(table))
        h.user(table.user_at(seat)).set_camera(h.env.guild)  # by day: the table sees it, no alert
        driver = Driver(h, table, Strategy(5))
        await play_until(driver, table, lambda: state.phase is Phase.NIGHT)
        (alert,) = await alerted(h, 1)
        assert f"#{seat}" in alert
        assert "camera" in alert
        assert f"night {state.night}" in alert
        night = state.night
        # each step has the camera looked at again: no more alerts
        for step in ("mafia clock pause", "mafia clock resume"):
            await h.judge.run_command(h.env.text, step)
        await h.bot.presenter.drained(table.id)
        assert (state.phase, state.night) == (Phase.NIGHT, night)
        writer = next(s for s in range(1, 7) if s != seat and state.is_alive(s))
        h.user(table.user_at(writer)).send(h.env.text, "psst")  # a later alert, to know the bot has caught up
        told = await alerted(h, 2)
        assert len(told) == 2, told
        assert f"#{writer}" in told[1]
        assert "chat" in told[1]
        assert not [m for m in public(h) if "Fair play" in m]
        await h.judge.run_command(h.env.text, "mafia end")
        await h.wait(table.done.is_set)
        assert len(alerts(h, h.judge)) == 2


async def test_a_side_judge_gets_the_camera_alert_and_the_lifted_mute_too() -> None:
    async with harness(6, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        deputy = h.emu.create_scripted_user("deputy", h.env.guild)
        deputy.join_voice(h.env.voice)
        table = await open_table(h, "classic", 6)
        await at_night_zero(h, table)
        added = await h.judge.run_command(h.env.text, "mafia judge add", member=deputy)
        assert not added.ephemeral, added.content
        before = public(h)
        h.user(table.user_at(2)).set_camera(h.env.guild)
        (alert,) = await alerted(h, 1, deputy)
        assert "#2" in alert
        assert "camera" in alert
        assert alerts(h, h.judge) == [alert]
        victim = table.user_at(3)
        await h.wait(lambda: h.env.guild.members[victim].mute)
        moderator_lifts(h, victim)
        told = await alerted(h, 2, deputy)
        assert "#3" in told[1]
        assert "muted them again" in told[1]
        await alerted(h, 2)
        nobody_else_told(h, before)
