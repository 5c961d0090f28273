"""The ``mafiabot`` command line.

Every problem a host can cause or fix (a bad option, a missing file, a refused token, an
unreachable Discord or database, a missing extra) ends the command with one line that names it and
says what to do, and an exit status of its own kind (``ExitCode``; README.md lists them). Anything
else is a bug: its traceback goes to a log file, and the command prints one line that points there.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import enum
import json
import logging
import os
import re
import sys
import tempfile
import traceback
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, cast

from engine import PRESETS, RulesetError
from engine.ruleset import Ruleset

if TYPE_CHECKING:
    from mafiabot.core.rulesets import NamedRuleset
    from mafiabot.tools.config import Config


class ExitCode(enum.IntEnum):
    """The exit status of each kind of failure (``replay`` keeps its own 1-3, see docs/timeline.md)."""

    OK = 0
    PROBLEMS = 1
    """The command ran and found problems: ``check``'s report, or a demo the emulator objected to."""
    USAGE = 2
    """An option or argument is refused (argparse's own status)."""
    BAD_FILE = 3
    """A file the command reads is missing or wrong: the config, a ruleset, a timeline."""
    CANNOT_WRITE = 4
    """A file the command writes cannot be written (``--report`` into a missing folder)."""
    MISSING_EXTRA = 5
    """A package an option needs is not installed (the ``postgres`` extra)."""
    TOKEN = 6
    """No bot token, or Discord refused it."""
    DISCORD_UNREACHABLE = 7
    """Discord (or ``[discord] api_base``) does not answer."""
    DATABASE = 8
    """The database does not answer, refuses the login, or its URL is unusable."""
    BUG = 70
    """Anything unexpected; the traceback is in the log file the message names."""


class CliError(Exception):
    """A problem the host can fix: one line of what is wrong and how to fix it, and its exit status."""

    def __init__(self, code: ExitCode, message: str) -> None:
        super().__init__(message)
        self.code = code


# -- argument types ------------------------------------------------------------------------------


