"""The ``mafiabot`` command line."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from engine import RulesetError
from engine.ruleset import Ruleset


def _ruleset(name: str, rulesets_dir: str | None = None) -> Ruleset:
    from mafiabot.rulesets import resolve_ruleset

    return resolve_ruleset(name, rulesets_dir=rulesets_dir).ruleset


def _cmd_replay(args: argparse.Namespace) -> int:
    from mafiabot.timeline import TimelineError, load_timeline, run_timeline, summary

    try:
        result = run_timeline(load_timeline(Path(args.file)))
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
    from mafiabot.simulate import simulate

    try:
        ruleset = _ruleset(args.ruleset, args.rulesets_dir)
        players = args.players or ruleset.default_players
        ruleset.roles_for(players)
        report = simulate(ruleset, players=players, games=args.games, seed=args.seed, strategy=args.strategy)
    except (RulesetError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({
            "games": report.games,
            "results": report.results,
            "games_per_second": round(report.games_per_second, 1),
        }))
        return 0
    print(f"{report.games} games of {ruleset.name}, {players} players, strategy {args.strategy}, seed {args.seed}")
    print(f"{'result':<10}{'games':>10}{'share':>10}   95% CI")
    for share in report.shares():
        print(f"{share.result:<10}{share.games:>10}{share.share:>10.4f}   [{share.low:.4f}, {share.high:.4f}]")
    print(f"{report.games_per_second:,.0f} games per second")
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from mafiabot.demo import main as demo_main

    try:
        ruleset = _ruleset(args.ruleset, args.rulesets_dir)
        players = args.players or ruleset.default_players
        ruleset.roles_for(players)
    except (RulesetError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return demo_main(args.ruleset, players, args.seed, args.report, args.time_scale, rulesets_dir=args.rulesets_dir)


def _cmd_run(args: argparse.Namespace) -> int:
    import asyncio
    import logging

    from mafiabot.bot import run_bot
    from mafiabot.config import ConfigError, load_config

    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(f"config error: {exc}", file=sys.stderr)
        return 2
    if not config.token:
        print("no bot token: set DISCORD_TOKEN or [discord] token in the config (see docs/hosting.md)", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run_bot(config))
    return 0


def _cmd_db(args: argparse.Namespace) -> int:
    from mafiabot.config import ConfigError, load_config
    from mafiabot.store import upgrade

    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(f"config error: {exc}", file=sys.stderr)
        return 2
    upgrade(config.database.url)
    print(f"database is at the newest schema: {config.database.url.split('@')[-1]}")
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    import asyncio

    from mafiabot.check import check
    from mafiabot.config import ConfigError, load_config

    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(f"[missing] config: {exc}", file=sys.stderr)
        print("    fix: correct that key; config.example.toml lists every key with its meaning", file=sys.stderr)
        return 2
    print(f"[ok] config: {args.config or 'defaults (no --config)'}")
    report = asyncio.run(check(config))
    for line in report.lines():
        print(line)
    return 0 if report.ok else 1


def _cmd_invite_url(args: argparse.Namespace) -> int:
    from mafiabot.check import client_id_from_token, invite_url
    from mafiabot.config import ConfigError, load_config

    client_id = args.client_id
    if client_id is None:
        try:
            config = load_config(args.config)
        except ConfigError as exc:
            print(f"config: {exc}", file=sys.stderr)
            return 2
        client_id = client_id_from_token(config.token)
    if client_id is None:
        print("no client id: pass --client-id (Developer Portal > General Information > Application ID), "
              "or set DISCORD_TOKEN", file=sys.stderr)
        return 2
    print(invite_url(client_id))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser, with one subcommand per job."""
    parser = argparse.ArgumentParser(prog="mafiabot", description="A Discord host for sport Mafia.")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run the bot (token from DISCORD_TOKEN or the config)")
    run.add_argument("--config", help="the config file (default: built-in defaults)")
    run.set_defaults(func=_cmd_run)

    db = sub.add_parser("db", help="database maintenance")
    db_sub = db.add_subparsers(dest="db_command", required=True)
    upgrade = db_sub.add_parser("upgrade", help="migrate the database to the newest schema")
    upgrade.add_argument("--config")
    upgrade.set_defaults(func=_cmd_db)

    replay = sub.add_parser("replay", help="apply a timeline file and print the resulting state as JSON")
    replay.add_argument("file")
    replay.set_defaults(func=_cmd_replay)

    simulate = sub.add_parser("simulate", help="play many scripted games and print each result's share")
    simulate.add_argument("--ruleset", default="classic",
                          help="a preset, a ruleset .toml file, or a name in --rulesets-dir")
    simulate.add_argument("--rulesets-dir", help="a folder of ruleset .toml files, as [game] rulesets_dir")
    simulate.add_argument("--players", type=int, default=0, help="table size (default: the ruleset's)")
    simulate.add_argument("--games", type=int, default=10_000)
    simulate.add_argument("--seed", type=int, default=1)
    simulate.add_argument("--strategy", default="random", choices=["random"])
    simulate.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    simulate.set_defaults(func=_cmd_simulate)

    demo = sub.add_parser("demo", help="play a whole table on the built-in local Discord emulator")
    demo.add_argument("--ruleset", default="classic",
                      help="a preset, a ruleset .toml file, or a name in --rulesets-dir")
    demo.add_argument("--rulesets-dir", help="a folder of ruleset .toml files, as [game] rulesets_dir")
    demo.add_argument("--players", type=int, default=0)
    demo.add_argument("--seed", type=int, default=1)
    demo.add_argument("--time-scale", type=float, default=0.02, help="multiplies every timer (default 0.02)")
    demo.add_argument("--report", help="write a JSON report to this file")
    demo.set_defaults(func=_cmd_demo)

    check = sub.add_parser("check", help="check the config, token, intents, permissions and libopus")
    check.add_argument("--config", help="the config file (default: built-in defaults and DISCORD_TOKEN)")
    check.set_defaults(func=_cmd_check)

    invite = sub.add_parser("invite-url", help="print the URL that invites the bot with exactly its permissions")
    invite.add_argument("--config", help="the config file, to read the token from")
    invite.add_argument("--client-id", type=int, help="the application id (default: read from the token)")
    invite.set_defaults(func=_cmd_invite_url)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = build_parser().parse_args(argv)
    status: int = args.func(args)
    return status


if __name__ == "__main__":
    sys.exit(main())
