"""Every subcommand given bad input: no traceback, the documented exit status, one line naming the problem."""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from mafiabot.emulator.testing import emulated_guild
from mafiabot.tools import cli
from mafiabot.tools.cli import ExitCode

ROOT = Path(__file__).resolve().parents[1]


def mafiabot(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "DISCORD_TOKEN"}
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), environment.get("PYTHONPATH")]))
    environment.update(env or {})
    return subprocess.run(  # noqa: S603 (our own command line)
        [sys.executable, "-m", "mafiabot", *args], capture_output=True, text=True, check=False, timeout=120,
        env=environment, cwd=cwd,
    )


@pytest.fixture
def in_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``mafiabot`` run by its ``main`` in this process, in ``tmp_path`` and without DISCORD_TOKEN.

    For refusals that come before any work: what they promise is ``main``'s status and output, and
    a fresh interpreter for each would only add its start-up. Each command keeps real runs in a
    process of its own below (``mafiabot``), where the process's exit status is what is checked.
    """
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DISCORD_TOKEN", raising=False)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        capsys.readouterr()
        try:
            status = cli.main(list(args))
        except SystemExit as exit_:  # argparse's refusals end the way the process would
            status = exit_.code if isinstance(exit_.code, int) else 1
        out = capsys.readouterr()
        return subprocess.CompletedProcess(["mafiabot", *args], status, out.out, out.err)

    return run


def assert_one_clear_line(done: subprocess.CompletedProcess[str], code: int, needle: str) -> None:
    output = done.stdout + done.stderr
    assert "Traceback" not in output, output
    assert done.returncode == code, output
    naming = [line for line in done.stderr.splitlines() if needle in line]
    assert len(naming) == 1, done.stderr
    if code != ExitCode.USAGE:  # argparse adds its usage above the line; everything else says one line
        said = [line for line in done.stderr.splitlines() if " INFO " not in line]
        assert said == naming, done.stderr


def config(tmp_path: Path, text: str, name: str = "config.toml") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(("args", "code", "needle"), [
    (["demo", "--time-scale", "-1"], ExitCode.USAGE, "argument --time-scale: -1 is out of range"),
    (["demo", "--time-scale", "11"], ExitCode.USAGE, "argument --time-scale: 11 is out of range"),
    (["demo", "--time-scale", "fast"], ExitCode.USAGE, "'fast' is not a number"),
    (["demo", "--report", "no-such-folder/report.json"], ExitCode.CANNOT_WRITE, "no-such-folder does not exist"),
    (["demo", "--players", "5"], ExitCode.USAGE, "--players 5: classic seats"),
    (["demo", "--players", "-2"], ExitCode.USAGE, "argument --players: -2 is out of range"),
    (["demo", "--language", "de"], ExitCode.USAGE, "argument --language: invalid choice: 'de'"),
    (["demo", "--ruleset", "poker"], ExitCode.USAGE, "unknown ruleset 'poker'"),
    (["demo", "--seed", "seven"], ExitCode.USAGE, "argument --seed: invalid int value"),
    (["simulate", "--games", "-5"], ExitCode.USAGE, "argument --games: -5 is out of range"),
    (["simulate", "--games", "0"], ExitCode.USAGE, "argument --games: 0 is out of range"),
    (["simulate", "--ruleset", "missing.toml"], ExitCode.BAD_FILE, "ruleset file missing.toml: no such file"),
    (["simulate", "--ruleset", "fiim", "--players", "7"], ExitCode.USAGE, "--players 7: fiim seats 10"),
    (["simulate", "--strategy", "clever"], ExitCode.USAGE, "argument --strategy: unknown strategy 'clever'"),
    (["replay", "missing.json"], ExitCode.BAD_FILE, "invalid timeline: missing.json: no such file"),
    (["replay"], ExitCode.USAGE, "the following arguments are required: FILE"),
    (["check", "--config", "missing.toml"], ExitCode.BAD_FILE, "missing.toml: no such file"),
    (["run", "--config", "missing.toml"], ExitCode.BAD_FILE, "missing.toml: no such file"),
    (["db", "upgrade", "--config", "missing.toml"], ExitCode.BAD_FILE, "missing.toml: no such file"),
    (["run"], ExitCode.TOKEN, "no bot token: set DISCORD_TOKEN"),
    (["invite-url"], ExitCode.TOKEN, "no client id: pass --client-id"),
    (["invite-url", "--client-id", "-3"], ExitCode.USAGE, "argument --client-id: -3 is out of range"),
    (["fly"], ExitCode.USAGE, "invalid choice: 'fly'"),
    ([], ExitCode.USAGE, "the following arguments are required: COMMAND"),
], ids=lambda value: " ".join(value) if isinstance(value, list) else None)
def test_a_bad_option_or_file_is_one_line_and_its_status(
    in_process: Callable[..., subprocess.CompletedProcess[str]], args: list[str], code: int, needle: str,
) -> None:
    assert_one_clear_line(in_process(*args), code, needle)


def test_bad_files_and_config_values(tmp_path: Path) -> None:
    bad_ruleset = config(tmp_path, 'base = "classic"\nvote_window_seconds = -3\n', "odd.toml")
    assert_one_clear_line(mafiabot("simulate", "--ruleset", bad_ruleset), ExitCode.BAD_FILE, "odd.toml")
    not_a_timeline = config(tmp_path, "{not json", "game.json")
    assert_one_clear_line(mafiabot("replay", not_a_timeline), 3, "invalid timeline")
    typo = config(tmp_path, '[game]\nlangauge = "ru"\n')
    for command in (["check"], ["run"], ["db", "upgrade"], ["invite-url"]):
        assert_one_clear_line(mafiabot(*command, "--config", typo), ExitCode.BAD_FILE, "game.langauge: unknown key")


def test_an_unusable_or_unreachable_database(tmp_path: Path) -> None:
    nonsense = config(tmp_path, '[database]\nurl = "nonsense"\n')
    assert_one_clear_line(mafiabot("db", "upgrade", "--config", nonsense), ExitCode.DATABASE,
                          "[database] url 'nonsense' is not usable")
    token = {"DISCORD_TOKEN": "MTIz.bogus.token"}
    assert_one_clear_line(mafiabot("run", "--config", nonsense, env=token), ExitCode.DATABASE, "'nonsense'")
    closed = config(tmp_path, '[database]\nurl = "postgresql+psycopg://mafia@127.0.0.1:1/mafia"\n', "pg.toml")
    assert_one_clear_line(mafiabot("db", "upgrade", "--config", closed), ExitCode.DATABASE, "127.0.0.1:1/mafia")
    nowhere = config(tmp_path, f'[database]\nurl = "sqlite:///{tmp_path}/no/such/folder.sqlite3"\n', "sq.toml")
    assert_one_clear_line(mafiabot("db", "upgrade", "--config", nowhere), ExitCode.DATABASE, "does not exist")


def test_postgresql_without_the_postgres_extra_names_the_extra(tmp_path: Path) -> None:
    # What a host without `.[postgres]` gets: the driver does not import.
    shadow = tmp_path / "without-psycopg" / "psycopg"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text(
        'raise ModuleNotFoundError("No module named \'psycopg\'", name="psycopg")\n', encoding="utf-8")
    url = config(tmp_path, '[database]\nurl = "postgresql+psycopg://mafia@127.0.0.1:5432/mafia"\n')
    done = mafiabot("db", "upgrade", "--config", url, env={"PYTHONPATH": f"{shadow.parent}{os.pathsep}{ROOT}"})
    assert_one_clear_line(done, ExitCode.MISSING_EXTRA, "pip install 'mafiabot[postgres]'")


def test_run_with_an_unreachable_discord(tmp_path: Path) -> None:
    closed = config(tmp_path, '[discord]\napi_base = "http://127.0.0.1:9/api/v10"\n'
                              f'[database]\nurl = "sqlite:///{tmp_path}/bot.sqlite3"\n')
    done = mafiabot("run", "--config", closed, env={"DISCORD_TOKEN": "MTIz.bogus.token"})
    assert_one_clear_line(done, ExitCode.DISCORD_UNREACHABLE, "cannot reach http://127.0.0.1:9/api/v10")


async def test_run_with_a_refused_token_stops_before_connecting(tmp_path: Path) -> None:
    async with emulated_guild(members=1) as env:
        path = config(tmp_path, f'[discord]\napi_base = "{env.emu.api_url}"\ngateway_url = "{env.emu.gateway_url}"\n'
                                f'[database]\nurl = "sqlite:///{tmp_path}/bot.sqlite3"\n')
        done = await asyncio.to_thread(mafiabot, "run", "--config", path, env={"DISCORD_TOKEN": "123.not-the-token"})
        assert_one_clear_line(done, ExitCode.TOKEN, "Discord refused the token")
        assert not env.emu.gateway.connected(env.app)


def test_invite_url_with_a_token_that_names_no_application(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DISCORD_TOKEN", "not-a-bot-token")
    assert cli.main(["invite-url"]) == ExitCode.TOKEN
    err = capsys.readouterr().err
    assert "set DISCORD_TOKEN" not in err
    assert "pass --client-id" in err


def test_an_unexpected_error_is_one_line_and_its_traceback_goes_to_a_log_file(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("the simulator broke")

    monkeypatch.setattr("mafiabot.tools.simulate.simulate", broken)
    assert cli.main(["simulate", "--games", "1"]) == ExitCode.BUG
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert "unexpected error RuntimeError: the simulator broke" in err
    log = Path(err.split("the traceback is in ", 1)[1].split(";", 1)[0])
    text = log.read_text(encoding="utf-8")
    log.unlink()
    assert "Traceback" in text
    assert "the simulator broke" in text


def test_run_warns_about_a_token_in_a_file_others_can_read(tmp_path: Path) -> None:
    path = Path(config(tmp_path, '[discord]\ntoken = "MTIz.bogus.token"\napi_base = "http://127.0.0.1:9/api/v10"\n'
                                 f'[database]\nurl = "sqlite:///{tmp_path}/bot.sqlite3"\n'))
    path.chmod(0o644)
    done = mafiabot("run", "--config", str(path))
    assert done.returncode == ExitCode.DISCORD_UNREACHABLE, done.stderr
    assert f"warning: {path} holds a bot token and other users may read it (mode 644); fix: chmod 600" in done.stderr
    path.chmod(0o600)
    assert "warning" not in mafiabot("run", "--config", str(path)).stderr


def test_config_toml_is_never_committed() -> None:
    assert "config.toml" in (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()


def test_the_demo_log_is_a_private_file_of_its_own_and_follows_no_symlink(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    victim = tmp_path / "victim"
    (tmp_path / "mafiabot-demo.log").symlink_to(victim)  # another user's trap under the old fixed name
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        first, second = cli._demo_log(), cli._demo_log()
        logging.getLogger("mafiabot").error("a table broke")
        assert first.path != second.path
        assert first.path.parent == second.path.parent == tmp_path
        assert stat.S_IMODE(second.path.stat().st_mode) == 0o600
        assert not victim.exists()
        second.finish()
        assert "a table broke" in second.path.read_text(encoding="utf-8")  # kept: it is pointed at
        first.finish()
        assert not first.path.exists()  # nothing logged, nothing left behind
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


UNWRITABLE = Path("/sys")
"""A folder nobody may create files in, root included: the tests run as root, where file modes stop
no write, but sysfs refuses every new file (EACCES) whatever the caller's rights."""


