"""A second judge, end to end: ``/mafia judge add`` and ``remove`` on the emulator with the real bot.

A side judge has the judge's powers (a foul, and taking it back), is never muted, is never a seated
player nor a bot, and is kept in the table's stored meta, so a restarted bot still lets them judge.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from engine import Phase
from mafiabot.core.meta import TableMeta
from mafiabot.emulator.testing import assert_no_spec_violations, running
from mafiabot.emulator.users import ScriptedUser
from mafiabot.host.bot import MafiaBot
from mafiabot.host.i18n import t
from mafiabot.testing import Harness, harness, open_table
from tests.harness import FAST, admin_of, public, skip_night_zero

SLOW_CLOCK = 0.5


async def says(h: Harness, person: ScriptedUser, name: str, **options: Any) -> str:
    """Run a command as ``person``; return the answer's text."""
    reply = await person.run_command(h.env.text, name, **options)
    return reply.content


async def said(h: Harness, text: str) -> None:
    await h.wait(lambda: any(text in c for c in public(h)))


def test_the_side_judges_are_kept_in_the_table_meta() -> None:
    meta = TableMeta.from_json({"thread": 5, "judges": [11, 12], "future": 1})
    assert meta.judges == [11, 12]
    assert meta.to_json() == {"thread": 5, "judges": [11, 12], "future": 1}
    assert "judges" not in TableMeta().to_json()