def whole(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number from ``low`` (to ``high``)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < low or (high is not None and value > high):
            span = f"from {low} to {high}" if high is not None else f"of at least {low}"
            raise argparse.ArgumentTypeError(f"{value} is out of range: give a number {span}")
        return value

    return parse


def host_port(text: str) -> tuple[str, int]:
    """An argparse type: ``HOST:PORT`` (port 0: any free port)."""
    host, _, port = text.rpartition(":")
    try:
        value = int(port)
    except ValueError:
        value = -1
    if not host or not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not HOST:PORT (for example 127.0.0.1:8780)")
    return host.strip("[]"), value


def number(low: float, high: float) -> Callable[[str], float]:
    """An argparse type: a number from ``low`` to ``high``."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value:g} is out of range: give a number from {low:g} to {high:g}")
        return value

    return parse


# -- shared steps --------------------------------------------------------------------------------


def ruleset_of(name: str, rulesets_dir: str | None = None) -> NamedRuleset:
    """A ruleset ``.toml`` file, a name in ``rulesets_dir``, or a preset by name or alias.

    Raises:
        CliError: the file or the folder is missing or invalid, or nothing has that name.
    """
    from mafiabot.core.rulesets import RulesetFileError, resolve_ruleset

    path = Path(name)
    if path.suffix.lower() == ".toml" and not path.is_file():
        raise CliError(ExitCode.BAD_FILE, f"ruleset file {name}: no such file")
    try:
        return resolve_ruleset(name, rulesets_dir=rulesets_dir)
    except RulesetFileError as exc:
        raise CliError(ExitCode.BAD_FILE, f"ruleset: {exc}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(ExitCode.BAD_FILE, f"ruleset {name}: cannot read it ({exc})") from None
    except RulesetError as exc:
        raise CliError(ExitCode.USAGE, f"{exc.reason} (or a ruleset .toml file, docs/rulesets.md)") from None


def table_size(ruleset: Ruleset, players: int) -> int:
    """``players``, or the ruleset's own size for 0.

    Raises:
        CliError: the ruleset has no setup for that many players.
    """
    count = players or ruleset.default_players
    if count not in ruleset.setups:
        sizes = ", ".join(map(str, ruleset.player_counts))
        raise CliError(ExitCode.USAGE, f"--players {count}: {ruleset.name} seats {sizes} players")
    return count


def load(path: str | None) -> Config:
    """The config file (or the defaults).

    Raises:
        CliError: the file is missing or has a bad key, named.
    """
    from mafiabot.tools.config import ConfigError, load_config

    try:
        return load_config(path)
    except ConfigError as exc:
        raise CliError(ExitCode.BAD_FILE, f"config: {exc} (config.example.toml lists every key)") from None


def writable(path: str) -> None:
    """Refuse an output file that cannot be written, before any work is done.

    The folder is tried by creating a file in it (and removing it): mode bits say nothing for root
    or on a read-only mount, and a game should not be played only to be lost at the end.

    Raises:
        CliError: the folder does not exist or takes no file, or the path is a folder or read-only.
    """
    from mafiabot.tools.check import cannot_create_in

    file = Path(path)
    if file.is_dir():
        raise CliError(ExitCode.CANNOT_WRITE, f"{path} is a folder: give a file name")
    if file.parent.exists() and not file.parent.is_dir():
        raise CliError(ExitCode.CANNOT_WRITE, f"cannot write {path}: {file.parent} is not a folder")
    if not file.parent.is_dir():
        raise CliError(ExitCode.CANNOT_WRITE, f"cannot write {path}: the folder {file.parent} does not exist")
    refusal = cannot_create_in(file.parent)
    if refusal is None and file.exists():
        try:
            file.open("ab").close()
        except OSError as exc:
            refusal = exc.strerror or str(exc)
    if refusal is not None:
        raise CliError(ExitCode.CANNOT_WRITE, f"cannot write {path}: {refusal}")


def writable_folder(path: str) -> None:
    """Refuse a folder for output files that cannot be made or written in, before any work is done.

    Raises:
        CliError: the path is a file, or the folder cannot be made or takes no file.
    """
    from mafiabot.tools.check import cannot_create_in

    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise CliError(ExitCode.CANNOT_WRITE, f"{path} is a file: give a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CliError(ExitCode.CANNOT_WRITE, f"cannot make the folder {path}: {exc.strerror or exc}") from None
    refusal = cannot_create_in(folder)
    if refusal is not None:
        raise CliError(ExitCode.CANNOT_WRITE, f"cannot write into {path}: {refusal}")


def database_ready(url: str) -> str:
    """Check that the database answers; returns its status line.

    Raises:
        CliError: the driver is missing, the URL is unusable, or the database does not answer.
    """
    from mafiabot.tools.check import database_status

    status = database_status(url)
    finding = status.finding
    if finding.required:
        code = ExitCode.MISSING_EXTRA if finding.kind == "missing" else ExitCode.DATABASE
        if status.unwritable:
            code = ExitCode.CANNOT_WRITE
        fix = f"; fix: {finding.fix}" if finding.fix else ""
        raise CliError(code, f"database: {finding.detail}{fix}")
    return finding.detail


def warn_about_config_file(path: str | None, config: Config) -> None:
    """Say so when the config file holds a token others may read."""
    from mafiabot.tools.check import config_file_finding

    finding = config_file_finding(path, config)
    if finding is not None:
        print(f"warning: {finding.detail}; fix: {finding.fix}", file=sys.stderr)


# -- commands ------------------------------------------------------------------------------------


def _cmd_replay(args: argparse.Namespace) -> int:
    from mafiabot.tools.timeline import TimelineError, load_timeline, run_timeline, summary

    path = Path(args.file)
    if not path.is_file():
        print(f"invalid timeline: {path}: no such file", file=sys.stderr)
        return 3
    try:
        result = run_timeline(load_timeline(path))
    except TimelineError as exc:
        print(f"invalid timeline: {exc}", file=sys.stderr)
        return 3
    out = summary(result.game)
    if result.rejected is not None:
        out["rejected"] = {"index": result.rejected_index, "code": result.rejected.code, "data": result.rejected.data}
        print(json.dumps(out, indent=2, ensure_ascii=False, default=str))
        print(f"rejected: {result.rejected.code}", file=sys.stderr)
        return 2
    if result.failures:
        out["failures"] = result.failures
    print(json.dumps(out, indent=2, ensure_ascii=False, default=str))
    for failure in result.failures:
        print(f"expectation failed: {failure}", file=sys.stderr)
    return result.exit_status


def _cmd_simulate(args: argparse.Namespace) -> int:
    from mafiabot.tools.simulate import BASELINE_NOTE, ProgressBar, render_table, report_data, simulate

    ruleset = ruleset_of(args.ruleset, args.rulesets_dir).ruleset
    players = table_size(ruleset, args.players)
    try:
        show_progress = sys.stderr.isatty() if args.progress is None else args.progress
        reports = []
        for strategy in args.strategy:
            bar = ProgressBar(sys.stderr, strategy, args.games) if show_progress else None
            reports.append(
                simulate(ruleset, players=players, games=args.games, seed=args.seed, strategy=strategy, progress=bar)
            )
    except (RulesetError, ValueError) as exc:
        raise CliError(ExitCode.USAGE, str(exc)) from None
    if "random" in args.strategy:
        print(f"note: {BASELINE_NOTE}", file=sys.stderr)
    if args.json:
        print(json.dumps(report_data(ruleset, players, args.seed, reports)))
    else:
        print(render_table(ruleset, players, args.seed, reports))
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from mafiabot.tools.demo import DemoOptions
    from mafiabot.tools.demo import main as demo_main

    named = ruleset_of(args.ruleset, args.rulesets_dir)
    players = table_size(named.ruleset, args.players)
    if args.report:
        writable(args.report)
    if args.pictures:
        writable_folder(args.pictures)
    options = DemoOptions(ruleset=args.ruleset, players=players, seed=args.seed, language=args.language,
                          time_scale=args.time_scale, report=args.report, rulesets_dir=args.rulesets_dir,
                          web=args.web, pictures=args.pictures)
    errors = _demo_log()
    try:
        status = demo_main(options)
    except OSError as exc:
        raise CliError(ExitCode.CANNOT_WRITE, f"cannot write {exc.filename or args.report}: "
                                              f"{exc.strerror or exc}") from None
    finally:
        errors.finish()
    if errors.count:
        print(f"the bot logged {errors.count} errors during the demo; see {errors.path}", file=sys.stderr)
        return ExitCode.PROBLEMS
    return status


class _ErrorCount(logging.StreamHandler):  # type: ignore[type-arg]
    """The demo's log: a file, so the channel reads clean; errors are counted and pointed at."""

    def __init__(self) -> None:
        # A fresh file per run, created for this user only and never through a planted symlink
        # (mkstemp opens with O_EXCL): a fixed name in /tmp would let one user's demo stop another's.
        handle, name = tempfile.mkstemp(prefix="mafiabot-demo-", suffix=".log")
        super().__init__(open(handle, "w", encoding="utf-8"))  # noqa: SIM115 (closed by finish)
        self.path = Path(name)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.ERROR:
            self.count += 1
        super().emit(record)

    def finish(self) -> None:
        """Close the file; a demo that logged no error leaves nothing behind."""
        logging.getLogger().removeHandler(self)
        self.close()
        self.stream.close()
        if not self.count:
            self.path.unlink(missing_ok=True)


def _demo_log() -> _ErrorCount:
    handler = _ErrorCount()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler], force=True)
    return handler


