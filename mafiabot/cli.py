"""The ``mafiabot`` command line."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from engine import RulesetError, find_ruleset, from_toml
from engine.ruleset import Ruleset


def _ruleset(name: str) -> Ruleset:
    path = Path(name)
    if path.suffix == ".toml" and path.exists():
        return from_toml(path.read_text(encoding="utf-8"))
    return find_ruleset(name)


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
        ruleset = _ruleset(args.ruleset)
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


def build_parser() -> argparse.ArgumentParser:
    """The argument parser, with one subcommand per job."""
    parser = argparse.ArgumentParser(prog="mafiabot", description="A Discord host for sport Mafia.")
    sub = parser.add_subparsers(dest="command", required=True)

    replay = sub.add_parser("replay", help="apply a timeline file and print the resulting state as JSON")
    replay.add_argument("file")
    replay.set_defaults(func=_cmd_replay)

    simulate = sub.add_parser("simulate", help="play many scripted games and print each result's share")
    simulate.add_argument("--ruleset", default="classic", help="a preset name or a ruleset .toml file")
    simulate.add_argument("--players", type=int, default=0, help="table size (default: the ruleset's)")
    simulate.add_argument("--games", type=int, default=10_000)
    simulate.add_argument("--seed", type=int, default=1)
    simulate.add_argument("--strategy", default="random", choices=["random"])
    simulate.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    simulate.set_defaults(func=_cmd_simulate)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = build_parser().parse_args(argv)
    status: int = args.func(args)
    return status


if __name__ == "__main__":
    sys.exit(main())
