"""Taking back a judge's mistake, end to end: ``/mafia judge undo`` on the emulator with the real bot.

The public channel shows the foul, the removal or the skip, then the correction; the mutes and the
mafia's room follow the state again; and a replay of the stored log gives exactly the live state.
"""

from __future__ import annotations

from typing import Any

from engine import (
    Game,
    GiveFoul,
    Phase,
    StartGame,
    TakeBack,
    Timeout,
    command_from_data,
    event_from_data,
    from_mapping,
    replay_events,
)
from engine import events as ev
from mafiabot.core.protocol import GameHeader, build_protocol
from mafiabot.core.runtime import Table
from mafiabot.emulator.testing import assert_no_spec_violations
from mafiabot.host.i18n import t
from mafiabot.testing import Harness, harness, has_component, open_table
from tests.harness import FAST, floor_seat, public, skip_night_zero

SLOW_CLOCK = 0.5
"""Timers at half length: no speech runs out while a test issues its commands."""


async def judge_says(h: Harness, name: str, **options: Any) -> str:
    """Run a judge command as the judge; return the private confirmation."""
    reply = await h.judge.run_command(h.env.text, name, **options)
    assert reply.ephemeral, reply.content
    return reply.content


async def said(h: Harness, text: str, after: int = -1) -> int:
    """Wait for a public message containing ``text`` later than index ``after``; its index."""
    def found() -> int | None:
        return next((i for i, c in enumerate(public(h)) if i > after and text in c), None)

    index = await h.wait(lambda: found() is not None and found())
    return int(index)


def label(table: Table, seat: int) -> str:
    return t("en", "seat.label", seat=seat, name=table.name_at(seat))


async def stored_replay_is_live(h: Harness, table: Table) -> None:
    """The stored commands and the stored events both rebuild exactly the live state."""
    async with table.lock:
        stored = await h.store.get_game(table.id)
        commands = [command_from_data(c.command) for c in stored.log]
        events = [event_from_data(e) for c in stored.log for e in c.events]
        assert Game.replay(from_mapping(stored.ruleset), commands).state == table.game.state
        assert replay_events(events) == table.game.state
        assert commands == table.game.history


def muted(h: Harness, table: Table, seat: int) -> bool:
    return bool(h.env.guild.members[table.user_at(seat)].mute)


