"""Custom rulesets at the table: uploads, the host's folder, autocomplete, a whole game, exact replays."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from cogs.texts.rules import rules_lines
from engine import Game, Role, command_from_data
from engine.ruleset import NESTED_TOO_DEEPLY
from mafiabot.core.rulesets import MAX_RULESET_BYTES, parse_ruleset
from mafiabot.emulator.users import ScriptedUser
from mafiabot.host.i18n import t
from mafiabot.testing import Driver, Harness, Strategy, harness, open_table
from mafiabot.tools.config import ConfigError, load_config, parse_config
from mafiabot.tools.demo import run_demo
from tests.harness import FAST, admin_of

CLUB = """\
# nine players, classic with a Doctor, a defence round and shorter speeches
base = "classic"
name = "Our Club"
default_players = 9
doctor = true
defense_before_vote = true
speech_seconds = 45
removal_penalty = "0.5"

[setups.9]
citizen = 5
sheriff = 1
mafia = 2
don = 1
"""
BROKEN = CLUB.replace("citizen = 5", "citizen = 4")


async def upload(h: Harness, who: ScriptedUser, filename: str, text: str | bytes) -> str:
    """``/mafia ruleset upload`` with a file; the bot's (possibly deferred) answer."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    reply = await who.run_command(h.env.text, "mafia ruleset upload", file=who.attach(filename, data))
    assert reply.ephemeral
    if reply.response_type == 5:
        return (await reply.wait_final()).content
    return reply.content


async def test_an_uploaded_ruleset_is_offered_played_shown_and_replayed_after_removal() -> None:
    async with harness(9, emulator_config=FAST, time_scale=0.02) as h:
        admin = admin_of(h)
        answer = await upload(h, admin, "club.toml", CLUB)
        assert answer == t("en", "ruleset.saved", name="Our Club", sizes="9", **h.bot.commands_text(h.env.guild.id))
        stored = await h.store.guild_rulesets(h.env.guild.id)
        assert [(r.key, r.name, r.source) for r in stored] == [("our club", "Our Club", CLUB)]

        offered = await h.judge.suggestions(h.env.text, "mafia new", "ruleset", "")
        assert {"name": "Our Club", "value": "our club"} in offered
        assert [c["value"] for c in offered][:3] == ["classic", "georgian", "fiim"]
        assert await h.judge.suggestions(h.env.text, "mafia new", "ruleset", "club") == [
            {"name": "Our Club", "value": "our club"}
        ]
        assert await h.judge.suggestions(h.env.text, "mafia settings", "ruleset", "OUR") == [
            {"name": "Our Club", "value": "our club"}
        ]

        table = await open_table(h, "our club", 9)
        assert table.ruleset == parse_ruleset(CLUB, default_name="club")
        assert table.ruleset.roles_for(9)[Role.DOCTOR] == 1
        shown = await h.players[0].run_command(h.env.text, "mafia rules")
        assert shown.content == "\n".join(rules_lines("en", table.ruleset, 9))
        assert shown.content.startswith("Rules: Our Club (based on Classic)")
        await Driver(h, table, Strategy(5)).play()
        await table.done.wait()
        assert table.game.outcome() is not None

        # The server's default, shown by /mafia rules in each language where no table runs.
        other = h.emu.create_channel(h.env.guild, "lounge")
        await asyncio.wait_for(h.bot.wait_for("guild_channel_create", check=lambda c: c.id == other.id), 5)
        for language in ("en", "ru", "ka"):
            saved = await admin.run_command(h.env.text, "mafia settings", ruleset="Our Club", language=language)
            assert saved.content.startswith(t(language, "settings.saved")), saved.content
            rules = await h.players[0].run_command(other, "mafia rules")
            assert rules.content == "\n".join(rules_lines(language, table.ruleset, 9))
            assert "Our Club" in rules.content
            assert t(language, "role.doctor") in rules.content
        assert (await h.store.get_settings(h.env.guild.id)).default_ruleset == "our club"

        league = await h.judge.suggestions(h.env.text, "mafia top", "ruleset", "club")
        assert league == [{"name": "Our Club", "value": "Our Club"}]
        top = await h.judge.run_command(h.env.text, "mafia top", ruleset="Our Club")
        assert t("ka", "top.ruleset", ruleset="Our Club") in top.content
        assert top.content.count("\n") == 9  # the title and the nine players of the game

        refused = await admin.run_command(h.env.text, "mafia ruleset remove", ruleset="our club")
        commands = h.bot.commands_text(h.env.guild.id)
        assert refused.content == t("ka", "error.ruleset.is_default", name="Our Club", **commands)
        await admin.run_command(h.env.text, "mafia settings", ruleset="classic", language="en")
        removed = await admin.run_command(h.env.text, "mafia ruleset remove", ruleset="our club")
        assert removed.content == t("en", "ruleset.removed", name="Our Club")
        assert await h.store.guild_rulesets(h.env.guild.id) == []
        assert {"name": "Our Club", "value": "our club"} not in await h.judge.suggestions(
            h.env.text, "mafia new", "ruleset", "")

        game = await h.store.get_game(table.id)
        replayed = Game.replay(game.rules(), [command_from_data(c.command) for c in game.log])
        assert game.ruleset_name == "Our Club"
        assert game.rules() == table.ruleset
        assert replayed.events == table.game.events
        assert replayed.outcome() == table.game.outcome()
        protocol = await h.players[0].run_command(h.env.text, "mafia game", id=table.id)
        assert protocol.message is not None
        assert "Our Club" in protocol.content


