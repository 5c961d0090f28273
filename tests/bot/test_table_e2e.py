"""Whole tables played through Discord: the real bot against the emulator, scripted players.

These are the issue's "must hold" properties: whole games per preset with the special flows
(lift vote, removal, doctor save, maniac kill, technical pause), secrecy, the voice floor, and
private answers to illegal actions that change nothing.
"""

from __future__ import annotations

import re

import pytest

from engine import Phase, Role, Team
from engine import events as ev
from mafiabot.core.runtime import Table
from mafiabot.emulator import EmulatorConfig, FaultRule
from mafiabot.emulator.testing import assert_no_spec_violations
from mafiabot.host.presenter import VOTE_EMOJI, custom_id
from mafiabot.testing import Driver, Harness, ScriptedClock, Strategy, harness, has_component, muted_by_bot, open_table
from tests.harness import FAST_GLOBAL as FAST
from tests.harness import TwoNominees, first_speech, play_until

ROLE_WORDS = re.compile(r"\b(Citizen|Sheriff|Detective|Doctor|Mafia|Don|Maniac)\b")


def public_before_end(h: Harness) -> list[str]:
    """Every public message in the table channel up to the result."""
    out = []
    started = False
    for message in h.emu.messages(h.env.text):
        started = started or message.content.startswith("The game begins")
        if message.ephemeral_for is not None or not started:
            continue
        if message.content.startswith("🏆") or "draw" in message.content or "abandoned" in message.content:
            break
        out.append(message.content)
    return out


def assert_secret_and_clean(h: Harness, table: Table) -> None:
    # Nothing public ties a role to a player before the end: no line names both.
    for text in public_before_end(h):
        for line in text.splitlines():
            if re.search(r"#\d+|<@\d+>", line):
                assert not ROLE_WORDS.findall(line), line
    # Only the black team can see the thread (those still at the table at the end).
    thread = h.emu.world.channels[int(table.meta.thread or 0)]
    black = {table.user_at(s) for s in table.black_seats()}
    gone = {table.user_at(d.seat) for d in table.game.state.departures}
    for person in h.players:
        sees = any(c.id == thread.id for c in person.visible_channels(h.env.guild))
        if person.id not in black:
            assert not sees, person
        elif person.id not in gone:
            assert sees, person
    # No per-member overwrite was ever put on the table's channels.
    assert all(ow_id in (h.env.guild.id,) or ow_id not in table.seats for ow_id in h.env.text.overwrites)
    assert_no_spec_violations(h.emu)
    assert muted_by_bot(h, table) == []




@pytest.mark.parametrize(("ruleset", "players", "seed"), [("classic", 10, 3), ("georgian", 12, 5), ("fiim", 10, 7)])
async def test_whole_game_for_each_preset(ruleset: str, players: int, seed: int) -> None:
    async with harness(players, emulator_config=FAST) as h:
        table = await open_table(h, ruleset, players)
        driver = Driver(h, table, Strategy(seed))
        await driver.play()
        await table.done.wait()
        assert table.game.outcome() is not None
        assert driver.cards_seen == {p.id for p in h.players}
        assert_secret_and_clean(h, table)
        stored = await h.store.get_game(table.id)
        assert stored.status == "finished"
        assert stored.last_seq == len(table.game.history)


class TieThenLift(Strategy):
    """Day 1: #1 nominates #2, #2 nominates #3; five hands for #2, the rest silent (so #3): 5-5, twice; all yes."""

    def nominate(self, table: Table, seat: int) -> int | None:
        state = table.game.state
        if state.day == 1 and seat in (1, 2) and len(state.nominees) < 2:
            return seat + 1
        return super().nominate(table, seat) if state.day > 1 else None

    def vote(self, table: Table, seat: int, candidates: tuple[int, ...]) -> int | None:
        if table.game.state.day == 1:
            return 2 if seat <= 5 else None
        return super().vote(table, seat, candidates)

    def lift(self, table: Table, seat: int) -> bool:
        return True


