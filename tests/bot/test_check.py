"""``mafiabot check`` and ``mafiabot invite-url`` against the emulator, and the example config."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from mafiabot.emulator import EmulatorConfig
from mafiabot.emulator.state import ChannelType, Overwrite, Permission
from mafiabot.emulator.testing import BOT_PERMISSIONS, Table, assert_no_spec_violations, emulated_guild
from mafiabot.tools.check import check
from mafiabot.tools.cli import main
from mafiabot.tools.config import Config, load_config

ROOT = Path(__file__).resolve().parents[2]
NEEDED = (
    Permission.VIEW_CHANNEL | Permission.SEND_MESSAGES | Permission.READ_MESSAGE_HISTORY | Permission.ADD_REACTIONS
    | Permission.MANAGE_MESSAGES | Permission.CREATE_PRIVATE_THREADS | Permission.SEND_MESSAGES_IN_THREADS
    | Permission.MANAGE_THREADS | Permission.CONNECT | Permission.SPEAK | Permission.MUTE_MEMBERS
    | Permission.ATTACH_FILES
)
"""The issue's list, plus seeing the channel, posting in it and attaching the pictures, by Discord's own bit values."""


CHECKED_TWICE = EmulatorConfig(identify_window=0.0)
"""For a test that runs ``check`` twice: Discord's one IDENTIFY per 5 s would hold the second back 5 s."""


def write_config(tmp_path: Path, env: Table, token: str | None = None) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(
        "[discord]\n"
        f'token = "{token or env.token}"\n'
        f'api_base = "{env.emu.api_url}"\n'
        f'gateway_url = "{env.emu.gateway_url}"\n',
        encoding="utf-8",
    )
    return path


def invite_permissions(url: str) -> int:
    return int(parse_qs(urlparse(url).query)["permissions"][0])