async def test_refused_uploads_name_the_key_and_store_nothing() -> None:
    async with harness(2, emulator_config=FAST) as h:
        admin = admin_of(h)
        player = h.players[0]
        assert await upload(h, player, "club.toml", CLUB) == t("en", "error.ruleset.not_admin")
        assert h.emu.attachments.downloads == []  # refused before the bot fetched the file
        assert await upload(h, admin, "club.toml", BROKEN) == t(
            "en", "error.ruleset.invalid", key="setups.9", reason="the roles add up to 8, not 9")
        assert (await upload(h, admin, "club.toml", "name = [")).startswith("Not saved: toml: ")
        unknown = await upload(h, admin, "club.toml", "speach_seconds = 3\n" + CLUB)
        assert unknown == t("en", "error.ruleset.unknown_setting_guess", key="speach_seconds", guess="speech_seconds")
        far = await upload(h, admin, "club.toml", "banana = 3\n" + CLUB)
        assert far == t("en", "error.ruleset.unknown_setting", key="banana")
        long_night = await upload(h, admin, "club.toml", CLUB.replace("speech_seconds = 45", "speech_seconds = 7200"))
        assert long_night == t("en", "error.ruleset.too_high", key="speech_seconds", max=3600)
        penalty = await upload(h, admin, "club.toml", CLUB.replace('"0.5"', '"-1"'))
        assert penalty == t("en", "error.ruleset.out_of_range", key="removal_penalty", min=0, max=10)
        preset = await upload(h, admin, "club.toml", CLUB.replace('"Our Club"', '"Classic"'))
        assert preset == t("en", "error.ruleset.preset_name", key="name", name="Classic")
        huge = CLUB + "#" * MAX_RULESET_BYTES
        assert await upload(h, admin, "club.toml", huge) == t(
            "en", "error.ruleset.too_large", key="file", size=len(huge), max=MAX_RULESET_BYTES)
        assert await upload(h, admin, "club.txt", CLUB) == t("en", "error.ruleset.not_toml", file="club.txt")
        assert await upload(h, admin, "club.toml", b"\xff\xfe") == t("en", "error.ruleset.not_text", key="file")
        assert await h.store.guild_rulesets(h.env.guild.id) == []
        await admin.run_command(h.env.text, "mafia settings", language="ru")
        refused = await upload(h, admin, "club.toml", BROKEN)
        assert refused == t("ru", "error.ruleset.invalid", key="setups.9", reason="the roles add up to 8, not 9")
        fouls = await upload(h, admin, "club.toml", "foul_removal_at = 40\n" + CLUB)
        assert fouls == t("ru", "error.ruleset.too_high", key="foul_removal_at", max=10)
        defence = await upload(h, admin, "club.toml", "defence_before_vote = true\n" + CLUB)
        assert defence == t("ru", "error.ruleset.unknown_setting_guess", key="defence_before_vote",
                            guess="defense_before_vote")
        unknown_default = await admin.run_command(h.env.text, "mafia settings", ruleset="nope")
        assert unknown_default.content == t("ru", "settings.invalid.ruleset", value="nope")
        assert (await h.store.get_settings(h.env.guild.id)).default_ruleset == "classic"
        assert await h.store.guild_rulesets(h.env.guild.id) == []