async def test_a_foul_and_a_removal_taken_back_show_in_public_and_replay_exactly() -> None:
    async with harness(10, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        table = await open_table(h, "classic", 10)
        await skip_night_zero(h, table)
        state = table.game.state
        speaker = floor_seat(table)
        fouled = 3 if speaker != 3 else 4

        await judge_says(h, "mafia foul", seat=fouled)
        foul = await said(h, f"Foul to {label(table, fouled)}")
        assert "Taken back" in await judge_says(h, "mafia judge undo")
        correction = await said(h, f"The judge takes back the foul to {label(table, fouled)}: 0 fouls.", foul)
        assert correction > foul
        assert state.foul_count(fouled) == 0

        # A black player removed by mistake: out of the mafia's room, then back in it.
        black = next(s for s in table.black_seats() if s != speaker)
        await h.wait(lambda: table.meta.thread is not None)
        room = h.emu.world.channels[table.meta.thread or 0]
        user = table.user_at(black)
        await h.wait(lambda: user in room.thread_members)
        await judge_says(h, "mafia remove", seat=black, reason="wrong seat")
        removal = await said(h, f"{label(table, black)} is disqualified by the judge.", correction)
        await h.wait(lambda: user not in room.thread_members)
        assert not state.is_alive(black)
        assert state.vote_cancelled
        await judge_says(h, "mafia judge undo")
        await said(h, f"The judge takes back the removal: {label(table, black)} is back at the table.", removal)
        await h.wait(lambda: user in room.thread_members)
        assert state.is_alive(black)
        assert not state.vote_cancelled
        assert state.departures == []
        assert muted(h, table, black)  # seated and not speaking: muted as before

        # Twice is once: nothing is left to take back.
        again = await h.judge.run_command(h.env.text, "mafia judge undo")
        assert again.ephemeral
        assert again.content.startswith("There is nothing to take back")
        await stored_replay_is_live(h, table)
        assert_no_spec_violations(h.emu)


async def test_a_skip_or_a_removal_of_the_speaker_taken_back_gives_the_floor_back() -> None:
    async with harness(10, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        table = await open_table(h, "classic", 10)
        await skip_night_zero(h, table)
        state = table.game.state
        speaker = floor_seat(table)
        await h.wait(lambda: not muted(h, table, speaker))

        await judge_says(h, "mafia skip")
        await h.wait(lambda: state.floor is not None and state.floor.seat != speaker)
        following = floor_seat(table)
        await h.wait(lambda: muted(h, table, speaker) and not muted(h, table, following))
        left = table.game.history[-1]
        await judge_says(h, "mafia judge undo")
        back = await said(h, f"The judge takes back the skip: {label(table, speaker)} has the floor again.")
        assert floor_seat(table) == speaker
        assert state.floor is not None
        assert state.floor.seconds == getattr(left, "left", None)  # the time the skip measured as left
        correction = t("en", "takeback.skip", player=label(table, speaker))
        message = next(m for m in h.emu.messages(h.env.text) if m.ephemeral_for is None and correction in m.content)
        assert has_component(message, f"mafia:thanks:{table.id}")  # the speaker's controls come back with it
        await h.wait(lambda: not muted(h, table, speaker) and muted(h, table, following))

        # The speaker removed by mistake: the next one gets the floor, then it comes back.
        await judge_says(h, "mafia remove", seat=speaker, reason="wrong seat")
        await said(h, f"{label(table, speaker)} is disqualified by the judge.", back)
        await h.wait(lambda: state.floor is not None and state.floor.seat == following)
        await h.wait(lambda: muted(h, table, speaker) and not muted(h, table, following))
        await judge_says(h, "mafia judge undo")
        await said(h, f"The judge takes back the removal: {label(table, speaker)} is back at the table.", back)
        assert floor_seat(table) == speaker
        await h.wait(lambda: not muted(h, table, speaker) and muted(h, table, following))

        # Once the floor has changed, a foul stands.
        await judge_says(h, "mafia foul", seat=following)
        thanks = next(m for m in reversed(h.emu.messages(h.env.text))
                      if has_component(m, f"mafia:thanks:{table.id}"))
        await h.user(table.user_at(speaker)).press(thanks, f"mafia:thanks:{table.id}")
        await h.wait(lambda: state.floor is not None and state.floor.seat == following)
        late = await h.judge.run_command(h.env.text, "mafia judge undo")
        assert late.ephemeral
        assert late.content == "Too late to take that back: the floor has changed since."
        assert state.foul_count(following) == 1
        assert state.phase is Phase.SPEECHES
        await stored_replay_is_live(h, table)
        assert not [e for e in table.game.events if isinstance(e, ev.GameEnded)]
        assert_no_spec_violations(h.emu)


async def test_a_player_cannot_take_back() -> None:
    async with harness(6, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        table = await open_table(h, "classic", 6)
        await skip_night_zero(h, table)
        await judge_says(h, "mafia foul", seat=2)
        reply = await h.players[0].run_command(h.env.text, "mafia judge undo")
        assert reply.ephemeral
        assert reply.content == "Only the table's judge may do that."
        assert table.game.state.foul_count(2) == 1


def test_the_protocol_keeps_the_call_and_its_correction() -> None:
    game = Game(from_mapping({"base": "classic"}))
    game.apply(StartGame(players=10, seed=4))
    game.apply(Timeout())  # Day 1: #1 speaks
    for _ in range(4):
        game.apply(GiveFoul(seat=5))  # the fourth removes #5
    game.apply(TakeBack())
    game.apply(Timeout(step=game.state.timer, left=17))
    game.apply(TakeBack())
    protocol = build_protocol(GameHeader(ruleset_name="classic"), [], game.events)
    seat = protocol.seats[4]
    assert (seat.fouls, seat.removed, seat.departure) == (3, False, None)
    assert protocol.removals == ()
    assert [(f.total, f.revoked) for f in protocol.fouls] == [(1, False), (2, False), (3, False), (4, False),
                                                              (3, True)]
    speeches = [(s.seat, s.seconds) for s in protocol.days[-1].speeches]
    assert speeches == [(1, 60), (2, 60), (1, 17)]  # the floor given back, with the time that was left
