"""``mafiabot export`` on a database: a stored game as the rating sites' files and the FIIM blank."""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pypdf import PdfReader

from engine import GEORGIAN, DeclareDraw, MakeBestMove, Role, Shoot, Timeout
from mafiabot.host.i18n import t
from mafiabot.store import Store
from mafiabot.tools.cli import main
from tests.store.conftest import StartScripted
from tests.store.test_store_history import FIIM_ROLES, GUILD, T0, USERS

ROOT = Path(__file__).resolve().parents[2]


async def mafiabot(*args: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "DISCORD_TOKEN"}
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), environment.get("PYTHONPATH")]))
    return await asyncio.to_thread(
        subprocess.run, [sys.executable, "-m", "mafiabot", "export", *args], capture_output=True, text=True,
        check=False, timeout=120, env=environment)


async def in_process(capsys: pytest.CaptureFixture[str], *args: str) -> subprocess.CompletedProcess[str]:
    """``mafiabot export`` by its ``main`` in this process: each test keeps a run in a process of its own
    (``mafiabot``) for the exit status; the others would only add an interpreter's start-up and imports."""
    capsys.readouterr()
    # The command runs its own event loop; the store's database stays served on this one.
    status = await asyncio.to_thread(main, ["export", *args])
    out = capsys.readouterr()
    return subprocess.CompletedProcess(["mafiabot", "export", *args], status, out.out, out.err)


async def test_a_stored_game_is_written_for_each_site_and_as_the_blank(
        store_url: str, start_game: StartScripted, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = await start_game(GUILD, "fiim", USERS, FIIM_ROLES, at=T0)
    await table.run(Timeout())
    await table.end_floors()
    await table.run(Shoot(seat=1, target=10), Shoot(seat=2, target=10), Shoot(seat=3, target=10), Timeout())
    await table.run(MakeBestMove(seat=10, targets=(1, 2, 4)), DeclareDraw())
    await table.finish()
    ids = tmp_path / "ids.csv"
    ids.write_text("discord_id,site_id\n101,5001\n", encoding="utf-8")
    common = ["--database", store_url, "--game", str(table.game_id), "--output", str(tmp_path)]
    done = await mafiabot(*common, "--format", "mafiaratings", "--club-id", "7", "--event-id", "8",
                          "--moderator-id", "9", "--player-ids", str(ids))
    assert done.returncode == 0, done.stderr
    written = tmp_path / f"mafia-game-{table.game_id}-mafiaratings.json"
    assert done.stdout.strip() == str(written)
    data = json.loads(written.read_text(encoding="utf-8"))
    assert (data["clubId"], data["eventId"], data["moderator"]) == (7, 8, {"id": 9})
    assert data["players"][0]["id"] == 5001
    assert "id" not in data["players"][1]
    assert data["players"][9]["legacy"] == [1, 2, 4]
    assert data["winner"] == "tie"

    done = await in_process(capsys, *common, "--format", "polemica")
    assert done.returncode == 0, done.stderr
    polemica = json.loads((tmp_path / f"mafia-game-{table.game_id}-polemica.json").read_text(encoding="utf-8"))
    assert polemica["players"][9]["guess"]["mafs"] == [1, 2, 4]

    done = await in_process(capsys, *common, "--format", "pdf", "--language", "ka")
    assert done.returncode == 0, done.stderr
    blank = PdfReader(io.BytesIO((tmp_path / f"mafia-game-{table.game_id}-fiim.pdf").read_bytes()))
    assert t("ka", "form.winner") in blank.pages[0].extract_text()


async def test_a_georgian_game_is_refused_for_the_sites_in_one_line(
        store_url: str, start_game: StartScripted, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    roles = (Role.DON, Role.MAFIA, Role.MAFIA, Role.SHERIFF, Role.DOCTOR, Role.MANIAC, *[Role.CITIZEN] * 6)
    table = await start_game(GUILD, GEORGIAN, list(range(201, 213)), roles, at=T0)
    await table.run(DeclareDraw())
    await table.finish()
    out = tmp_path / "out"
    await asyncio.to_thread(out.mkdir)
    done = await mafiabot("--database", store_url, "--game", str(table.game_id), "--format", "polemica",
                          "--output", str(out))
    assert done.returncode == 1
    assert done.stderr.strip() == "mafiabot export: " + t("en", "error.export.seats", format="polemica", seats=12,
                                                             size=10)
    assert await asyncio.to_thread(os.listdir, out) == []
    done = await in_process(capsys, "--database", store_url, "--game", str(table.game_id), "--output", str(out))
    assert done.returncode == 0, done.stderr  # the bot's own format takes it
    assert json.loads((out / f"mafia-game-{table.game_id}.json").read_text())["format"] == "mafiabot.game/1"


async def test_a_database_without_games_or_the_game_is_one_clear_line(
        store: Store, store_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = f"sqlite:///{tmp_path / 'empty.db'}"
    done = await mafiabot("--database", empty, "--game", "1")
    assert done.returncode == 8, done.stderr
    assert done.stderr.startswith("mafiabot export: database: ")
    assert "mafiabot db upgrade" in done.stderr
    done = await in_process(capsys, "--database", store_url, "--game", "999999", "--output", str(tmp_path))
    assert (done.returncode, done.stderr.strip()) == (2, "mafiabot export: --game 999999: no such game in the database")