def _cmd_run(args: argparse.Namespace) -> int:
    import asyncio

    from mafiabot.host.process import run_bot

    config = load(args.config)
    warn_about_config_file(args.config, config)
    if not config.token:
        raise CliError(ExitCode.TOKEN, "no bot token: set DISCORD_TOKEN (or [discord] token in the config); "
                                       "see docs/hosting.md")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    log = logging.getLogger("mafiabot")
    log.info("database: %s", database_ready(config.database.url))
    log.info("token: %s", asyncio.run(_token_ready(config)))
    with contextlib.suppress(KeyboardInterrupt):
        try:
            asyncio.run(run_bot(config))
        except Exception as exc:
            raise _discord_error(config, exc) or exc from None
    return 0


async def _token_ready(config: Config) -> str:
    """Log in once over REST, as ``check`` does, before the gateway is opened."""
    import asyncio

    import discord
    import discord.http

    from mafiabot.tools.check import pointed_at

    with pointed_at(config):
        http = discord.http.HTTPClient(asyncio.get_running_loop())
        try:
            me = await http.static_login(config.token)
        except Exception as exc:
            raise _discord_error(config, exc) or exc from None
        finally:
            await http.close()
    return f"logged in as {me.get('username', me.get('id'))}"


def _discord_error(config: Config, exc: BaseException) -> CliError | None:
    """The one-line error for a refusal or an unreachable Discord; None for anything else."""
    import aiohttp
    import discord

    from mafiabot.tools.check import TOKEN_FIX, unreachable

    if isinstance(exc, discord.LoginFailure):
        return CliError(ExitCode.TOKEN, f"Discord refused the token; fix: {TOKEN_FIX}")
    if isinstance(exc, discord.PrivilegedIntentsRequired):
        return CliError(ExitCode.TOKEN, "Discord refused the intents the bot asks for; fix: Developer Portal > "
                                        "Bot > Privileged Gateway Intents, or ask only for the default intents")
    if isinstance(exc, aiohttp.ClientError | OSError | TimeoutError | discord.GatewayNotFound):
        detail, fix = unreachable(config, exc)
        return CliError(ExitCode.DISCORD_UNREACHABLE, f"{detail}; fix: {fix}")
    if isinstance(exc, discord.HTTPException) and exc.status >= 500:
        return CliError(ExitCode.DISCORD_UNREACHABLE, f"Discord answered {exc.status}: try again in a while")
    return None


