"""Command sync under Discord's limits: 25 options a level, 8,000 characters a slash command (400/50035).

Each refused sync changes nothing: the commands registered before stay as they were.
"""

from __future__ import annotations

from typing import Any

import discord
import pytest

from mafiabot.emulator.limits import COMMAND_CHARACTERS_MAX, command_characters
from mafiabot.emulator.testing import Table
from tests.emulator.emulator_bot import MafiaTestBot


def sub(name: str, description: str = "d") -> dict[str, Any]:
    return {"type": 1, "name": name, "description": description}


def command(options: list[dict[str, Any]], description: str = "mafia") -> dict[str, Any]:
    return {"type": 1, "name": "mafia", "description": description, "options": options}


async def overwrite(bot: MafiaTestBot, table: Table, commands: list[dict[str, Any]]) -> list[Any]:
    assert bot.application_id is not None
    return await bot.http.bulk_upsert_guild_commands(bot.application_id, table.guild.id, commands)


async def refused(bot: MafiaTestBot, table: Table, commands: list[dict[str, Any]]) -> discord.HTTPException:
    before = dict(table.app.guild_commands[table.guild.id])
    with pytest.raises(discord.HTTPException) as caught:
        await overwrite(bot, table, commands)
    assert table.app.guild_commands[table.guild.id] == before
    return caught.value


@pytest.mark.spec_violations_expected  # the spec's own maxItems rejects the 26th as well
async def test_twenty_five_subcommands_and_groups_fit_and_a_twenty_sixth_is_refused(
    table: Table, bot: MafiaTestBot
) -> None:
    group = {"type": 2, "name": "group", "description": "g", "options": [sub(f"s{i}") for i in range(25)]}
    (made,) = await overwrite(bot, table, [command([group, *(sub(f"c{i}") for i in range(24))])])
    assert len(made["options"]) == 25
    error = await refused(bot, table, [command([sub(f"c{i}") for i in range(26)])])
    assert (error.status, error.code) == (400, 50035)
    error = await refused(bot, table, [command([{**group, "options": [sub(f"s{i}") for i in range(26)]}])])
    assert (error.status, error.code) == (400, 50035)
    choices = [{"name": f"n{i}", "value": f"v{i}"} for i in range(26)]
    option = {"type": 3, "name": "pick", "description": "p", "choices": choices}
    error = await refused(bot, table, [command([{**sub("one"), "options": [option]}])])
    assert (error.status, error.code) == (400, 50035)


def big(localized: int) -> dict[str, Any]:
    """A command of exactly 7,961 characters plus ``localized``: its description's longest localization."""
    options = [{"type": 3, "name": f"o{j:02}", "description": "o" * 99} for j in range(25)]
    subs = [{**sub(f"s{i}", "s" * 100), "options": options} for i in range(3)]
    return {**command(subs, description="m" * 39),
            "description_localizations": {"ru": "я" * localized, "ka": "ა" * 20}}


async def test_a_slash_command_over_eight_thousand_characters_is_refused(table: Table, bot: MafiaTestBot) -> None:
    # Names, descriptions and values; of a localized field only the longest version counts, not their sum.
    fits = big(39)
    assert command_characters(fits) == COMMAND_CHARACTERS_MAX
    await overwrite(bot, table, [fits])
    over = big(40)
    error = await refused(bot, table, [over])
    assert (error.status, error.code) == (400, 50035)
    assert bot.application_id is not None
    with pytest.raises(discord.HTTPException) as caught:
        await bot.http.upsert_guild_command(bot.application_id, table.guild.id, over)
    assert caught.value.code == 50035
