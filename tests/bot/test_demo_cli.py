"""``mafiabot demo`` from the command line: a whole game on the emulator, and its report."""

from __future__ import annotations

import json
import subprocess
import sys


def test_demo_plays_a_whole_game_and_writes_its_report(tmp_path):
    report = tmp_path / "report.json"
    out = subprocess.run(  # noqa: S603 (our own command line)
        [sys.executable, "-m", "mafiabot", "demo", "--ruleset", "classic", "--players", "10", "--seed", "1",
         "--report", str(report)],
        capture_output=True, text=True, check=False, timeout=400,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["result"] in {"red", "black"}
    assert data["days_played"] >= 1
    assert data["spec_violations"] == []
    assert data["still_muted_by_bot"] == []
    assert data["max_member_edits_per_floor_change"] <= 2
    assert data["requests_by_route"]["PATCH /guilds/{guild_id}/members/{user_id}"] > 0
    assert "The game begins" in out.stdout
