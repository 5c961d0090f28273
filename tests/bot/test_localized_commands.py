"""Discord shows Russian command names because the bot registers them; Georgian is a bot setting."""

from __future__ import annotations

import json
from importlib import resources

from mafiabot.core.records import GuildSettings
from mafiabot.emulator.limits import COMMAND_CHARACTERS_MAX, COMMAND_OPTIONS_MAX, command_characters
from mafiabot.testing import harness


def ru(key: str) -> str:
    catalog = json.loads(resources.files("mafiabot").joinpath("locales", "ru.json").read_text(encoding="utf-8"))
    return str(catalog[key])


async def test_synced_commands_carry_russian_names_and_descriptions() -> None:
    async with harness(2) as h:
        registered = list(h.env.app.guild_commands[h.env.guild.id].values())
        group = next(c for c in registered if c["name"] == "mafia")
        assert group["name_localizations"]["ru"] == ru("cmd.mafia.name")
        assert group["description_localizations"]["ru"] == ru("cmd.mafia.desc")
        new = next(o for o in group["options"] if o["name"] == "new")
        assert new["name_localizations"]["ru"] == ru("cmd.new.name")
        assert new["description_localizations"]["ru"] == ru("cmd.new.desc")
        # Every subcommand has a Russian name, and no two share one.
        names = [o["name_localizations"]["ru"] for o in group["options"]]
        assert len(names) == len(set(names)) == len(group["options"])
        # Discord has no Georgian locale: nothing is registered for it.
        assert "ka" not in group["name_localizations"]


FILE_FORMATS = ("json", "csv", "pdf", "mafiaratings", "polemica")
"""Names of file formats and of rating sites: the same in every language."""


async def test_options_and_choices_carry_russian_names() -> None:
    async with harness(2) as h:
        registered = list(h.env.app.guild_commands[h.env.guild.id].values())
        group = next(c for c in registered if c["name"] == "mafia")
        # /mafia ruleset is a subcommand group (type 2): its own options are subcommands.
        subcommands = [c for sub in group["options"]
                       for c in ((sub.get("options") or []) if sub["type"] == 2 else [sub])]
        options = [(sub["name"], o) for sub in subcommands for o in sub.get("options") or []]
        assert options
        for sub, option in options:
            # Every option has a Russian name, so Russian descriptions never sit next to English names.
            assert option["name_localizations"]["ru"] == ru(f"option.{option['name']}"), (sub, option)
            for choice in option.get("choices") or []:
                if choice["name"] in FILE_FORMATS or option["name"] == "language":
                    continue  # file formats read the same in every language; a language is named in its own
                assert (choice.get("name_localizations") or {}).get("ru") not in (None, choice["name"]), (sub, choice)
        # Rulesets are offered by autocomplete, a preset by its name in the server's language.
        await h.store.save_settings(GuildSettings(h.env.guild.id, language="ru"))
        offered = await h.judge.suggestions(h.env.text, "mafia new", "ruleset", "")
        assert {c["value"]: c["name"] for c in offered} == {
            "classic": ru("ruleset.classic"), "georgian": ru("ruleset.georgian"), "fiim": ru("ruleset.fiim")}
        assert await h.judge.suggestions(h.env.text, "mafia new", "ruleset", "груз") == [
            {"name": ru("ruleset.georgian"), "value": "georgian"}]
        # Within one command, no two options share a Russian name (Discord refuses that).
        for sub in subcommands:
            names = [o["name_localizations"]["ru"] for o in sub.get("options") or []]
            assert len(names) == len(set(names)), sub["name"]


async def test_the_command_tree_is_the_same_whichever_cog_loads_first_and_unloading_takes_it_all() -> None:
    import discord
    from discord.ext import commands

    from cogs._group import ORDER
    from mafiabot.host.bot import INITIAL_EXTENSIONS

    trees = []
    for order in (INITIAL_EXTENSIONS, tuple(reversed(INITIAL_EXTENSIONS))):
        bot = commands.Bot(command_prefix=commands.when_mentioned, intents=discord.Intents.none())
        for extension in order:
            await bot.load_extension(extension)
        trees.append([command.to_dict(bot.tree) for command in bot.tree.get_commands()])
        for extension in order:
            await bot.unload_extension(extension)
        assert bot.tree.get_commands() == []
    assert trees[0] == trees[1]
    (group,) = trees[0]
    assert [option["name"] for option in group["options"]] == list(ORDER)


async def test_mafia_fits_discords_command_limits_with_its_localizations() -> None:
    async with harness(2) as h:
        registered = list(h.env.app.guild_commands[h.env.guild.id].values())
        group = next(c for c in registered if c["name"] == "mafia")
        # The emulator refuses a sync over the limits (400/50035): the bot would have no commands at all.
        assert len(group["options"]) <= COMMAND_OPTIONS_MAX
        assert all(len(o.get("options") or []) <= COMMAND_OPTIONS_MAX for o in group["options"])
        size = command_characters(group)  # 5,923 when this test was written, with the Russian names
        assert size <= COMMAND_CHARACTERS_MAX, f"/mafia has {size} of Discord's {COMMAND_CHARACTERS_MAX} characters"