async def test_a_side_judge_fouls_and_takes_back_and_is_never_muted() -> None:
    async with harness(6, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        deputy = h.emu.create_scripted_user("deputy", h.env.guild)
        deputy.join_voice(h.env.voice)
        table = await open_table(h, "classic", 6)
        await h.wait(lambda: h.env.guild.members[deputy.id].mute)  # a spectator, muted during play
        refused = await deputy.run_command(h.env.text, "mafia foul", seat=2)
        assert refused.content == "Only the table's judge may do that."

        reply = await h.judge.run_command(h.env.text, "mafia judge add", member=deputy)
        assert not reply.ephemeral
        assert reply.content == t("en", "judge.side_added", judge=f"<@{deputy.id}>")
        assert table.meta.judges == [deputy.id]
        assert table.judge_id == h.judge.id  # the judge stays the judge
        await h.wait(lambda: not h.env.guild.members[deputy.id].mute)
        assert (await h.store.get_game(table.id)).discord["judges"] == [deputy.id]

        await skip_night_zero(h, table)
        assert "Foul to #2" in await says(h, deputy, "mafia foul", seat=2)
        await said(h, "Foul to #2")
        assert table.game.state.foul_count(2) == 1
        await says(h, deputy, "mafia judge undo")
        await said(h, "The judge takes back the foul to #2")
        assert table.game.state.foul_count(2) == 0

        again = await says(h, h.judge, "mafia judge add", member=deputy)
        assert again == "That member already judges this table."
        assert await says(h, deputy, "mafia judge remove", member=h.judge) == (
            t("en", "error.table.side_judge_bench", **h.bot.commands_text(h.env.guild.id)))
        assert await says(h, h.judge, "mafia judge remove", member=h.judge) == (
            t("en", "error.table.not_side_judge"))
        removed = await h.judge.run_command(h.env.text, "mafia judge remove", member=deputy)
        assert not removed.ephemeral
        assert removed.content == t("en", "judge.side_removed", judge=f"<@{deputy.id}>")
        assert table.meta.judges == []
        await h.wait(lambda: h.env.guild.members[deputy.id].mute)  # a spectator again
        after = await deputy.run_command(h.env.text, "mafia foul", seat=2)
        assert after.content == "Only the table's judge may do that."
        assert table.game.state.foul_count(2) == 0
        assert_no_spec_violations(h.emu)


async def test_a_seated_player_or_a_bot_cannot_be_a_side_judge() -> None:
    async with harness(6, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        music = h.emu.scripted(h.emu.create_user("music", bot=True))
        h.emu.add_member(h.env.guild, music.user)
        table = await open_table(h, "classic", 6)
        await h.wait(lambda: table.game.state.phase is Phase.NIGHT_ZERO)
        seated = await h.judge.run_command(h.env.text, "mafia judge add", member=h.players[0])
        assert seated.ephemeral
        assert seated.content == "A seated player cannot be the judge."
        bot = await h.judge.run_command(h.env.text, "mafia judge add", member=music)
        assert bot.ephemeral
        assert bot.content == "A bot cannot be the judge."
        player = await h.players[1].run_command(h.env.text, "mafia judge add", member=h.players[2])
        assert player.content == "Only the table's judge may do that."
        assert table.meta.judges == []
        assert "judges" not in (await h.store.get_game(table.id)).discord


async def test_a_side_judge_still_judges_after_a_restart() -> None:
    async with harness(6, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        deputy = h.emu.create_scripted_user("deputy", h.env.guild)
        table = await open_table(h, "classic", 6)
        await h.wait(lambda: table.game.state.phase is Phase.NIGHT_ZERO)
        await h.judge.run_command(h.env.text, "mafia judge add", member=deputy)
        assert table.meta.judges == [deputy.id]
        await h.bot.close()

        restarted = MafiaBot(h.bot.config, h.store, guild_ready_timeout=0.05)
        async with running(restarted, h.env):
            again = dataclasses.replace(h, bot=restarted)
            copy = await again.wait(lambda: restarted.tables.table_in(h.env.text.id))
            assert copy is not table
            assert copy.meta.judges == [deputy.id]
            reply = await deputy.run_command(h.env.text, "mafia foul", seat=3)
            assert reply.ephemeral
            assert "Foul to #3" in reply.content
            await again.wait(lambda: copy.game.state.foul_count(3) == 1)
            await says(again, deputy, "mafia judge undo")
            await again.wait(lambda: copy.game.state.foul_count(3) == 0)
            await restarted.close()


async def test_a_side_judge_judges_the_game_but_not_who_judges_it() -> None:
    """Handing the table to themselves would put out the judge who added them: only the judge or staff may."""
    async with harness(6, emulator_config=FAST, time_scale=SLOW_CLOCK) as h:
        deputy = h.emu.create_scripted_user("deputy", h.env.guild)
        second = h.emu.create_scripted_user("second", h.env.guild)
        stranger = h.emu.create_scripted_user("stranger", h.env.guild)
        table = await open_table(h, "classic", 6)
        await h.wait(lambda: table.game.state.phase is Phase.NIGHT_ZERO)
        await h.judge.run_command(h.env.text, "mafia judge add", member=deputy)
        await h.judge.run_command(h.env.text, "mafia judge add", member=second)
        assert table.meta.judges == [deputy.id, second.id]
        refusal = t("en", "error.table.side_judge_bench", **h.bot.commands_text(h.env.guild.id))
        for name, member in (("mafia judge pass", deputy), ("mafia judge pass", second),
                             ("mafia judge remove", h.judge), ("mafia judge remove", second),
                             ("mafia judge add", stranger)):
            reply = await deputy.run_command(h.env.text, name, member=member)
            assert reply.ephemeral, (name, member)
            assert reply.content == refusal, (name, member)
        assert table.judge_id == h.judge.id
        assert table.meta.judges == [deputy.id, second.id]
        stored = (await h.store.get_game(table.id)).discord
        assert stored["judges"] == [deputy.id, second.id]
        assert stored.get("judge") in (None, h.judge.id)

        # A side judge may step down.
        down = await deputy.run_command(h.env.text, "mafia judge remove", member=deputy)
        assert not down.ephemeral
        assert down.content == t("en", "judge.side_removed", judge=f"<@{deputy.id}>")
        assert table.meta.judges == [second.id]
        # Staff may hand the table over, even to a side judge, and the old judge loses it.
        admin = admin_of(h)
        handed = await admin.run_command(h.env.text, "mafia judge pass", member=second)
        assert not handed.ephemeral, handed.content
        assert table.judge_id == second.id
        assert table.meta.judges == []
        assert (await h.judge.run_command(h.env.text, "mafia foul", seat=2)).content == (
            "Only the table's judge may do that.")
        assert_no_spec_violations(h.emu)