async def test_the_hosts_folder_is_read_at_start_and_offered_everywhere(tmp_path: Path) -> None:
    (tmp_path / "friday.toml").write_text(CLUB.replace('"Our Club"', '"Friday Night"'), encoding="utf-8")
    async with harness(2, emulator_config=FAST, config={"game": {"rulesets_dir": str(tmp_path),
                                                                 "default_ruleset": "friday night"}}) as h:
        offered = await h.judge.suggestions(h.env.text, "mafia new", "ruleset", "fri")
        assert offered == [{"name": "Friday Night", "value": "friday night"}]
        listed = await h.judge.run_command(h.env.text, "mafia ruleset list")
        assert t("en", "ruleset.list.line", name="Friday Night", key="friday night",
                 source=t("en", "ruleset.source.host"), sizes="9") in listed.content
        rules = await h.judge.run_command(h.env.text, "mafia rules")
        assert rules.content.startswith("Rules: Friday Night (based on Classic)")
        admin = admin_of(h)
        taken = await upload(h, admin, "f.toml", CLUB.replace('"Our Club"', '"friday NIGHT"'))
        assert taken == t("en", "error.ruleset.host_name", name="friday NIGHT")


def test_a_bad_file_in_the_folder_stops_the_start_naming_file_and_key(tmp_path: Path) -> None:
    (tmp_path / "good.toml").write_text(CLUB, encoding="utf-8")
    (tmp_path / "bad.toml").write_text(BROKEN.replace("Our Club", "Bad"), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        parse_config({"game": {"rulesets_dir": str(tmp_path)}})
    assert str(caught.value) == f"game.rulesets_dir: {tmp_path / 'bad.toml'}: setups.9: the roles add up to 8, not 9"
    with pytest.raises(ConfigError, match=r"game.rulesets_dir: .*nowhere: rulesets_dir: no such folder"):
        parse_config({"game": {"rulesets_dir": str(tmp_path / "nowhere")}})


def test_the_default_ruleset_is_checked_against_presets_and_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "rules"
    folder.mkdir()
    (folder / "club.toml").write_text(CLUB, encoding="utf-8")
    config = tmp_path / "config.toml"
    config.write_text('[game]\nrulesets_dir = "rules"\ndefault_ruleset = "Our Club"\n', encoding="utf-8")
    assert load_config(config).game.rulesets_dir == str(folder)  # beside the config, wherever the bot starts
    assert parse_config({"game": {"default_ruleset": "ge"}}).game.default_ruleset == "ge"
    unknown = r"^game.default_ruleset: unknown ruleset 'Our Club'; choose one of classic, georgian, fiim$"
    with pytest.raises(ConfigError, match=unknown):
        parse_config({"game": {"default_ruleset": "Our Club"}})
    with pytest.raises(ConfigError, match=r"choose one of classic, georgian, fiim, our club"):
        parse_config({"game": {"rulesets_dir": str(folder), "default_ruleset": "weekly"}})


async def test_show_gives_the_rules_in_words_and_the_file_back() -> None:
    async with harness(2, emulator_config=FAST) as h:
        admin = admin_of(h)
        await upload(h, admin, "club.toml", CLUB)
        shown = await h.players[0].run_command(h.env.text, "mafia ruleset show", ruleset="our club")
        rules = parse_ruleset(CLUB, default_name="club")
        assert shown.content == "\n".join(rules_lines("en", rules, 9))
        assert h.emu.uploads[-1] == ("our-club.toml", CLUB.encode("utf-8"))
        preset = await h.players[0].run_command(h.env.text, "mafia ruleset show", ruleset="ge")
        assert preset.content.startswith("Rules: Georgian")
        missing = await h.players[0].run_command(h.env.text, "mafia ruleset show", ruleset="nope")
        assert missing.content == t("en", "error.ruleset.not_found", name="nope", **h.bot.commands_text(h.env.guild.id))


async def test_demo_and_simulate_take_a_file_or_a_name_in_a_folder(tmp_path: Path) -> None:
    """The demo plays a file's ruleset, simulate finds one by name in a folder, a broken file is exit 3.

    The demo plays in this process at member edits that never wait (``FAST``): at Discord's 5 per
    5 s its game took 40 s of waiting on a bucket this test is not about. ``tests/bot/test_demo_cli.py``
    runs the whole command in a process of its own; a broken file's exit status is checked below.
    """
    club = tmp_path / "club.toml"
    club.write_text(CLUB, encoding="utf-8")
    shown: list[str] = []
    demo = await run_demo(ruleset=str(club), players=0, seed=3, time_scale=0, echo=shown.append,
                          emulator_config=FAST)
    assert demo.result in {"red", "black"}
    assert demo.spec_violations == []
    assert (demo.ruleset, demo.players) == ("Our Club", 9)
    assert any("Our Club" in line for line in shown)
    simulate = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "mafiabot", "simulate", "--ruleset", "our club", "--rulesets-dir", str(tmp_path),
         "--games", "200", "--json"],
        capture_output=True, text=True, check=False, timeout=120,
    )
    assert simulate.returncode == 0, simulate.stderr
    assert json.loads(simulate.stdout)["games"] == 200
    broken = tmp_path / "broken.toml"
    broken.write_text(BROKEN, encoding="utf-8")
    refused = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "mafiabot", "demo", "--ruleset", str(broken)],
        capture_output=True, text=True, check=False, timeout=60,
    )
    assert refused.returncode == 3  # a bad file (README.md's exit statuses)
    assert f"{broken}: setups.9: the roles add up to 8, not 9" in refused.stderr