def _cmd_db(args: argparse.Namespace) -> int:
    from mafiabot.store import upgrade

    config = load(args.config)
    before = database_ready(config.database.url)
    print(f"before: {before}")
    upgrade(config.database.url)
    print(f"after: {database_ready(config.database.url)}")
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    import asyncio

    from mafiabot.tools.check import check, check_config_file

    config = load(args.config)
    print(f"[ok] config: {args.config or 'defaults (no --config)'}")
    report = asyncio.run(check(config))
    check_config_file(report, args.config, config)
    for line in report.lines():
        print(line)
    return ExitCode.OK if report.ok else ExitCode.PROBLEMS


def _cmd_invite_url(args: argparse.Namespace) -> int:
    from mafiabot.tools.check import client_id_from_token, invite_url

    client_id = args.client_id
    if client_id is None:
        config = load(args.config)
        if not config.token:
            raise CliError(ExitCode.TOKEN, "no client id: pass --client-id (Developer Portal > General "
                                           "Information > Application ID), or set DISCORD_TOKEN")
        client_id = client_id_from_token(config.token)
        if client_id is None:
            raise CliError(ExitCode.TOKEN, "the token's first part is not an application id (is it a bot "
                                           "token?): pass --client-id (Developer Portal > General Information "
                                           "> Application ID)")
    print(invite_url(client_id))
    return 0


EXPORT_FORMATS = ("mafiabot", "csv", "mafiaratings", "polemica", "pdf")
"""``mafiabot`` is the bot's own JSON (``/mafia game format:json``)."""


def _cmd_export(args: argparse.Namespace) -> int:
    import asyncio

    config = load(args.config)
    url = args.database or config.database.url
    database_ready(url)
    if args.output:
        folder = Path(args.output)
        if not folder.is_dir():
            raise CliError(ExitCode.CANNOT_WRITE, f"--output {args.output}: no such folder")
        writable(str(folder / "export.check"))
    files = asyncio.run(_export_files(url, args))
    for name, data in files:
        path = Path(args.output or ".") / name
        try:
            path.write_bytes(data)
        except OSError as exc:
            raise CliError(ExitCode.CANNOT_WRITE, f"cannot write {path}: {exc.strerror or exc}") from None
        print(path)
    return 0


def _player_ids(path: str | None) -> dict[int, int]:
    """A CSV of ``discord_id,site_id`` lines (a header line is allowed): each player's account on the site."""
    if path is None:
        return {}
    import csv

    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            rows = [row for row in csv.reader(handle) if row and row[0].strip().isdigit()]
    except OSError as exc:
        raise CliError(ExitCode.BAD_FILE, f"--player-ids {path}: cannot read it ({exc.strerror or exc})") from None
    try:
        return {int(row[0]): int(row[1]) for row in rows}
    except (IndexError, ValueError):
        raise CliError(ExitCode.BAD_FILE, f"--player-ids {path}: each line is discord_id,site_id") from None


