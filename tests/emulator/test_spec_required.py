"""The spec check cannot pass vacuously: without the spec a test that relies on it skips, or fails in CI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mafiabot.emulator import Emulator, SpecValidator
from mafiabot.emulator.testing import REQUIRE_SPEC_ENV, assert_no_spec_violations, require_spec
from mafiabot.tools.demo import DemoReport

ROOT = Path(__file__).resolve().parents[2]
TINY = """
from pathlib import Path

from mafiabot.emulator import Emulator, EmulatorConfig
from mafiabot.emulator.testing import assert_no_spec_violations


def test_no_violations():
    assert_no_spec_violations(Emulator(EmulatorConfig(spec_path=Path(__file__).parent / "missing.json")))
"""


def test_a_missing_spec_fails_the_check_when_required(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    missing = SpecValidator(tmp_path / "missing.json")
    monkeypatch.setenv(REQUIRE_SPEC_ENV, "1")
    with pytest.raises(pytest.fail.Exception, match=r"missing\.json.*MAFIABOT_REQUIRE_SPEC=1"):
        require_spec(missing)
    monkeypatch.delenv(REQUIRE_SPEC_ENV)
    with pytest.raises(pytest.skip.Exception, match=r"missing\.json"):
        require_spec(missing)


def test_a_missing_spec_fails_a_whole_pytest_run_with_the_flag_and_skips_without(tmp_path: Path) -> None:
    (tmp_path / "test_tiny.py").write_text(TINY, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != REQUIRE_SPEC_ENV}

    def run(extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(  # noqa: S603 (our own interpreter)
            [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", str(tmp_path / "test_tiny.py")],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
            cwd=tmp_path,
            env={**env, **extra},
        )

    required = run({REQUIRE_SPEC_ENV: "1"})
    assert required.returncode == 1, required.stdout
    assert "1 failed" in required.stdout
    assert "spec check is mandatory" in required.stdout
    optional = run({})
    assert optional.returncode == 0, optional.stdout
    assert "1 skipped" in optional.stdout
    assert "missing.json" in optional.stdout


def test_a_read_spec_with_a_violation_still_fails(tmp_path: Path) -> None:
    emu = Emulator()
    require_spec(emu.spec)
    emu.spec.check("GET", "/no/such/route", None, has_body=False)
    with pytest.raises(AssertionError):
        assert_no_spec_violations(emu)


def test_ci_requires_the_spec() -> None:
    assert f"export {REQUIRE_SPEC_ENV}=1" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_the_demo_report_says_not_checked_and_why() -> None:
    reason = "Discord OpenAPI spec not readable at /nowhere/openapi.json"
    assert DemoReport(spec_unchecked=reason).to_json()["spec_violations"] == f"not checked: {reason}"
    assert DemoReport(spec_violations=["x"]).to_json()["spec_violations"] == ["x"]


def test_a_body_checked_before_gets_the_same_verdict_again_and_each_validator_records_its_own() -> None:
    """Checks are kept per process (the file parsed once, each distinct body checked once), violations per emulator."""
    first, second = SpecValidator(), SpecValidator()
    require_spec(first)
    route = "/channels/1/messages"
    bad = {"content": 5}
    reason = first.check("POST", route, bad, has_body=True)
    assert reason is not None
    assert "content" in reason
    assert second.check("POST", route, bad, has_body=True) == reason
    assert second.check("POST", route, {"content": "hello"}, has_body=True) is None
    assert first.check("POST", route, {"content": ["not", "text"]}, has_body=True) is not None
    assert first.violations[0].reason == reason
    assert len(first.violations) == 2
    assert len(second.violations) == 1