def unwritable_folder() -> Path:
    probe = UNWRITABLE / "mafiabot-probe"
    try:
        probe.open("x").close()
    except OSError:
        return UNWRITABLE
    probe.unlink()
    pytest.fail(f"{UNWRITABLE} takes new files here: these tests need a folder nobody may write")


def test_a_sqlite_file_in_a_folder_it_cannot_write_is_refused_before_any_work(tmp_path: Path) -> None:
    where = unwritable_folder() / "bot.sqlite3"
    path = config(tmp_path, f'[database]\nurl = "sqlite:///{where}"\n')
    checked = mafiabot("check", "--config", path)
    assert checked.returncode == ExitCode.PROBLEMS
    database = [line for line in checked.stdout.splitlines() if "database:" in line]
    assert database == [f"[misconfigured] database: sqlite:///{where}: cannot create files in {where.parent} "
                        "(Permission denied)"], checked.stdout
    for command in (["db", "upgrade"], ["run"]):
        done = mafiabot(*command, "--config", path, env={"DISCORD_TOKEN": "MTIz.bogus.token"})
        assert_one_clear_line(done, ExitCode.CANNOT_WRITE, f"cannot create files in {where.parent}")


def test_a_report_into_a_folder_it_cannot_write_is_refused_before_the_game(tmp_path: Path) -> None:
    report = unwritable_folder() / "report.json"
    done = mafiabot("demo", "--time-scale", "0", "--report", str(report), cwd=tmp_path)
    assert_one_clear_line(done, ExitCode.CANNOT_WRITE, f"cannot write {report}")
    assert done.stdout == ""  # not a line of the game was played
    inside_a_file = tmp_path / "a-file"
    inside_a_file.write_text("", encoding="utf-8")
    done = mafiabot("demo", "--report", str(inside_a_file / "report.json"), cwd=tmp_path)
    assert_one_clear_line(done, ExitCode.CANNOT_WRITE, f"{inside_a_file} is not a folder")