async def _export_files(url: str, args: argparse.Namespace) -> list[tuple[str, bytes]]:
    """Read the game or tournament and make its files; a refusal or a missing one is a ``CliError``."""
    from engine.errors import RefusalError
    from mafiabot.core.errors import StoreUnavailableError
    from mafiabot.core.federation import Placement
    from mafiabot.host.exports import GAME_FORMATS, TOURNAMENT_FORMATS, game_files, tournament_files
    from mafiabot.host.i18n import t
    from mafiabot.store import GameNotFoundError, Store

    place = Placement(club_id=args.club_id, event_id=args.event_id, tournament_id=args.site_tournament_id,
                      moderator_id=args.moderator_id, player_ids=_player_ids(args.player_ids))
    given = "json" if args.format == "mafiabot" else args.format
    store = await Store.open(url, migrate=False)
    try:
        if args.game is not None:
            fmt = next(f for f in GAME_FORMATS if f == given)
            return await game_files(store, args.game, fmt, language=args.language, place=place)
        tm = await store.get_tournament(args.tournament)
        if tm is None:
            raise CliError(ExitCode.USAGE, f"--tournament {args.tournament}: no such tournament in the database")
        tournament_format = next((f for f in TOURNAMENT_FORMATS if f == given), None)
        if tournament_format is None:
            raise CliError(ExitCode.USAGE, "--format csv is one game's sheets: give --game, or another format")
        return await tournament_files(store, tm, tournament_format, language=args.language, place=place)
    except GameNotFoundError:
        raise CliError(ExitCode.USAGE, f"--game {args.game}: no such game in the database") from None
    except RefusalError as exc:
        raise CliError(ExitCode.PROBLEMS, t("en", f"error.{exc.code}", **exc.data)) from None
    except StoreUnavailableError as exc:
        fix = "give the bot's database (--database or [database] url), at the newest schema (mafiabot db upgrade)"
        raise CliError(ExitCode.DATABASE, f"database: {exc}; fix: {fix}") from None
    finally:
        await store.close()


def _cmd_site(args: argparse.Namespace) -> int:
    import asyncio

    config = load(args.config)
    url = args.database or config.database.url
    database_ready(url)
    out = Path(args.out)
    written = asyncio.run(_build_site(url, args.guild, out))
    if written is None:
        raise CliError(ExitCode.PROBLEMS, f"--guild {args.guild}: its pages are off, so nothing was built; the "
                       "server's staff turn them on with /mafia settings site_pages:on (docs/web.md)")
    print(f"{written} files in {out}")
    return 0


async def _build_site(url: str, guild_id: int, out: Path) -> int | None:
    """Build one server's pages into ``out``; None while its staff have not turned them on."""
    from mafiabot.core.errors import StoreUnavailableError
    from mafiabot.host.site import build_site
    from mafiabot.store import Store

    store = await Store.open(url, migrate=False)
    try:
        return await build_site(store, guild_id, out, now=datetime.now(UTC))
    except OSError as exc:
        raise CliError(ExitCode.CANNOT_WRITE, f"{out}: cannot write the pages ({exc.strerror or exc})") from None
    except StoreUnavailableError as exc:
        fix = "give the bot's database (--database or [database] url), at the newest schema (mafiabot db upgrade)"
        raise CliError(ExitCode.DATABASE, f"database: {exc}; fix: {fix}") from None
    finally:
        await store.close()


def _cmd_forget_guild(args: argparse.Namespace) -> int:
    import asyncio

    if not args.yes:
        raise CliError(ExitCode.USAGE, f"nothing deleted: add --yes to delete every record of server {args.guild} "
                       "(docs/privacy.md)")
    config = load(args.config)
    url = args.database or config.database.url
    database_ready(url)
    deleted = asyncio.run(_forget_guild(url, args.guild))
    print(f"{deleted} rows of server {args.guild} deleted")
    return 0


async def _forget_guild(url: str, guild_id: int) -> int:
    """Delete every row of one server; how many went."""
    from mafiabot.core.errors import StoreUnavailableError
    from mafiabot.store import Store

    store = await Store.open(url, migrate=False)
    try:
        return await store.forget_guild(guild_id)
    except StoreUnavailableError as exc:
        fix = "give the bot's database (--database or [database] url), at the newest schema (mafiabot db upgrade)"
        raise CliError(ExitCode.DATABASE, f"database: {exc}; fix: {fix}") from None
    finally:
        await store.close()


