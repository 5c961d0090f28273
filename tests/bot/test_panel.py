"""The judge's console, end to end: the real bot on the emulator, scripted people.

The judge opens ``/mafia panel`` and works the table from its menus and buttons; the console is one
ephemeral message the bot keeps current after each command's public messages, through the webhook
of the latest interaction on it, until that token runs out; a click (Refresh) or a new
``/mafia panel`` opens it again. Nobody but a judge sees it or may use its controls.
"""

from __future__ import annotations

from typing import Any

import pytest

from engine import PRESETS, Disqualify, Game, Phase, Role, command_from_data, find_ruleset, from_mapping
from mafiabot.core.clock import ManualClock
from mafiabot.emulator.state import Message
from mafiabot.emulator.testing import assert_no_spec_violations
from mafiabot.emulator.users import ScriptedUser
from mafiabot.host.i18n import role_name, t
from mafiabot.host.panel import PanelBoard
from mafiabot.host.presenter import custom_id, seat_label
from mafiabot.testing import Driver, Harness, Strategy, harness, open_table
from tests.harness import FAST, admin_of, floor_seat, play_until, public, skip_night_zero

SLOW_CLOCK = 0.5
"""Timers at half length: no speech runs out while a test works the console; skip moves on."""

NOT_JUDGE = "Only the table's judge may do that."


def board(h: Harness) -> PanelBoard:
    # Each bot loads the extension afresh (unloading drops the module), so its class is not this module's.
    found = getattr(h.bot.get_cog("PanelCog"), "board", None)
    assert isinstance(found, PanelBoard)
    return found


async def open_panel(h: Harness, judge: ScriptedUser | None = None) -> Message:
    reply = await (judge or h.judge).run_command(h.env.text, "mafia panel")
    assert reply.ephemeral, reply.content
    assert reply.message is not None
    return reply.message


def panel_edits(h: Harness) -> list[int]:
    """Statuses of the bot's webhook edits (the console kept current)."""
    return [r.status for r in h.emu.requests
            if r.method == "PATCH" and (r.route or "").startswith("/webhooks/") and f"/{h.env.app.id}/" in r.path]


def every_role_name() -> set[str]:
    """Every card name of every preset, in every language."""
    return {role_name(lang, find_ruleset(preset), role) for preset in PRESETS for role in Role
            for lang in ("en", "ru", "ka")}


