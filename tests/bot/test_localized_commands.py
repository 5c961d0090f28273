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


async def test_options_and_choices_carry_russian_names():
    async with harness(2) as h:
        registered = list(h.env.app.guild_commands[h.env.guild.id].values())
        group = next(c for c in registered if c["name"] == "mafia")
        options = [(sub["name"], o) for sub in group["options"] for o in sub.get("options") or []]
        assert options
        for sub, option in options:
            # Every option has a Russian name, so Russian descriptions never sit next to English names.
            assert option["name_localizations"]["ru"] == ru(f"option.{option['name']}"), (sub, option)
            for choice in option.get("choices") or []:
                if choice["name"] in ("json", "csv") or option["name"] == "language":
                    continue  # file formats read the same in every language; a language is named in its own
                assert (choice.get("name_localizations") or {}).get("ru") not in (None, choice["name"]), (sub, choice)
        new = next(s for s in group["options"] if s["name"] == "new")
        ruleset = next(o for o in new["options"] if o["name"] == "ruleset")
        assert {c["value"]: c["name_localizations"]["ru"] for c in ruleset["choices"]} == {
            "classic": ru("ruleset.classic"), "georgian": ru("ruleset.georgian"), "fiim": ru("ruleset.fiim")}
        # Within one command, no two options share a Russian name (Discord refuses that).
        for sub in group["options"]:
            names = [o["name_localizations"]["ru"] for o in sub.get("options") or []]
            assert len(names) == len(set(names)), sub["name"]