def test_output_into_a_closed_pipe_is_one_line_not_a_bug(tmp_path: Path) -> None:
    # ``mafiabot replay F | head -0``: the reader is gone before the first line is written.
    timeline = ROOT / "tests" / "scenarios" / "01-classic-parity-win.json"
    read_end, write_end = os.pipe()
    os.close(read_end)
    environment = {k: v for k, v in os.environ.items() if k != "DISCORD_TOKEN"}
    environment["PYTHONPATH"] = str(ROOT)
    try:
        done = subprocess.run(  # noqa: S603 (our own command line)
            [sys.executable, "-m", "mafiabot", "replay", str(timeline)],
            stdout=write_end, stderr=subprocess.PIPE, text=True, check=False, timeout=120, env=environment,
            cwd=tmp_path,
        )
    finally:
        os.close(write_end)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == ExitCode.CANNOT_WRITE, done.stderr
    assert done.stderr.splitlines() == ["mafiabot replay: cannot write the output: the reader closed it "
                                        "(a pipe such as | head); nothing else went wrong"], done.stderr

def test_version_prints_the_installed_package_version(tmp_path: Path) -> None:
    from importlib.metadata import version

    done = mafiabot("--version", cwd=tmp_path)
    assert (done.returncode, done.stdout.strip(), done.stderr) == (0, f"mafiabot {version('mafiabot')}", "")