def _strategies(text: str) -> tuple[str, ...]:
    from mafiabot.tools.simulate import parse_strategies

    try:
        return parse_strategies(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


# -- the parser ----------------------------------------------------------------------------------


_INVALID_CHOICE = re.compile(r"invalid choice: '(?P<given>[^']*)' \(choose from (?P<choices>.*)\)$")


def _closest(given: str, known: Sequence[str]) -> str | None:
    close = difflib.get_close_matches(given, known, n=1)
    return close[0] if close else None


class _Parser(argparse.ArgumentParser):
    """argparse, which on Python 3.11 names a refused choice without the one the host most likely meant."""

    def error(self, message: str) -> NoReturn:
        found = _INVALID_CHOICE.search(message)
        if found and "maybe you meant" not in message:  # newer Pythons may suggest themselves
            choices = [choice.strip().strip("'") for choice in found["choices"].split(",")]
            guess = _closest(found["given"], choices)
            if guess:
                message = f"{message}; did you mean {guess!r}?"
        super().error(message)


def _version() -> str:
    """The installed package's version: the one ``pip`` and bug reports speak of."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mafiabot")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "(not installed as a package)"


def _unrecognized(parser: argparse.ArgumentParser, args: argparse.Namespace, extras: Sequence[str]) -> str:
    """Argparse's refusal of unknown arguments, with the closest option of the subcommand that was given."""
    chosen = parser
    for dest in ("command", "db_command"):
        for action in chosen._actions:
            if isinstance(action, argparse._SubParsersAction) and action.dest == dest and getattr(args, dest, None):
                chosen = action.choices[getattr(args, dest)]
    options = [option for action in chosen._actions for option in action.option_strings]
    guesses = [guess for extra in extras if extra.startswith("-") and (guess := _closest(extra, options))]
    message = f"unrecognized arguments: {' '.join(extras)}"
    return f"{message}; did you mean {' or '.join(guesses)}?" if guesses else message


def build_parser() -> argparse.ArgumentParser:
    """The argument parser, with one subcommand per job; each ``_add_*`` adds one."""
    parser = _Parser(
        prog="mafiabot", description="A Discord host for sport Mafia.",
        epilog="Exit status: 0 done; 1 problems found; 2 a refused option; 3 a missing or bad file; 4 cannot "
               "write; 5 a missing extra; 6 token missing or refused; 7 Discord unreachable; 8 database "
               "unreachable or refused; 70 a bug (see the log file named).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    # Every subcommand's parser is a ``_Parser`` too; the ``_add_*`` steps need only ArgumentParser's API.
    sub = cast("argparse._SubParsersAction[argparse.ArgumentParser]",
               parser.add_subparsers(dest="command", required=True, metavar="COMMAND"))
    for add in (_add_run, _add_demo, _add_check, _add_invite_url, _add_db, _add_simulate, _add_replay, _add_export,
                _add_pictures, _add_site, _add_forget_guild):
        add(sub)
    return parser


def _config_option(parser: argparse.ArgumentParser, why: str) -> None:
    parser.add_argument("--config", metavar="FILE", help=f"the config file, {why} (default: built-in defaults; "
                                                         "the token from DISCORD_TOKEN)")


def _add_run(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run = sub.add_parser("run", help="run the bot (token from DISCORD_TOKEN or the config)",
                         description="Check the token and the database, then run the bot until stopped.")
    _config_option(run, "see config.example.toml")
    run.set_defaults(func=_cmd_run)


def _add_demo(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    demo = sub.add_parser("demo", help="play a whole table on the built-in local Discord emulator (no token)",
                          description="Play a whole game with scripted players against the real bot on a local "
                                      "Discord emulator, and print the public channel. The same seed and "
                                      "options play the same game.")
    demo.add_argument("--ruleset", default="classic", metavar="R",
                      help=f"a preset ({', '.join(PRESETS)}), a ruleset .toml file, or a name in --rulesets-dir "
                           "(default: classic)")
    demo.add_argument("--rulesets-dir", metavar="D", help="a folder of ruleset .toml files, as [game] rulesets_dir")
    demo.add_argument("--players", type=whole(0, 30), default=0, metavar="N",
                      help="table size (default: the ruleset's own)")
    demo.add_argument("--seed", type=int, default=1, metavar="S",
                      help="fixes the seating, the cards and every scripted move (default: 1)")
    demo.add_argument("--language", choices=["en", "ru", "ka"], default="en", help="the bot's language (default: en)")
    demo.add_argument("--time-scale", type=number(0, 10), default=0.02, metavar="X",
                      help="real seconds per second of the game, for reading along; 0: no pauses (default: 0.02)")
    demo.add_argument("--report", metavar="FILE", help="also write a JSON report, with the game's protocol")
    demo.add_argument("--web", type=host_port, metavar="HOST:PORT",
                      help="serve the table's stream overlay there and print each tier's link (docs/broadcast.md)")
    demo.add_argument("--pictures", metavar="DIR", help="also save every picture the table posted into DIR")
    demo.set_defaults(func=_cmd_demo)


def _add_pictures(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    pictures = sub.add_parser("pictures", help="draw the bot's pictures without Discord")
    actions = pictures.add_subparsers(dest="pictures_command", required=True, metavar="ACTION")
    samples = actions.add_parser("samples", help="draw the sample pictures the docs show into a folder",
                                 description="Draw the table cards, protocol sheets and charts the docs show "
                                             "(docs/images), the same bytes each time.")
    samples.add_argument("folder", metavar="DIR", help="where to write them (made if missing)")
    samples.set_defaults(func=_cmd_pictures)


def _cmd_pictures(args: argparse.Namespace) -> int:
    from mafiabot.tools.samples import write_samples

    writable_folder(args.folder)
    try:
        written = write_samples(Path(args.folder))
    except OSError as exc:
        raise CliError(ExitCode.CANNOT_WRITE, f"cannot write into {args.folder}: {exc.strerror or exc}") from None
    print(f"{len(written)} pictures written to {args.folder}")
    return 0


def _add_check(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    check = sub.add_parser("check", help="check the config, database, token, intents, permissions and libopus",
                           description="Check everything the bot needs and say how to fix each problem.")
    _config_option(check, "to check")
    check.set_defaults(func=_cmd_check)


def _add_invite_url(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    invite = sub.add_parser("invite-url", help="print the URL that invites the bot with exactly its permissions")
    _config_option(invite, "to read the token from")
    invite.add_argument("--client-id", type=whole(1), metavar="ID",
                        help="the application id (default: read from the token)")
    invite.set_defaults(func=_cmd_invite_url)


def _add_db(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    db = sub.add_parser("db", help="database maintenance")
    db_sub = db.add_subparsers(dest="db_command", required=True, metavar="ACTION")
    upgrade = db_sub.add_parser("upgrade", help="migrate the database to the newest schema")
    _config_option(upgrade, "for [database] url")
    upgrade.set_defaults(func=_cmd_db)


def _add_simulate(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    simulate = sub.add_parser(
        "simulate",
        help="play many scripted games and compare each result's share between strategies",
        description="Play whole games with scripted strategies and print each result's share with its 95% "
        "interval. random is a baseline (nobody uses what he knows), not a prediction; club plays the "
        "Sheriff's checks, the Don's hunt and the Doctor's cover the way club tables do (docs/rules.md#balance).",
    )
    simulate.add_argument("--ruleset", default="classic", metavar="R",
                          help=f"a preset ({', '.join(PRESETS)}), a ruleset .toml file, or a name in "
                               "--rulesets-dir (default: classic)")
    simulate.add_argument("--rulesets-dir", metavar="D",
                          help="a folder of ruleset .toml files, as [game] rulesets_dir")
    simulate.add_argument("--players", type=whole(0, 30), default=0, metavar="N",
                          help="table size, one the ruleset supports (default: the ruleset's own)")
    simulate.add_argument("--games", type=whole(1, 10_000_000), default=10_000, metavar="G",
                          help="games per strategy, at least 1 (default: 10000)")
    simulate.add_argument("--seed", type=int, default=1, metavar="S",
                          help="the same seed gives the same results (default: 1)")
    simulate.add_argument(
        "--strategy", type=_strategies, default=("random", "club"), metavar="NAMES",
        help="random, club, a comma-separated list such as random,club, or all (default: all, side by side)",
    )
    simulate.add_argument(
        "--progress", action=argparse.BooleanOptionalAction, default=None,
        help="draw a progress bar on stderr (default: only when stderr is a terminal)",
    )
    simulate.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    simulate.set_defaults(func=_cmd_simulate)


def _add_replay(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    replay = sub.add_parser("replay", help="apply a timeline file and print the resulting state as JSON",
                            description="Apply a timeline (docs/timeline.md). Exit 1: an expectation failed; "
                                        "2: a command was rejected; 3: the file is missing or malformed.")
    replay.add_argument("file", metavar="FILE", help="a timeline .json file")
    replay.set_defaults(func=_cmd_replay)


def _add_export(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    export = sub.add_parser(
        "export", help="write a game or a tournament as files: the bot's own, a rating site's, or the FIIM blank",
        description="Write a stored game, or every played game of a tournament in order, as files in the current "
                    "folder (or --output): mafiabot (the bot's JSON), csv (one game), mafiaratings or polemica "
                    "(a rating site's game JSON, ten-seat classic games only), pdf (the FIIM protocol blank). "
                    "The site's ids are the organiser's: the bot stores none (docs/federation.md).")
    which = export.add_mutually_exclusive_group(required=True)
    which.add_argument("--game", type=whole(1), metavar="ID", help="a game's number (see /mafia history)")
    which.add_argument("--tournament", type=whole(1), metavar="ID", help="a tournament's number in the database")
    export.add_argument("--format", choices=EXPORT_FORMATS, default="mafiabot", help="the files' format "
                        "(default: mafiabot)")
    export.add_argument("--language", choices=["en", "ru", "ka"], default="en", help="the PDF blank's language "
                        "(default: en)")
    export.add_argument("--output", metavar="DIR", help="the folder to write into (default: the current one)")
    _config_option(export, "for [database] url")
    export.add_argument("--database", metavar="URL", help="the database URL (default: the config's)")
    for flag, dest, what in (("--club-id", "club_id", "the club's id on mafiaratings"),
                             ("--event-id", "event_id", "the event's (a tournament round's) id on mafiaratings"),
                             ("--tournament-id", "site_tournament_id", "the tournament's id on mafiaratings"),
                             ("--moderator-id", "moderator_id", "the judge's account id on the site")):
        export.add_argument(flag, dest=dest, type=whole(1), metavar="N", help=f"{what}, written into the file")
    export.add_argument("--player-ids", metavar="FILE", help="a CSV of discord_id,site_id lines: the players' "
                        "accounts on the site")
    export.set_defaults(func=_cmd_export)


def _add_site(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    site = sub.add_parser("site", help="the club's pages: build them as plain files to publish anywhere",
                          description="The club's pages (docs/web.md).")
    what = site.add_subparsers(dest="site_command", required=True, metavar="COMMAND")
    build = what.add_parser("build", help="write one server's pages (league, players, games, tournaments) into OUT",
                            description="Write a server's pages as HTML files with relative links, in en, ru and "
                                        "ka. Nothing is built while the server's staff have not turned the "
                                        "pages on (exit 1).")
    build.add_argument("out", metavar="OUT", help="the folder to write into (made if missing)")
    build.add_argument("--guild", type=whole(1), required=True, metavar="ID", help="the server's id")
    _config_option(build, "for [database] url")
    build.add_argument("--database", metavar="URL", help="the database URL (default: the config's)")
    build.set_defaults(func=_cmd_site)


def _add_forget_guild(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    forget = sub.add_parser("forget-guild", help="delete every record of one server: games, results, settings",
                            description="Delete every row the bot keeps for a server, in one transaction "
                                        "(docs/privacy.md). Stop its tables first: a game still running is "
                                        "deleted under it.")
    forget.add_argument("guild", type=whole(1), metavar="GUILD_ID", help="the server's id")
    forget.add_argument("--yes", action="store_true", help="really delete (without it nothing is)")
    _config_option(forget, "for [database] url")
    forget.add_argument("--database", metavar="URL", help="the database URL (default: the config's)")
    forget.set_defaults(func=_cmd_forget_guild)


# -- running -------------------------------------------------------------------------------------


def _crash_log(command: str) -> Path:
    """Write the current exception's traceback to a fresh log file; returns its path."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    handle, name = tempfile.mkstemp(prefix=f"mafiabot-{command}-{stamp}-", suffix=".log")
    with open(handle, "w", encoding="utf-8") as log:
        log.write(traceback.format_exc())
    return Path(name)


def _drop_stdout() -> None:
    """Point stdout at the null device, so Python's own flush at exit meets no closed pipe again."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, sys.stdout.fileno())
    os.close(null)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args, extras = parser.parse_known_args(argv)
    if extras:
        parser.error(_unrecognized(parser, args, extras))
    try:
        status: int = args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, not at exit where it would be a bare traceback
    except BrokenPipeError:
        _drop_stdout()
        print(f"mafiabot {args.command}: cannot write the output: the reader closed it (a pipe such as | head); "
              "nothing else went wrong", file=sys.stderr)
        return ExitCode.CANNOT_WRITE
    except CliError as exc:
        print(f"mafiabot {args.command}: {exc}", file=sys.stderr)
        return exc.code
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a bug: one line here, the traceback in the log
        path = _crash_log(args.command)
        if logging.getLogger().handlers:  # ``run`` and ``demo`` log: the traceback goes there as well
            logging.getLogger("mafiabot").exception("unexpected error")
        first = str(exc).splitlines()[0] if str(exc) else ""
        print(f"mafiabot {args.command}: unexpected error {type(exc).__name__}: {first} "
              f"(the traceback is in {path}; please report it)", file=sys.stderr)
        return ExitCode.BUG
    return status


if __name__ == "__main__":
    sys.exit(main())