async def test_tie_revote_and_lift_vote_send_both_out() -> None:
    # On the scripted clock a vote window closes only once every planned hand is up, whatever the load.
    clock = ScriptedClock()
    async with harness(10, time_scale=1.0, rate_scale=0.02, emulator_config=FAST, clock=lambda: clock) as h:
        table = await open_table(h, "classic", 10)
        await Driver(h, table, TieThenLift(1), clock=clock).play()
        await table.done.wait()
        events = table.game.events
        ties = [e for e in events if isinstance(e, ev.TieDeclared)]
        assert ties[0].seats == (2, 3)
        lifted = [e for e in events if isinstance(e, ev.PlayersVotedOut) and e.cause.value == "lifted"]
        assert lifted
        assert lifted[0].seats == (2, 3)
        messages = h.emu.messages(h.env.text)
        assert any("Shall all of #2, #3 leave" in m.content for m in messages)
        # The result and the first last word are one message (one request against the global limit).
        result = next(m for m in messages if "#2 " in m.content and "leaves the table" in m.content)
        assert "your last word" in result.content
        assert has_component(result, custom_id("thanks", table.id))
        assert_secret_and_clean(h, table)


class SaveThenKill(Strategy):
    """Georgian: the Doctor saves the mafia's target on Night 1; the maniac kills on Night 2."""

    def mafia_target(self, table: Table) -> int:
        state = table.game.state
        doctor = next((s for s in state.alive_seats() if state.role(s) is Role.DOCTOR), None)
        maniac = next((s for s in state.alive_seats() if state.role(s) is Role.MANIAC), None)
        reds = [s for s in state.alive_seats() if state.role(s).team is Team.RED and s not in (doctor, maniac)]
        return reds[0] if reds else super().mafia_target(table)

    def shot(self, table: Table, seat: int, agreed: int) -> int:
        return agreed

    def heal(self, table: Table, seat: int) -> list[int]:
        state = table.game.state
        if state.night == 1:
            return [self.mafia_target(table), *super().heal(table, seat)]
        return [s for s in state.alive_seats() if s != self.maniac(table, seat)]

    def maniac(self, table: Table, seat: int) -> int | None:
        state = table.game.state
        victims = [s for s in state.alive_seats() if state.role(s) is Role.CITIZEN and s != self.mafia_target(table)]
        return victims[-1] if state.night >= 2 and victims else None

    def nominate(self, table: Table, seat: int) -> int | None:
        return None


async def test_doctor_save_and_maniac_kill_in_a_georgian_game() -> None:
    async with harness(12, emulator_config=FAST) as h:
        table = await open_table(h, "georgian", 12)
        await Driver(h, table, SaveThenKill(2)).play()
        await table.done.wait()
        nights = [e for e in table.game.events if isinstance(e, ev.NightResolved)]
        first = nights[0]
        assert first.mafia_target is not None
        assert first.healed == first.mafia_target
        assert first.killed == ()
        assert any(n.maniac_target is not None and n.maniac_target in n.killed for n in nights)
        texts = [m.content for m in h.emu.messages(h.env.text)]
        assert "Nobody was hurt tonight." in texts[texts.index(next(t for t in texts if "Day 2. Morning" in t))]
        assert_secret_and_clean(h, table)


async def test_disconnect_pauses_then_removes_and_no_one_stays_muted() -> None:
    async with harness(10, emulator_config=FAST, time_scale=0.02) as h:
        table = await open_table(h, "classic", 10)
        await h.run_timers(table, until=lambda: table.game.state.phase is Phase.SPEECHES)
        seat = 6
        leaver = h.user(table.user_at(seat))
        await h.wait(lambda: h.env.guild.members[leaver.id].mute)
        leaver.leave_voice(h.env.guild)
        await h.wait(lambda: table.game.state.paused)
        paused = await h.wait(lambda: [m.content for m in h.emu.messages(h.env.text) if "Technical pause" in m.content])
        assert f"#{seat}" in paused[0]
        await h.run_timers(table, until=lambda: not table.game.state.is_alive(seat))  # the pause's grace runs out
        removed = [e for e in table.game.events if isinstance(e, ev.PlayerRemoved)]
        assert removed[0].seat == seat
        assert removed[0].cause.value == "left"
        assert removed[0].cancels == "today"
        assert not table.game.state.paused
        await Driver(h, table, Strategy(4)).play()
        await table.done.wait()
        # Still server-muted (sticky) while out of voice: the bot owes the lift, and pays it on return.
        assert h.env.guild.members[leaver.id].mute
        leaver.join_voice(h.env.voice)
        await h.wait(lambda: not h.env.guild.members[leaver.id].mute)
        assert await h.store.owed_mutes(h.env.guild.id) == []