@pytest.mark.parametrize(("args", "needle"), [
    (["demo", "--sede", "3"], "unrecognized arguments: --sede 3; did you mean --seed?"),
    (["simulate", "--gmaes", "5"], "did you mean --games?"),
    (["db", "upgrade", "--confg", "x.toml"], "did you mean --config?"),
    (["demoo"], "did you mean 'demo'?"),
    (["demo", "--language", "kat"], "did you mean 'ka'?"),
], ids=lambda value: " ".join(value) if isinstance(value, list) else None)
def test_a_misspelt_option_or_choice_gets_the_closest_one(
    in_process: Callable[..., subprocess.CompletedProcess[str]], args: list[str], needle: str,
) -> None:
    assert_one_clear_line(in_process(*args), ExitCode.USAGE, needle)


def test_a_misspelt_option_far_from_every_option_suggests_nothing(
    in_process: Callable[..., subprocess.CompletedProcess[str]],
) -> None:
    done = in_process("demo", "--banana")
    assert_one_clear_line(done, ExitCode.USAGE, "unrecognized arguments: --banana")
    assert "did you mean" not in done.stderr


def test_a_misspelt_config_key_or_ruleset_setting_gets_the_closest_one(
    tmp_path: Path, in_process: Callable[..., subprocess.CompletedProcess[str]],
) -> None:
    typo = config(tmp_path, '[game]\nlangauge = "ru"\n')
    assert_one_clear_line(in_process("check", "--config", typo), ExitCode.BAD_FILE,
                          "game.langauge: unknown key; did you mean language?")
    section = config(tmp_path, '[databse]\nurl = "sqlite://"\n', "section.toml")
    assert_one_clear_line(in_process("check", "--config", section), ExitCode.BAD_FILE,
                          "databse: unknown key; did you mean database?")
    ruleset = config(tmp_path, 'base = "georgian"\ndefence_before_vote = true\n', "ours.toml")
    assert_one_clear_line(in_process("simulate", "--ruleset", ruleset, "--games", "1"),
                          ExitCode.BAD_FILE, "defence_before_vote: unknown setting; did you mean defense_before_vote?")