async def test_the_judge_gives_a_foul_from_the_seat_menu_and_takes_it_back_on_the_console() -> None:
    async with harness(6, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        table = await open_table(h, "classic", 6)
        await skip_night_zero(h, table)
        panel = await open_panel(h)
        assert panel.ephemeral_for == h.judge.id
        state = table.game.state
        for seat in range(1, 7):  # every seat, named, with its role (the setting is on by default)
            assert seat_label(table, seat) in panel.content
            assert role_name("en", table.ruleset, state.role(seat)) in panel.content
        assert f"Floor: {seat_label(table, state.floor.seat if state.floor else 0)}" in panel.content

        chose = await h.judge.choose(panel, custom_id("pfoul", table.id), ["3"])
        assert chose.response_type == 7  # answered on the console itself
        assert state.foul_count(3) == 1
        assert "✅ Foul to #3" in panel.content
        assert f"{seat_label(table, 3)} · 1 foul" in panel.content
        await h.wait(lambda: any(f"Foul to {seat_label(table, 3)}: 1 foul." in c for c in public(h)))

        taken = await h.judge.choose(panel, custom_id("punfoul", table.id), ["3"])
        assert taken.response_type == 7
        assert state.foul_count(3) == 0
        assert "✅ The last foul of #3" in panel.content
        assert "1 foul" not in panel.content
        await h.wait(lambda: any("The judge takes back a foul of" in c for c in public(h)))

        # The floor moves by a slash command: the console follows through its webhook.
        speaker = state.floor.seat if state.floor else 0
        await h.judge.run_command(h.env.text, "mafia skip")
        await h.wait(lambda: state.floor is not None and state.floor.seat != speaker)
        await h.wait(lambda: f"Floor: {seat_label(table, state.floor.seat if state.floor else 0)}" in panel.content)
        assert panel_edits(h)
        assert set(panel_edits(h)) == {200}
        assert_no_spec_violations(h.emu)


async def test_the_console_removes_with_a_reason_pauses_and_ends_after_a_confirmation() -> None:
    async with harness(6, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        table = await open_table(h, "classic", 6)
        await skip_night_zero(h, table)
        panel = await open_panel(h)
        state = table.game.state
        asked = await h.judge.choose(panel, custom_id("premove", table.id), ["5"])
        assert asked.response_type == 9  # the reason's modal
        with pytest.raises(LookupError):  # shown to the judge alone
            h.players[0].submit_modal(asked, {"reason": "forged"})
        removed = h.judge.submit_modal(asked, {"reason": "insults"})
        await h.wait(lambda: removed.acknowledged)
        assert removed.response_type == 7
        assert state.removed(5)
        assert "✅ #5" in panel.content
        assert "disqualified" in panel.content
        assert any(isinstance(c, Disqualify) and c.reason == "insults" for c in table.game.history)

        await h.judge.press(panel, custom_id("panel", table.id, "pause"))
        assert state.paused
        assert "The game is paused." in panel.content
        assert any(c.get("custom_id") == custom_id("panel", table.id, "resume")
                   for row in panel.components for c in row["components"])
        await h.judge.press(panel, custom_id("panel", table.id, "resume"))
        assert not state.paused

        await h.judge.press(panel, custom_id("panel", table.id, "end"))
        assert not table.over  # only asked
        assert "Abandon the game?" in panel.content
        await h.judge.press(panel, custom_id("panel", table.id, "back"))
        assert "Abandon the game?" not in panel.content
        await h.judge.press(panel, custom_id("panel", table.id, "end"))
        await h.judge.press(panel, custom_id("panel", table.id, "yes_end"))
        await h.wait(table.done.is_set)
        await h.wait(lambda: "The game is over." in panel.content)
        assert panel.components == []
        assert_no_spec_violations(h.emu)


def forge(person: ScriptedUser, h: Harness, message: Message, data: dict[str, Any]) -> Any:
    """A click with the console's ids from someone who cannot see it (a modified client)."""
    return person._start(h.env.app, 3, h.emu.world.channels[message.channel_id], data, message)


async def test_nobody_but_the_judge_sees_the_console_or_may_use_its_controls() -> None:
    async with harness(6, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        table = await open_table(h, "classic", 6)
        await skip_night_zero(h, table)
        panel = await open_panel(h)
        seated = h.user(table.user_at(2))
        spectator = h.emu.create_scripted_user("spectator", h.env.guild)
        spectator.join_voice(h.env.voice)
        before, content = len(table.game.history), panel.content
        ids = [c for row in panel.components for c in row["components"]]
        assert len(ids) >= 6
        for person in (seated, spectator):
            assert panel not in person.visible_messages(h.env.text)
            assert panel not in person.ephemeral_messages()
            opened = await person.run_command(h.env.text, "mafia panel")
            assert opened.ephemeral
            assert opened.content == NOT_JUDGE
            for component in ids:
                data: dict[str, Any] = {"custom_id": component["custom_id"], "component_type": component["type"]}
                if component["type"] == 3:
                    data["values"] = ["1"]
                reply = forge(person, h, panel, data)
                await h.wait(lambda: reply.acknowledged)  # noqa: B023 -- awaited before the loop moves on
                assert reply.ephemeral, component["custom_id"]
                assert reply.content == NOT_JUDGE, component["custom_id"]
        assert len(table.game.history) == before
        assert panel.content == content
        assert not table.game.state.paused


@pytest.mark.parametrize("language", ["en", "ru", "ka"])
async def test_with_the_role_setting_off_the_console_names_no_role(language: str) -> None:
    async with harness(11, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        admin = admin_of(h)
        saved = await admin.run_command(h.env.text, "mafia settings", judge_sees_roles=False, language=language)
        assert saved.ephemeral
        assert not (await h.store.get_settings(h.env.guild.id)).judge_sees_roles
        table = await open_table(h, "georgian", 11)
        await skip_night_zero(h, table)
        panel = await open_panel(h)
        names = every_role_name()
        assert not [name for name in names if name in panel.content], panel.content
        state = table.game.state
        await play_until(Driver(h, table, Strategy(5)), table, lambda: state.phase is Phase.NIGHT)
        # At night the console says nothing of who still has to act, not even how many.
        night = t(language, "status.phase", phase=t(language, "phase.night"), day=state.day)
        await h.wait(lambda: night in panel.content)
        assert t(language, "panel.night_hidden") in panel.content
        assert not [name for name in names if name in panel.content], panel.content
        # Leave no game running mid-night behind (its shutdown then is another test's subject).
        await h.judge.run_command(h.env.text, "mafia end")
        await h.wait(table.done.is_set)


async def test_an_expired_token_leaves_the_console_until_refresh_opens_it_again() -> None:
    async with harness(6, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        table = await open_table(h, "classic", 6)
        await skip_night_zero(h, table)
        panel = await open_panel(h)
        state = table.game.state
        assert "Kept current until <t:" in panel.content
        # Fifteen minutes pass for Discord: the opening interaction's token no longer edits.
        opening = h.emu.world.interactions[panel.interaction_id or 0]
        opening.created_at -= 15 * 60 + 1
        speaker = state.floor.seat if state.floor else 0
        await h.judge.run_command(h.env.text, "mafia skip")
        await h.wait(lambda: 401 in panel_edits(h))
        assert f"Floor: {seat_label(table, speaker)}" in panel.content  # as it was last drawn
        refreshed = await h.judge.press(panel, custom_id("panel", table.id, "refresh"))
        assert refreshed.response_type == 7
        moved = state.floor.seat if state.floor else 0
        assert f"Floor: {seat_label(table, moved)}" in panel.content
        # The click's token keeps it current from now on.
        await h.judge.run_command(h.env.text, "mafia skip")
        await h.wait(lambda: state.floor is not None and state.floor.seat != moved)
        await h.wait(lambda: f"Floor: {seat_label(table, state.floor.seat if state.floor else 0)}" in panel.content)
        assert panel_edits(h)[-1] == 200


async def test_past_its_tokens_life_the_bot_sends_no_edit_and_a_new_panel_is_kept_current() -> None:
    clock = ManualClock()  # the table's clock, which the console counts its tokens' life on
    async with harness(6, emulator_config=FAST, time_scale=SLOW_CLOCK, clock=lambda: clock) as h:
        table = await open_table(h, "classic", 6)
        await skip_night_zero(h, table)
        first = await open_panel(h)
        state = table.game.state
        await h.judge.run_command(h.env.text, "mafia clock pause")
        await h.wait(lambda: state.paused)
        clock.advance(15 * 60)  # the bot's own count: the token is spent, so no request is wasted on it
        await h.bot.presenter.drained(table.id)
        await h.wait(lambda: all(p.editing is not None and p.editing.done() for p in board(h).panels.values()))
        edits = len(panel_edits(h))
        await h.judge.run_command(h.env.text, "mafia clock resume")
        await h.wait(lambda: not state.paused)
        speaker = state.floor.seat if state.floor else 0
        await h.judge.run_command(h.env.text, "mafia skip")
        await h.wait(lambda: state.floor is not None and state.floor.seat != speaker)
        await h.bot.presenter.drained(table.id)
        await h.wait(lambda: all(p.editing is not None and p.editing.done() for p in board(h).panels.values()))
        assert len(panel_edits(h)) == edits
        assert f"Floor: {seat_label(table, speaker)}" in first.content
        second = await open_panel(h)
        assert second.id != first.id
        moved = state.floor.seat if state.floor else 0
        await h.judge.run_command(h.env.text, "mafia skip")
        await h.wait(lambda: state.floor is not None and state.floor.seat != moved)
        await h.wait(lambda: f"Floor: {seat_label(table, state.floor.seat if state.floor else 0)}" in second.content)
        assert f"Floor: {seat_label(table, moved)}" not in second.content


async def test_a_foul_and_a_removal_from_the_console_are_taken_back_on_it_and_replay_exactly() -> None:
    async with harness(6, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        table = await open_table(h, "classic", 6)
        await skip_night_zero(h, table)
        panel = await open_panel(h)
        state = table.game.state
        seat = 3 if floor_seat(table) != 3 else 4
        undo = custom_id("panel", table.id, "undo")

        await h.judge.choose(panel, custom_id("pfoul", table.id), [str(seat)])
        assert state.foul_count(seat) == 1
        taken = await h.judge.press(panel, undo)
        assert taken.response_type == 7
        assert state.foul_count(seat) == 0
        assert "✅ Taken back" in panel.content
        await h.wait(lambda: any(f"The judge takes back the foul to {seat_label(table, seat)}" in c for c in public(h)))

        asked = await h.judge.choose(panel, custom_id("premove", table.id), [str(seat)])
        removed = h.judge.submit_modal(asked, {"reason": "wrong seat"})
        await h.wait(lambda: removed.acknowledged)
        assert not state.is_alive(seat)
        await h.judge.press(panel, undo)
        assert state.is_alive(seat)
        assert state.departures == []
        await h.wait(lambda: any(f"{seat_label(table, seat)} is back at the table" in c for c in public(h)))
        # Twice is once: the console says why, on itself.
        await h.judge.press(panel, undo)
        assert "⛔ There is nothing to take back" in panel.content

        async with table.lock:
            stored = await h.store.get_game(table.id)
            commands = [command_from_data(c.command) for c in stored.log]
            assert Game.replay(from_mapping(stored.ruleset), commands).state == state
            assert commands == table.game.history
        assert_no_spec_violations(h.emu)


async def test_a_judge_who_hands_the_table_over_no_longer_sees_it_on_the_console() -> None:
    async with harness(6, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        table = await open_table(h, "classic", 6)
        await skip_night_zero(h, table)
        panel = await open_panel(h)
        assert role_name("en", table.ruleset, Role.SHERIFF) in panel.content
        successor = h.emu.create_scripted_user("successor", h.env.guild)
        successor.join_voice(h.env.voice)
        handed = await h.judge.run_command(h.env.text, "mafia judge pass", member=successor)
        assert not handed.ephemeral, handed.content
        speaker = floor_seat(table)
        await successor.run_command(h.env.text, "mafia skip")
        await h.wait(lambda: table.game.state.floor is not None and floor_seat(table) != speaker)
        await h.wait(lambda: panel.content == "This console is closed: you no longer judge this table.")
        assert panel.components == []
        theirs = await open_panel(h, successor)
        assert role_name("en", table.ruleset, Role.SHERIFF) in theirs.content


async def test_a_side_judge_opens_a_console_of_their_own_and_works_the_table_from_it() -> None:
    async with harness(6, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        deputy = h.emu.create_scripted_user("deputy", h.env.guild)
        deputy.join_voice(h.env.voice)
        table = await open_table(h, "classic", 6)
        await h.judge.run_command(h.env.text, "mafia judge add", member=deputy)
        await skip_night_zero(h, table)
        mine, theirs = await open_panel(h), await open_panel(h, deputy)
        assert mine.ephemeral_for == h.judge.id
        assert theirs.ephemeral_for == deputy.id
        assert theirs not in h.judge.ephemeral_messages()

        chose = await deputy.choose(theirs, custom_id("pfoul", table.id), ["4"])
        assert chose.response_type == 7
        assert table.game.state.foul_count(4) == 1
        assert "✅ Foul to #4" in theirs.content
        # The judge's own console follows the side judge's foul.
        await h.wait(lambda: f"{seat_label(table, 4)} · 1 foul" in mine.content)
        assert_no_spec_violations(h.emu)


async def test_an_extend_by_slash_command_moves_the_end_on_every_open_console() -> None:
    async with harness(6, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        deputy = h.emu.create_scripted_user("deputy", h.env.guild)
        deputy.join_voice(h.env.voice)
        table = await open_table(h, "classic", 6)
        await h.judge.run_command(h.env.text, "mafia judge add", member=deputy)
        await skip_night_zero(h, table)
        mine, theirs = await open_panel(h), await open_panel(h, deputy)
        before = table.deadline()
        assert before is not None
        old_end = f"<t:{int(before.timestamp())}:R>"
        assert old_end in mine.content
        speaker, edits = floor_seat(table), len(panel_edits(h))
        reply = await h.judge.run_command(h.env.text, "mafia clock extend", seconds=120)
        assert not reply.ephemeral, reply.content
        after = table.deadline()
        assert after is not None
        assert after > before
        new_end = f"<t:{int(after.timestamp())}:R>"
        # No engine event: the consoles follow the command itself, both of them.
        await h.wait(lambda: new_end in mine.content and new_end in theirs.content)
        assert old_end not in mine.content
        assert floor_seat(table) == speaker
        assert len(panel_edits(h)) == edits + 2
        assert set(panel_edits(h)) == {200}


async def test_turning_the_role_setting_off_hides_the_roles_on_an_open_console_at_once() -> None:
    async with harness(6, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        admin = admin_of(h)
        table = await open_table(h, "classic", 6)
        await skip_night_zero(h, table)
        panel = await open_panel(h)
        names = every_role_name()
        sheriff = role_name("en", table.ruleset, Role.SHERIFF)
        assert sheriff in panel.content
        speaker = floor_seat(table)
        saved = await admin.run_command(h.env.text, "mafia settings", judge_sees_roles=False)
        assert saved.ephemeral
        await h.wait(lambda: sheriff not in panel.content)
        assert not [name for name in names if name in panel.content], panel.content
        assert floor_seat(table) == speaker  # nothing happened at the table: the setting alone redrew it
        await admin.run_command(h.env.text, "mafia settings", judge_sees_roles=True)
        await h.wait(lambda: sheriff in panel.content)
        assert set(panel_edits(h)) == {200}