def test_a_bad_folder_stops_mafiabot_run_before_it_connects(tmp_path: Path) -> None:
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "club.toml").write_text(BROKEN, encoding="utf-8")
    config = tmp_path / "config.toml"
    config.write_text('[game]\nrulesets_dir = "rules"\n', encoding="utf-8")
    run = subprocess.run(  # noqa: S603 (our own command line)
        [sys.executable, "-m", "mafiabot", "run", "--config", str(config)],
        capture_output=True, text=True, check=False, timeout=60, env={"DISCORD_TOKEN": "x.y.z", "PATH": ""},
    )
    assert run.returncode == 3  # a bad file (README.md's exit statuses)
    where = tmp_path / "rules" / "club.toml"
    assert run.stderr.strip() == (f"mafiabot run: config: game.rulesets_dir: {where}: setups.9: the roles add up to "
                                  "8, not 9 (config.example.toml lists every key)")


async def test_the_ruleset_group_fits_in_mafia() -> None:
    async with harness(1) as h:
        mafia = next(c for c in h.env.app.guild_commands[h.env.guild.id].values() if c["name"] == "mafia")
        group = next(o for o in mafia["options"] if o["name"] == "ruleset")
        assert [o["name"] for o in group["options"]] == ["upload", "list", "show", "remove"]
        assert len(mafia["options"]) <= 25, "Discord takes at most 25 subcommands and groups in a group"


