"""The numbered rule scenarios as timelines, and the exit statuses of ``mafiabot replay``.

Each scenario's note cites the docs/rules.md section it checks.

Every ``tests/scenarios/*.json`` is played from the deal by the real engine; a scenario passes when
no command is rejected unless it says so and every checkpoint holds. See ``docs/timeline.md``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mafiabot.tools.timeline import load_timeline, run_timeline

SCENARIOS = Path(__file__).parent / "scenarios"
SCENARIO_FILES = sorted(SCENARIOS.glob("*.json"))
ROOT = Path(__file__).resolve().parent.parent

SEATING = ["don", "mafia", "mafia", "sheriff", "citizen", "citizen", "citizen", "citizen", "citizen", "citizen"]


def _replay(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 (our own interpreter and module, no shell)
        [sys.executable, "-m", "mafiabot", "replay", str(path)],
        capture_output=True, text=True, cwd=ROOT, timeout=120, check=False,
    )


def _write(tmp_path: Path, data: Any, name: str = "timeline.json") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def test_every_spec_scenario_has_a_file() -> None:
    numbers = {int(path.name[:2]) for path in SCENARIO_FILES}
    assert numbers == set(range(1, 31))


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=[path.stem for path in SCENARIO_FILES])
def test_scenario(path: Path) -> None:
    result = run_timeline(load_timeline(path))
    assert result.rejected is None, (
        f"command {result.rejected_index} was rejected: {result.rejected.code} {result.rejected.data}"
    )
    assert result.failures == []
    assert result.exit_status == 0


def test_replay_cli_prints_the_final_state() -> None:
    path = SCENARIOS / "01-classic-parity-win.json"
    done = _replay(path)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["winner"] == "black"
    assert out["reason"] == "parity"
    assert out["phase"] == "ended"
    assert "failures" not in out
    assert "rejected" not in out


def test_replay_cli_exits_2_on_an_unexpected_rejection(tmp_path: Path) -> None:
    path = _write(tmp_path, {
        "ruleset": "classic",
        "seating": SEATING,
        "commands": [{"type": "Shoot", "seat": 1, "target": 5, "note": "no shots on Night 0"}],
    })
    done = _replay(path)
    assert done.returncode == 2
    assert "night.night_zero" in done.stderr
    out = json.loads(done.stdout)
    assert out["rejected"]["code"] == "night.night_zero"
    assert out["rejected"]["index"] == 0


def test_replay_cli_exits_1_on_a_failed_expectation(tmp_path: Path) -> None:
    path = _write(tmp_path, {
        "ruleset": "classic",
        "seating": SEATING,
        "commands": [{"type": "Timeout"}, {"expect": {"day": 2}}],
    })
    done = _replay(path)
    assert done.returncode == 1
    assert "expectation failed" in done.stderr
    assert json.loads(done.stdout)["failures"]


def test_replay_cli_exits_1_when_an_expected_rejection_is_accepted(tmp_path: Path) -> None:
    path = _write(tmp_path, {
        "ruleset": "classic",
        "seating": SEATING,
        "commands": [{"type": "Timeout", "rejected": "game.paused"}],
    })
    assert _replay(path).returncode == 1


@pytest.mark.parametrize("text", [
    "{not json",
    "[1, 2, 3]",
    json.dumps({"ruleset": "no-such-preset", "seating": SEATING}),
    json.dumps({"seating": ["don", "wizard"]}),
    json.dumps({"seating": SEATING, "commands": [{"type": "Fly", "seat": 1}]}),
], ids=["not-json", "not-an-object", "unknown-preset", "unknown-role", "unknown-command"])
def test_replay_cli_exits_3_on_a_malformed_file(tmp_path: Path, text: str) -> None:
    done = _replay(_write(tmp_path, text))
    assert done.returncode == 3
    assert "invalid timeline" in done.stderr
