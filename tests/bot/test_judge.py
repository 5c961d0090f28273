"""The judge's slash commands, end to end: the real bot on the emulator, scripted people.

Each judge command works for the judge (and for whoever the judge hands the table to), is refused
for anyone else with a clear private answer, and drives the engine: fouls have their consequences
in a real game, and a pause stops every timer while resume goes on with the time that was left.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest

from engine import Cause, Phase, Result
from engine import events as ev
from mafiabot.core.clock import ManualClock
from mafiabot.emulator.testing import assert_no_spec_violations
from mafiabot.host.i18n import t
from mafiabot.testing import Harness, harness, open_table
from tests.harness import FAST, public, skip_night_zero

SLOW_CLOCK = 0.5
"""Timers at half length: no speech runs out while a test issues its commands; ``skip`` moves on."""

JUDGE_COMMANDS: list[tuple[str, dict[str, Any]]] = [
    ("mafia foul", {"seat": 2}),
    ("mafia foul", {"seat": 2, "oath": True}),
    ("mafia unfoul", {"seat": 2}),
    ("mafia remove", {"seat": 2, "reason": "insults"}),
    ("mafia clock pause", {}),
    ("mafia clock resume", {}),
    ("mafia skip", {}),
    ("mafia clock extend", {"seconds": 20}),
    ("mafia nominate", {"seat": 2}),
    ("mafia draw", {}),
    ("mafia end", {}),
    ("mafia points", {"seat": 2, "value": "0.5", "reason": "best speech"}),
]


async def said(h: Harness, text: str) -> str:
    """Wait for a public message containing ``text``."""
    return str(await h.wait(lambda: next((c for c in public(h) if text in c), None)))


async def judge_says(h: Harness, name: str, **options: Any) -> str:
    """Run a judge command as the judge; return the private confirmation."""
    reply = await h.judge.run_command(h.env.text, name, **options)
    assert reply.ephemeral, reply.content
    return reply.content


async def test_judge_commands_are_refused_for_players_and_where_there_is_no_table() -> None:
    async with harness(6, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        table = await open_table(h, "classic", 6)
        await h.wait(lambda: table.game.state.phase is Phase.NIGHT_ZERO)
        player = h.players[0]
        before = len(table.game.events)
        for name, options in [*JUDGE_COMMANDS, ("mafia judge pass", {"member": h.players[1]})]:
            reply = await player.run_command(h.env.text, name, **options)
            assert reply.ephemeral, name
            assert reply.content == "Only the table's judge may do that.", (name, reply.content)
        assert len(table.game.events) == before
        assert table.judge_id == h.judge.id
        assert not table.game.state.paused
        elsewhere = h.emu.create_channel(h.env.guild, "lounge")
        await asyncio.wait_for(h.bot.wait_for("guild_channel_create", check=lambda c: c.id == elsewhere.id), 5)
        reply = await h.judge.run_command(elsewhere, "mafia foul", seat=1)
        assert reply.ephemeral
        assert reply.content == "There is no table in this channel."


async def test_each_judge_command_works_for_the_judge() -> None:
    async with harness(10, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        table = await open_table(h, "classic", 10)
        await skip_night_zero(h, table)
        state = table.game.state
        speaker = state.floor.seat if state.floor else 0

        assert "Foul to #3" in await judge_says(h, "mafia foul", seat=3, reason="spoke out of turn")
        assert "1 foul" in await said(h, "Foul to #3")
        await judge_says(h, "mafia unfoul", seat=3)
        await said(h, "takes back a foul of #3")
        assert state.foul_count(3) == 0
        await judge_says(h, "mafia foul", seat=4, oath=True)
        await said(h, "An oath: foul to #4")
        await judge_says(h, "mafia points", seat=5, value="0.5", reason="fair play")
        await said(h, "Extra points for #5")
        assert state.extra_points[-1][:2] == (5, "0.5")
        refused = await h.judge.run_command(h.env.text, "mafia points", seat=5, value="lots", reason="x")
        assert refused.ephemeral
        assert "Points must be a number" in refused.content

        target = 7 if speaker != 7 else 8
        await judge_says(h, "mafia nominate", seat=target)
        await said(h, "Accepted")
        assert state.nominees == [target]

        before = table.deadline()
        assert before is not None
        reply = await h.judge.run_command(h.env.text, "mafia clock extend", seconds=20)
        assert not reply.ephemeral
        assert "adds 20 seconds" in reply.content
        extended = table.deadline()
        assert extended is not None
        assert extended > before

        await judge_says(h, "mafia skip")
        await h.wait(lambda: state.floor is not None and state.floor.seat != speaker)

        await judge_says(h, "mafia remove", seat=9, reason="phone at the table")
        await said(h, "is disqualified by the judge")
        removed = [e for e in table.game.events if isinstance(e, ev.PlayerRemoved)]
        assert removed[-1].seat == 9
        assert removed[-1].cause is Cause.DISQUALIFIED
        assert removed[-1].reason == "phone at the table"

        # Hand the table over: the old judge is refused, the new one judges, and it is stored.
        deputy = h.emu.create_scripted_user("deputy", h.env.guild)
        reply = await h.judge.run_command(h.env.text, "mafia judge pass", member=deputy)
        assert not reply.ephemeral
        assert f"<@{deputy.id}>" in reply.content
        assert table.judge_id == deputy.id
        stored = await h.store.get_game(table.id)
        assert stored.discord["judge"] == deputy.id
        # A restarted bot rebuilds the table from the store with the new judge.
        restarted = h.bot.build_tables()
        await restarted.resume(stored)
        copy = restarted.tables[table.id]
        copy.stop()
        await copy.voice.close()
        assert copy.judge_id == deputy.id
        refused = await h.judge.run_command(h.env.text, "mafia foul", seat=3)
        assert refused.ephemeral
        assert refused.content == "Only the table's judge may do that."
        seated = await deputy.run_command(h.env.text, "mafia judge pass", member=h.players[0])
        assert seated.ephemeral
        assert "seated player cannot be the judge" in seated.content

        reply = await deputy.run_command(h.env.text, "mafia draw")
        assert reply.ephemeral
        await table.done.wait()
        outcome = table.game.outcome()
        assert outcome is not None
        assert outcome.result is Result.DRAW
        await said(h, "The game ends in a draw.")
        after = await deputy.run_command(h.env.text, "mafia foul", seat=3)
        assert after.ephemeral
        assert after.content == "There is no table in this channel."
        assert_no_spec_violations(h.emu)


async def test_a_member_with_the_judge_role_or_manage_server_may_judge() -> None:
    async with harness(6, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        table = await open_table(h, "classic", 6)
        await h.wait(lambda: table.game.state.phase is Phase.NIGHT_ZERO)
        referees = h.emu.create_role(h.env.guild, "referees")
        referee = h.emu.create_scripted_user("referee", h.env.guild, roles=[referees])
        refused = await referee.run_command(h.env.text, "mafia foul", seat=1)
        assert refused.content == "Only the table's judge may do that."
        settings = await h.store.get_settings(h.env.guild.id)
        await h.store.save_settings(dataclasses.replace(settings, judge_role_id=referees.id))
        reply = await referee.run_command(h.env.text, "mafia foul", seat=1)
        assert reply.ephemeral
        assert "Foul to #1" in reply.content
        assert table.game.state.foul_count(1) == 1
        admins = h.emu.create_role(h.env.guild, "admins", 1 << 5)  # MANAGE_GUILD
        admin = h.emu.create_scripted_user("admin", h.env.guild, roles=[admins])
        reply = await admin.run_command(h.env.text, "mafia unfoul", seat=1)
        assert reply.ephemeral
        assert "taken back" in reply.content
        assert table.game.state.foul_count(1) == 0


async def test_fouls_have_their_consequences_in_a_classic_game() -> None:
    async with harness(10, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        table = await open_table(h, "classic", 10)
        await skip_night_zero(h, table)
        state = table.game.state
        assert state.floor is not None
        assert state.floor.seat == 1
        # Three fouls before his speech: #3 loses today's speech.
        for _ in range(3):
            await judge_says(h, "mafia foul", seat=3)
        await said(h, "3 fouls")
        await said(h, "misses the speech on day 1")
        fouls = await h.players[5].run_command(h.env.text, "mafia status")
        assert fouls.ephemeral
        assert "#3" in fouls.content
        assert "critical" in fouls.content
        await judge_says(h, "mafia skip")
        await h.wait(lambda: state.floor is not None and state.floor.seat == 2)
        await judge_says(h, "mafia skip")
        await h.wait(lambda: state.floor is not None and state.floor.seat == 4)
        assert any(isinstance(e, ev.TurnSkipped) and e.seat == 3 and e.reason == "fouls" for e in table.game.events)
        await said(h, "#3")
        # The fourth foul removes him.
        await judge_says(h, "mafia foul", seat=3)
        await said(h, "four fouls")
        assert state.removed(3)
        assert (departure := state.departure(3)) is not None
        assert departure.cause is Cause.FOULS
        # A second oath removes at once.
        await judge_says(h, "mafia foul", seat=6, oath=True)
        await judge_says(h, "mafia foul", seat=6, oath=True)
        await said(h, "a second oath")
        assert state.removed(6)
        assert (departure := state.departure(6)) is not None
        assert departure.cause is Cause.OATHS
        refused = await h.judge.run_command(h.env.text, "mafia foul", seat=6)
        assert refused.ephemeral
        assert "removed from the game" in refused.content
        fouls = await h.players[0].run_command(h.env.text, "mafia status")
        assert "(removed)" in fouls.content
        assert_no_spec_violations(h.emu)


async def test_critical_fouls_are_named_in_the_morning_in_a_georgian_game() -> None:
    async with harness(11, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        table = await open_table(h, "georgian", 11)
        await h.wait(lambda: table.game.state.phase is Phase.NIGHT_ZERO)
        for _ in range(3):
            await judge_says(h, "mafia foul", seat=5)
        # Georgian rules: three fouls cost no speech, but the morning names the player.
        assert not any(isinstance(e, ev.SpeechLost) for e in table.game.events)
        await judge_says(h, "mafia skip")
        text = await said(h, "On three fouls (critical)")
        assert "#5" in text
        assert any(isinstance(e, ev.CriticalFoulsAnnounced) and e.seats == (5,) for e in table.game.events)


@pytest.mark.timeout(60)
async def test_pause_stops_every_timer_and_resume_goes_on_with_the_time_left() -> None:
    clock = ManualClock()  # time moves only when this test moves it
    async with harness(6, emulator_config=FAST, time_scale=1.0, rate_scale=0.05, clock=lambda: clock) as h:
        table = await open_table(h, "classic", 6)
        await skip_night_zero(h, table)
        state = table.game.state
        holder, step = state.floor.seat if state.floor else 0, state.timer
        clock.advance(5)  # part of the speech is gone
        remaining = table.remaining()
        assert remaining is not None
        would_fire = clock.time() + remaining

        await judge_says(h, "mafia clock pause")
        await said(h, "The judge pauses the game")
        assert state.paused
        assert table.deadline() is None
        assert not table.timer_armed
        assert not table.warning_armed
        assert clock.next_at() is None  # nothing at all is left to fire on the table's clock
        left = table.remaining()
        assert left is not None
        assert 0 < left <= table.ruleset.speech_seconds * table.time_scale
        stored = await h.store.get_game(table.id)
        assert stored.timer_remaining == pytest.approx(left)

        # Past the moment the speech would have ended: nothing moved on.
        clock.advance(would_fire + 0.2 - clock.time())
        assert state.floor is not None
        assert state.floor.seat == holder
        assert state.timer == step
        assert not any(isinstance(e, ev.FloorEnded) and e.seat == holder for e in table.game.events)
        refused = await h.players[0].run_command(h.env.text, "mafia clock resume")
        assert refused.content == "Only the table's judge may do that."
        assert state.paused

        before = clock.time()
        await judge_says(h, "mafia clock resume")
        after = clock.time()
        await said(h, "The game goes on")
        assert not state.paused
        deadline = table.deadline()
        assert deadline is not None
        assert clock.wall(before + left) <= deadline <= clock.wall(after + left)
        # The speech then ends by its timer, with the time that was left.
        clock.advance(left)
        await h.wait(lambda: any(isinstance(e, ev.FloorEnded) and e.seat == holder for e in table.game.events))
        ended = next(e for e in table.game.events if isinstance(e, ev.FloorEnded) and e.seat == holder)
        assert ended.reason == "timeout"

        await judge_says(h, "mafia end")
        await table.done.wait()
        outcome = table.game.outcome()
        assert outcome is not None
        assert outcome.result is Result.ABANDONED
        stored = await h.store.get_game(table.id)
        assert stored.status == "abandoned"
        assert_no_spec_violations(h.emu)


@pytest.mark.parametrize("language", ["en", "ru"])
async def test_extra_points_refuse_every_bad_value_and_a_seat_past_its_limit(language: str) -> None:
    """Each value through the real command: a private, localized refusal, and nothing awarded or said."""
    async with harness(10, emulator_config=FAST, time_scale=SLOW_CLOCK, config={"game": {"language": language}}) as h:
        table = await open_table(h, "classic", 10)
        await skip_night_zero(h, table)
        state = table.game.state
        out = ("1e999999999", "-1E+999999999", "1e-999999999", "0.001", "10.5")
        invalid = ("NaN", "sNaN", "Infinity", "-inf", "0e999999999", "0.00", "1_0", "lots")
        for value in (*out, *invalid):
            key = "error.points.out_of_range" if value in out else "error.points.invalid_value"
            reply = await h.judge.run_command(h.env.text, "mafia points", seat=5, value=value, reason="x")
            assert reply.ephemeral, value
            assert reply.content == t(language, key, value=value, low="-10", high="+10", places=2), value
        assert state.extra_points == []

        await judge_says(h, "mafia points", seat=5, value="10", reason="fair play")
        for value in ("10", "0.01"):
            reply = await h.judge.run_command(h.env.text, "mafia points", seat=5, value=value, reason="again")
            assert reply.ephemeral
            assert reply.content == t(language, "error.points.seat_limit", seat=5, total="10", value=value,
                                      low="-10", high="+10")
        assert [value for _seat, value, _reason in state.extra_points] == ["10"]
        assert_no_spec_violations(h.emu)