async def test_a_replaced_ruleset_changes_only_tables_opened_afterwards() -> None:
    async with harness(2, emulator_config=FAST) as h:
        admin = admin_of(h)
        await upload(h, admin, "club.toml", CLUB)
        for person in [*h.players, h.judge]:
            person.join_voice(h.env.voice)
        opened = await h.judge.run_command(h.env.text, "mafia new", ruleset="Our Club", seats=9)
        assert opened.message is not None
        assert "Our Club" in opened.content
        lobby = h.bot.tables.lobby_in(h.env.text.id)
        assert lobby is not None
        faster = CLUB.replace("speech_seconds = 45", "speech_seconds = 30")
        replaced = await upload(h, admin, "other-name.toml", faster)
        assert replaced == t("en", "ruleset.replaced", name="Our Club", sizes="9")
        assert lobby.ruleset.speech_seconds == 45
        stored = await h.store.get_guild_ruleset(h.env.guild.id, "our club")
        assert stored is not None
        assert (stored.ruleset.speech_seconds, stored.source) == (30, faster)
        for disguised in ("<@&1> club", "Our\u200bClub", "\u202eCLUB", "x" * 65):
            marked = await upload(h, admin, "club.toml", CLUB.replace('"Our Club"', f'"{disguised}"'))
            assert marked == t("en", "error.ruleset.bad_name", key="name", max=64), disguised
        unnamed = await upload(h, admin, "Friday.toml", CLUB.replace('name = "Our Club"\n', ""))
        assert unnamed == t("en", "ruleset.saved", name="Friday", sizes="9", **h.bot.commands_text(h.env.guild.id))
        assert [r.key for r in await h.store.guild_rulesets(h.env.guild.id)] == ["friday", "our club"]


async def test_a_game_in_play_resumes_with_its_own_copy_after_the_ruleset_is_removed() -> None:
    async with harness(9, emulator_config=FAST, time_scale=0.05) as h:
        admin = admin_of(h)
        await upload(h, admin, "club.toml", CLUB)
        table = await open_table(h, "our club", 9)
        removed = await admin.run_command(h.env.text, "mafia ruleset remove", ruleset="Our Club")
        assert removed.content == t("en", "ruleset.removed", name="Our Club")
        stored = await h.store.get_game(table.id)
        restarted = h.bot.build_tables()
        await restarted.resume(stored)
        copy = restarted.tables[table.id]
        copy.stop()
        await copy.voice.close()
        assert copy.ruleset == table.ruleset == parse_ruleset(CLUB, default_name="club")
        assert copy.game.events == table.game.events[:len(copy.game.events)]
        table.stop()


HOSTILE_UPLOADS = {
    # file text: (the key the answer names, its reason)
    'removal_penalty = "NaN"\n' + CLUB.replace('removal_penalty = "0.5"\n', ""):
        ("removal_penalty", "must be a finite number"),
    "name = " + "[" * 3000 + "]" * 3000 + "\n": ("toml", NESTED_TOO_DEEPLY),
    "removal_penalty = inf\n": ("removal_penalty", "must be a finite number"),
    "doctor_min_players = -1\n": ("doctor_min_players", "must not be negative"),
}


async def test_hostile_uploads_get_their_key_and_reason_and_store_nothing() -> None:
    async with harness(2, emulator_config=FAST) as h:
        admin = admin_of(h)
        for text, (key, reason) in HOSTILE_UPLOADS.items():
            assert len(text) < 8 * 1024
            answer = await upload(h, admin, "hostile.toml", text)
            assert answer == t("en", "error.ruleset.invalid", key=key, reason=reason)
        assert await h.store.guild_rulesets(h.env.guild.id) == []


@pytest.mark.parametrize("text", list(HOSTILE_UPLOADS)[:3], ids=["nan", "deep", "inf"])
def test_a_hostile_file_in_the_folder_stops_mafiabot_run_as_a_bad_file(tmp_path: Path, text: str) -> None:
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "bad.toml").write_text(text, encoding="utf-8")
    config = tmp_path / "config.toml"
    config.write_text('[game]\nrulesets_dir = "rules"\n', encoding="utf-8")
    run = subprocess.run(  # noqa: S603 (our own command line)
        [sys.executable, "-m", "mafiabot", "run", "--config", str(config)],
        capture_output=True, text=True, check=False, timeout=60, env={"DISCORD_TOKEN": "x.y.z", "PATH": ""},
    )
    key, reason = HOSTILE_UPLOADS[text]
    assert run.returncode == 3, run.stderr  # a bad file, not a bug (README.md's exit statuses)
    assert run.stderr.strip() == (f"mafiabot run: config: game.rulesets_dir: {tmp_path / 'rules' / 'bad.toml'}: "
                                  f"{key}: {reason} (config.example.toml lists every key)")
