"""``mafiabot demo``: a whole game on the emulator, its report, and the same game for the same seed."""

from __future__ import annotations

import difflib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from mafiabot.tools.demo import run_demo
from mafiabot.tools.demo_pictures import save_pictures
from tests.harness import FAST

"""Member edits need not wait for Discord's windows: the public channel does not depend on them."""

GEORGIAN = re.compile("[\u10d0-\u10ff]")


def test_demo_plays_a_whole_game_in_georgian_and_writes_its_report(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    out = subprocess.run(  # noqa: S603 (our own command line)
        [sys.executable, "-m", "mafiabot", "demo", "--ruleset", "classic", "--players", "10", "--seed", "1",
         "--language", "ka", "--time-scale", "0", "--report", str(report), "--web", "127.0.0.1:0"],
        capture_output=True, text=True, check=False, timeout=400,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "Traceback" not in out.stderr
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["result"] in {"red", "black"}
    assert data["days_played"] >= 1
    assert data["spec_violations"] == []
    assert data["still_muted_by_bot"] == []
    assert data["max_member_edits_per_floor_change"] <= 2
    assert data["requests_by_route"]["PATCH /guilds/{guild_id}/members/{user_id}"] > 0
    assert data["language"] == "ka"
    assert data["seed"] == 1
    # The protocol: every seat with its card, and the result the channel announced.
    protocol = data["protocol"]
    assert [seat["seat"] for seat in protocol["seats"]] == list(range(1, 11))
    assert all(seat["role"] for seat in protocol["seats"])
    assert protocol["result"] == data["result"]
    assert "თამაში იწყება" in out.stdout  # the game begins, in Georgian
    assert "— დემო დასრულდა —" in out.stdout  # the human summary, not a JSON line
    assert not out.stdout.rstrip().endswith("}")
    assert data["public_channel"] == [line for line in data["public_channel"] if line]
    assert sum(bool(GEORGIAN.search(line)) for line in data["public_channel"]) > len(data["public_channel"]) // 2
    assert_one_link_per_tier(out.stdout.splitlines())  # --web reaches the demo through the command line


@pytest.mark.parametrize("language", ["en", "ru", "ka"])
async def test_the_same_seed_plays_the_same_game(language: str) -> None:
    first = await run_demo(ruleset="classic", players=10, seed=7, time_scale=0, language=language,
                           emulator_config=FAST)
    second = await run_demo(ruleset="classic", players=10, seed=7, time_scale=0, language=language,
                            emulator_config=FAST)
    diff = "\n".join(difflib.unified_diff(first.public_channel, second.public_channel, lineterm=""))
    assert first.public_channel == second.public_channel, diff
    assert len(first.public_channel) > 30
    assert (first.result, first.days) == (second.result, second.days)
    if language == "ka":
        assert GEORGIAN.search("\n".join(first.public_channel))
    else:
        assert not GEORGIAN.search("\n".join(first.public_channel))
    if language == "en":  # a different seed plays a different game: the seed is what fixes it
        other = await run_demo(ruleset="classic", players=10, seed=8, time_scale=0, emulator_config=FAST)
        assert other.public_channel != first.public_channel


async def test_demo_serves_its_table_on_the_web_and_prints_one_link_per_tier() -> None:
    """In this process at member edits that never wait: the Georgian test above passes ``--web`` to the command."""
    shown: list[str] = []
    await run_demo(ruleset="classic", players=10, seed=1, time_scale=0, echo=shown.append, emulator_config=FAST,
                   web=("127.0.0.1", 0))
    assert_one_link_per_tier(shown)


def assert_one_link_per_tier(printed: list[str]) -> None:
    lines = [line for line in printed if "/s/" in line]
    assert [line.split(":", 1)[0] for line in lines] == ["public", "broadcast", "judge"]
    tokens = set()
    for line in lines:
        match = re.search(r"http://127\.0\.0\.1:(\d+)/s/([A-Za-z0-9_-]+)/circle", line)
        assert match is not None, line
        assert int(match[1]) > 0
        assert len(match[2]) * 6 >= 128  # base64url: six bits a character
        tokens.add(match[2])
        assert f"/s/{match[2]}/strip" in line
    assert len(tokens) == 3


def test_demo_refuses_a_web_address_without_a_port() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "mafiabot", "demo", "--web", "localhost"],
        capture_output=True, text=True, check=False, timeout=60,
    )
    assert out.returncode == 2
    assert "is not HOST:PORT" in out.stderr


async def test_the_demo_saves_every_picture_the_table_posted(tmp_path: Path) -> None:
    folder = tmp_path / "pictures"
    report = await run_demo(ruleset="classic", players=10, seed=7, time_scale=0, language="ru",
                            emulator_config=FAST, pictures=folder)
    names = sorted(path.name for path in folder.iterdir())
    assert sorted(Path(p).name for p in report.pictures) == names
    assert "table-night-0-start.png" in names
    assert any(name.endswith("-morning.png") for name in names)
    assert any(name.endswith("-vote.png") for name in names)
    assert [name for name in names if name.startswith("protocol-")] == ["protocol-1.png"]
    assert all((folder / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for name in names)


def test_the_demo_refuses_a_pictures_folder_that_is_a_file(tmp_path: Path) -> None:
    taken = tmp_path / "taken"
    taken.write_text("x", encoding="utf-8")
    out = subprocess.run(  # noqa: S603 (our own command line)
        [sys.executable, "-m", "mafiabot", "demo", "--time-scale", "0", "--pictures", str(taken)],
        capture_output=True, text=True, check=False, timeout=120,
    )
    assert out.returncode == 4, out.stderr  # cannot write, before any game is played
    assert "is a file" in out.stderr
    assert "Traceback" not in out.stderr


def test_a_picture_name_the_table_used_twice_is_saved_twice(tmp_path: Path) -> None:
    saved = save_pictures(tmp_path, [("table-day-2-vote.png", b"1"), ("table-day-2-vote.png", b"2"),
                                     ("protocol-1.png", b"3")])
    assert [p.name for p in saved] == ["table-day-2-vote.png", "table-day-2-vote-2.png", "protocol-1.png"]
    assert [p.read_bytes() for p in saved] == [b"1", b"2", b"3"]