async def test_a_player_back_in_time_resumes_the_game() -> None:
    async with harness(10, emulator_config=FAST, time_scale=0.05) as h:
        table = await open_table(h, "classic", 10)
        await h.run_timers(table, until=lambda: table.game.state.phase is Phase.SPEECHES)
        floor = table.game.state.floor
        assert floor is not None
        person = h.user(table.user_at(9))
        person.leave_voice(h.env.guild)
        await h.wait(lambda: table.game.state.paused)
        person.join_voice(h.env.voice)
        await h.wait(lambda: not table.game.state.paused)
        assert table.game.state.is_alive(9)
        assert table.game.state.floor == floor
        # Back in voice and not holding the floor: muted again.
        await h.wait(lambda: h.env.guild.members[person.id].mute)


@pytest.mark.parametrize("followups", ["accepted", "expired"])
async def test_a_clicks_messages_go_as_its_followups_and_none_is_lost(followups: str) -> None:
    # Follow-ups do not count against the token's global limit; when Discord refuses them (here: every
    # interaction token expired at once) the channel gets the same messages, in the same order.
    token_life = 900.0 if followups == "accepted" else 0.0
    config = EmulatorConfig(rate_limits=FAST.rate_limits, interaction_token_seconds=token_life)
    async with harness(10, emulator_config=config) as h:
        table = await open_table(h, "classic", 10)
        await Driver(h, table, Strategy(3)).play()
        await table.done.wait()
        messages = h.emu.messages(h.env.text)
        floors = [m for m in messages if has_component(m, custom_id("thanks", table.id))]
        events = table.game.events
        assert len(floors) == sum(isinstance(e, ev.FloorGiven) for e in events)
        accepted = [m for m in messages if "Accepted: " in m.content]
        assert len(accepted) == sum(isinstance(e, ev.Nominated) for e in events) > 0
        world = h.emu.world
        answered = [m for m in messages if m.interaction_id is not None and m.ephemeral_for is None
                    and m.id in world.interactions[m.interaction_id].followup_ids]
        if followups == "expired":
            assert answered == []
            return
        clicks = {world.interactions[i].data["custom_id"].split(":")[1]
                  for i in (m.interaction_id for m in answered) if i is not None}
        assert clicks == {"thanks", "nominate"}  # never a night action's click
        assert all(m in answered for m in accepted)
        assert len([m for m in floors if m in answered]) > len(floors) // 2
        assert_secret_and_clean(h, table)


async def test_opening_a_table_queues_behind_running_games() -> None:
    async with harness(10, emulator_config=FAST) as h:
        limit = h.bot.global_limit
        before = limit.granted_bulk
        table = await open_table(h, "classic", 10)
        # The thread, its three black members, its welcome and the table's start message.
        await h.wait(lambda: limit.granted_bulk - before >= 6)
        granted = limit.granted
        await Driver(h, table, Strategy(2)).play()
        await table.done.wait()
        assert limit.granted > granted
        assert limit.granted_bulk - before == 6  # play itself never waits behind openings


async def test_a_new_tables_clock_starts_once_its_opening_is_shown() -> None:
    async with harness(10, emulator_config=FAST) as h:
        # A busy hour, played by a slow thread creation: the opening waits, and so must Night 0.
        h.emu.inject_fault(FaultRule(method="POST", route="/channels/{channel_id}/threads", hang=4.0))
        table = await open_table(h, "classic", 10)
        assert table.game.state.phase is Phase.NIGHT_ZERO
        assert table.deadline() is None
        await h.wait(lambda: table.deadline() is not None)
        assert table.meta.thread is not None
        assert any(m.content.startswith("The game begins") for m in h.emu.messages(h.env.text))