async def test_check_names_a_missing_server_permission_and_a_channel_override(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DISCORD_TOKEN", raising=False)
    async with emulated_guild(members=2, bot_permissions=BOT_PERMISSIONS & ~Permission.MUTE_MEMBERS) as env:
        deny = Overwrite(id=env.guild.id, type=0, deny=int(Permission.ADD_REACTIONS))
        env.emu.create_channel(env.guild, "quiet-table", overwrites=[deny])
        report = await check(load_config(write_config(tmp_path, env)))
        text = "\n".join(report.lines())
        assert not report.ok
        assert "[ok] token: logged in as mafiabot" in text
        assert "[ok] gateway: connected" in text
        server = f"server 'Mafia Club' ({env.guild.id})"
        assert f"[missing] {server}: missing server-wide: Mute Members\n" in text
        assert f"[missing] {server} #quiet-table: missing in this channel: Add Reactions\n" in text
        assert "#table:" not in text  # the channels that are fine are not reported
        assert re.search(r"fix: Edit Channel > Permissions: allow Add Reactions", text)
        assert report.invite_url is not None
        assert invite_permissions(report.invite_url) == NEEDED
        assert_no_spec_violations(env.emu)


async def test_check_cli_passes_on_a_ready_server_and_prints_the_invite_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("DISCORD_TOKEN", raising=False)
    async with emulated_guild(members=2) as env:
        path = write_config(tmp_path, env)
        # The command line runs its own event loop; the emulator keeps serving on this one.
        status = await asyncio.to_thread(main, ["check", "--config", str(path)])
        out = capsys.readouterr().out
        assert status == 0, out
        assert "every permission a table needs" in out
        url = next(line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("invite URL"))
        assert invite_permissions(url) == NEEDED
        assert parse_qs(urlparse(url).query)["client_id"] == [str(env.app.id)]


async def test_check_reports_a_rejected_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISCORD_TOKEN", raising=False)
    async with emulated_guild(members=1) as env:
        report = await check(load_config(write_config(tmp_path, env, token="123.not-the-token")))  # noqa: S106
        text = "\n".join(report.lines())
        assert "[refused] token: Discord refused the token" in text
        assert "Reset Token" in text


def test_check_cli_names_a_bad_config_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[game]\nlangauge = "ru"\n', encoding="utf-8")
    assert main(["check", "--config", str(path)]) == 3
    err = capsys.readouterr().err
    assert "game.langauge: unknown key" in err
    path.write_text("[game]\ntime_scale = -1\n", encoding="utf-8")
    assert main(["check", "--config", str(path)]) == 3
    assert "game.time_scale" in capsys.readouterr().err


def test_invite_url_asks_for_exactly_the_needed_permissions(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DISCORD_TOKEN", raising=False)
    assert main(["invite-url", "--client-id", "1234567890"]) == 0
    url = capsys.readouterr().out.strip()
    query = parse_qs(urlparse(url).query)
    assert query["client_id"] == ["1234567890"]
    assert set(query["scope"][0].split()) == {"bot", "applications.commands"}
    assert invite_permissions(url) == NEEDED
    monkeypatch.setenv("DISCORD_TOKEN", "MTIzNDU2Nzg5MDEyMzQ1Njc4.x.y")
    assert main(["invite-url"]) == 0
    assert "client_id=123456789012345678" in capsys.readouterr().out
    monkeypatch.delenv("DISCORD_TOKEN")
    assert main(["invite-url"]) == 6


def test_the_example_config_loads_and_names_every_key() -> None:
    config = load_config(ROOT / "config.example.toml")
    assert config.game.default_ruleset == "classic"
    text = (ROOT / "config.example.toml").read_text(encoding="utf-8")
    for section, model in config:
        for key in type(model).model_fields:
            assert re.search(rf"^#?\s*{key}\s*=", text, re.MULTILINE), f"{section}.{key} is not in the example"


async def test_check_names_a_2fa_requirement_the_owner_does_not_meet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DISCORD_TOKEN", raising=False)
    async with emulated_guild(members=2, config=CHECKED_TWICE) as env:
        env.app.owner_mfa = False
        env.emu.require_mfa(env.guild)
        path = write_config(tmp_path, env)
        text = "\n".join((await check(load_config(path))).lines())
        server = f"server 'Mafia Club' ({env.guild.id})"
        assert f"[refused] {server}: the server requires 2FA for moderation and the bot's owner has no 2FA" in text
        assert "Manage Messages, Manage Threads (error 60003)" in text
        env.app.owner_mfa = True
        report = await check(load_config(path))
        text = "\n".join(report.lines())
        assert "2FA" not in text
        assert f"[ok] {server}: every permission a table needs" in text


async def test_check_names_a_channel_without_private_threads_and_risky_roles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DISCORD_TOKEN", raising=False)
    async with emulated_guild(members=2, config=CHECKED_TWICE) as env:
        env.emu.create_channel(env.guild, "news", ChannelType.GUILD_ANNOUNCEMENT)
        env.emu.create_role(env.guild, "Moderators", int(Permission.MANAGE_THREADS | Permission.MUTE_MEMBERS))
        report = await check(load_config(write_config(tmp_path, env)))
        text = "\n".join(report.lines())
        server = f"server 'Mafia Club' ({env.guild.id})"
        assert f"[misconfigured] {server} #news: an announcement channel cannot hold a private thread" in text
        assert (f"[warning] {server} role 'Moderators': grants Manage Threads (reads the mafia's private thread), "
                "Mute Members (unmutes themselves out of turn)") in text
        assert "@everyone" not in text
        assert not report.ok
        env.guild.everyone.permissions |= int(Permission.MUTE_MEMBERS)
        text = "\n".join((await check(load_config(write_config(tmp_path, env)))).lines())
        assert f"[misconfigured] {server} @everyone: every member holds Mute Members" in text


async def test_check_reports_the_database_and_its_migration_level(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from mafiabot.store import sqlite_url, upgrade

    monkeypatch.delenv("DISCORD_TOKEN", raising=False)
    async with emulated_guild(members=1, config=CHECKED_TWICE) as env:
        path = write_config(tmp_path, env)
        database = tmp_path / "mafia.sqlite3"
        with path.open("a", encoding="utf-8") as file:
            file.write(f'[database]\nurl = "{sqlite_url(database)}"\n')
        text = "\n".join((await check(load_config(path))).lines())
        assert "[ok] database: " in text
        assert "does not exist yet" in text
        assert not database.exists()  # the check creates nothing
        upgrade(sqlite_url(database))
        text = "\n".join((await check(load_config(path))).lines())
        assert re.search(r"\[ok\] database: sqlite:///\S+mafia\.sqlite3: at the newest schema \(\w+\)", text)
    nonsense = Config.model_validate({"database": {"url": "nonsense"}})
    assert "[misconfigured] database: [database] url 'nonsense' is not usable" in "\n".join(
        (await check(nonsense)).lines())
    closed = Config.model_validate({"database": {"url": "postgresql+psycopg://mafia@127.0.0.1:1/mafia"}})
    assert "[unreachable] database: postgresql+psycopg://mafia@127.0.0.1:1/mafia" in "\n".join(
        (await check(closed)).lines())


def test_check_warns_about_a_token_in_a_file_others_can_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DISCORD_TOKEN", raising=False)
    path = tmp_path / "config.toml"
    path.write_text('[discord]\ntoken = "123.abc"\napi_base = "http://127.0.0.1:9/api/v10"\n'
                    f'[database]\nurl = "sqlite:///{tmp_path}/x.sqlite3"\n', encoding="utf-8")
    path.chmod(0o644)
    assert main(["check", "--config", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"[warning] config: {path} holds a bot token and other users may read it (mode 644)" in out
    assert f"fix: chmod 600 {path}" in out
    assert "[unreachable] token: cannot reach http://127.0.0.1:9/api/v10" in out
    path.chmod(0o600)
    main(["check", "--config", str(path)])
    assert "[warning] config" not in capsys.readouterr().out


def test_check_names_the_rulesets_of_the_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DISCORD_TOKEN", raising=False)
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "club.toml").write_text('base = "georgian"\nname = "Our Club"\n', encoding="utf-8")
    path = tmp_path / "config.toml"
    path.write_text('[game]\nrulesets_dir = "rules"\n', encoding="utf-8")
    assert main(["check", "--config", str(path)]) == 1  # no token
    out = capsys.readouterr().out
    assert f"[ok] rulesets: the presets and 1 from {tmp_path / 'rules'}: Our Club (11/12 players)" in out
