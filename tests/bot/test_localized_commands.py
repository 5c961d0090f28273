"""Discord shows Russian command names because the bot registers them; Georgian is a bot setting."""

from __future__ import annotations

import json
from importlib import resources

from mafiabot.demo import harness


def ru(key: str) -> str:
    catalog = json.loads(resources.files("mafiabot").joinpath("locales", "ru.json").read_text(encoding="utf-8"))
    return str(catalog[key])


async def test_synced_commands_carry_russian_names_and_descriptions():
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