async def test_voice_floor_one_speaker_and_two_edits_per_change() -> None:
    async with harness(10, emulator_config=FAST) as h:
        table = await open_table(h, "classic", 10)
        seen: list[int] = []

        def unmuted_seated() -> int:
            return sum(
                1 for u in table.seats
                if h.emu.voice_state(h.env.guild, h.emu.world.users[u]) is not None
                and not h.env.guild.members[u].mute
            )

        def sample() -> None:
            if table.voice.idle and table.game.state.phase is Phase.SPEECHES:
                seen.append(unmuted_seated())

        h.on_change(sample)
        await Driver(h, table, Strategy(8)).play()
        await table.done.wait()
        assert seen
        assert max(seen) <= 1
        assert table.voice.stats.most_in_one_change <= 2
        assert muted_by_bot(h, table) == []


async def test_illegal_actions_get_private_answers_and_change_nothing() -> None:
    async with harness(10, emulator_config=FAST) as h:
        table = await open_table(h, "classic", 10)
        await first_speech(h, table)
        state = table.game.state
        thanks = custom_id("thanks", table.id)
        message = await h.wait(lambda: h.latest(h.env.text, lambda m: has_component(m, thanks)))
        before = len(table.game.events)
        not_speaker = h.user(table.user_at(5))
        reply = await not_speaker.press(message, thanks)
        assert reply.ephemeral
        assert "floor" in reply.content
        assert len(table.game.events) == before
        # Somebody not seated (the judge) asks for a card.
        card = custom_id("card", table.id)
        card_message = h.latest(h.env.text, lambda m: has_component(m, card))
        assert card_message is not None
        reply = await h.judge.press(card_message, card)
        assert reply.ephemeral
        assert "not seated" in reply.content
        # A nomination out of turn through the speaker's menu.
        nominate = custom_id("nominate", table.id)
        menu = h.latest(h.env.text, lambda m: has_component(m, nominate))
        assert menu is not None
        reply = await not_speaker.choose(menu, nominate, ["3"])
        assert reply.ephemeral
        assert "speaker" in reply.content
        assert state.nominees == []
        assert len(table.game.events) == before
        # Only the owner sees an ephemeral answer.
        assert reply.message is not None
        assert all(reply.message.id not in {m.id for m in p.visible_messages(h.env.text)}
                   for p in h.players if p.id != not_speaker.id)


async def test_second_vote_and_a_spectators_vote_are_removed_and_explained() -> None:
    async with harness(10, emulator_config=FAST, time_scale=0.2) as h:
        table = await open_table(h, "classic", 10)
        driver = Driver(h, table, TwoNominees(1))
        await driver.look_at_cards()
        await play_until(driver, table, lambda: table.game.state.phase is Phase.VOTING)
        vote = table.game.state.vote
        assert vote is not None
        assert vote.candidates == (4, 5)
        message = await h.wait(lambda: driver.vote_message(4))
        voter = h.user(table.user_at(1))
        voter.react(message, VOTE_EMOJI)
        await h.wait(lambda: 1 in vote.votes)
        h.judge.react(message, VOTE_EMOJI)
        await h.wait(lambda: h.judge.id not in message.reactions.get(VOTE_EMOJI, []))
        assert vote.votes == {1: 4}
        dm = await h.wait(lambda: h.judge.dm_messages(h.env.app))
        assert "not seated" in dm[-1].content
        # The same voter raises a hand again in the next window: removed, told why, not counted.
        await h.run_timers(table, until=lambda: driver.vote_message(5) is not None)  # #4's window closes
        next_message = driver.vote_message(5)
        assert next_message is not None
        voter.react(next_message, VOTE_EMOJI)
        await h.wait(lambda: voter.id not in next_message.reactions.get(VOTE_EMOJI, []))
        assert table.game.state.vote is None or table.game.state.vote.votes.get(1) == 4
        dms = await h.wait(lambda: [m for m in voter.dm_messages(h.env.app) if "already voted" in m.content])
        assert dms
