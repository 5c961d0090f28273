"""Pictures: render time and size of the table card and the protocol sheet, and requests per game.

Run: python benchmarks/pictures.py [--games 3] [--repeat 5] [--samples docs/images] [--requests]

For each preset and language it plays games of the simulator's club strategy through the engine, draws the card wherever
the bot posts one (each morning, each vote) and the sheet at the end, and prints p50/p99 render
time per image and the PNG sizes. ``--samples`` writes one morning card, one vote card and one
sheet per preset and language there (the pictures ``docs/playing.md`` shows). ``--requests`` plays
one whole game per preset on the emulator with the pictures and one without, and prints the
requests per game by route for both.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import random
import sys
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

# The folder holds a script named like the engine package: the checkout's root goes first.
sys.path[:] = [str(Path(__file__).resolve().parent.parent),
               *(p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent)]

from benchmarks._common import percentile, print_table  # noqa: E402
from engine import Event, Game, Ruleset, find_ruleset, replay_events  # noqa: E402
from engine import events as ev  # noqa: E402
from engine.public import public_table  # noqa: E402
from mafiabot.core.protocol import GameHeader, build_protocol  # noqa: E402
from mafiabot.core.records import SeatInfo  # noqa: E402
from mafiabot.emulator import EmulatorConfig, RateLimitConfig  # noqa: E402
from mafiabot.host import render  # noqa: E402
from mafiabot.host.pictures.card import CardInput, draw_card  # noqa: E402
from mafiabot.host.pictures.sheet import SheetInput, draw_sheet  # noqa: E402
from mafiabot.testing import Driver, Strategy, harness, open_table  # noqa: E402
from mafiabot.tools.simulate import play_club_game  # noqa: E402

PRESETS = (("classic", 10), ("georgian", 12), ("fiim", 10))
LANGUAGES = ("en", "ru", "ka")
NAMES = ("Анна", "Giorgi", "ნინო", "Дмитрий Соколов", "Lasha", "Мария", "თამარ ბერიძე", "Alex", "Сергей",
         "ლევანი", "Olga Petrova", "Nika")
"""Sample names in the three scripts, some long enough to be cut."""
FAST = EmulatorConfig(rate_limits=RateLimitConfig(member_edits=(100, 1.0), reactions=(100, 1.0),
                                                   global_limit=(1000, 1.0)))
"""Discord's limits except the ones a single quick game would wait on."""


def cards_of(game: Game, language: str) -> list[tuple[str, CardInput]]:
    """The cards the bot posts over ``game``: after each dawn that does not end it, and at each vote."""
    names = NAMES[: game.state.players]
    found: list[tuple[str, CardInput]] = []
    events: list[Event] = game.events
    for index, event in enumerate(events):
        ended = any(isinstance(e, ev.GameEnded) for e in events[index : index + 3])
        kind = ("morning" if isinstance(event, ev.NightResolved) and not ended
                else "vote" if isinstance(event, ev.VotingStarted) else None)
        if kind is not None:
            found.append((kind, CardInput(public_table(replay_events(events[: index + 1])), names, language)))
    return found


def sheet_of(game: Game, rules: Ruleset, language: str, game_id: int) -> SheetInput:
    """The protocol sheet of the ended ``game``."""
    seats = [SeatInfo(seat, 100 + seat, NAMES[seat - 1]) for seat in range(1, game.state.players + 1)]
    header = GameHeader(id=game_id, ruleset_name=rules.name, ruleset=rules, status="finished")
    points: dict[int, Decimal] = game.points()
    return SheetInput(build_protocol(header, seats, game.events, points), language)


def timed(draw: Any, arg: Any, repeat: int) -> tuple[list[float], int]:
    times, size = [], 0
    for _ in range(repeat):
        started = time.perf_counter()
        size = len(draw(arg))
        times.append(time.perf_counter() - started)
    return times, size


def render_times(args: argparse.Namespace) -> dict[str, Any]:
    rows: list[list[Any]] = []
    figures: dict[str, Any] = {}
    samples = Path(args.samples) if args.samples else None
    for preset, players in PRESETS:
        rules = find_ruleset(preset)
        for language in LANGUAGES:
            rng = random.Random(args.seed)
            games = [play_club_game(rules, players, rng) for _ in range(args.games)]
            per_kind: dict[str, tuple[list[float], list[int]]] = collections.defaultdict(lambda: ([], []))
            for number, game in enumerate(games, 1):
                for kind, card in cards_of(game, language):
                    times, size = timed(draw_card, card, args.repeat)
                    per_kind["card"][0].extend(times)
                    per_kind["card"][1].append(size)
                    if samples is not None and number == 1:
                        # The game's last card of each kind: the table by then has the most to show.
                        (samples / f"card-{preset}-{language}-{kind}.png").write_bytes(draw_card(card))
                sheet = sheet_of(game, rules, language, number)
                times, size = timed(draw_sheet, sheet, args.repeat)
                per_kind["sheet"][0].extend(times)
                per_kind["sheet"][1].append(size)
                if samples is not None and number == 1:
                    (samples / f"sheet-{preset}-{language}.png").write_bytes(draw_sheet(sheet))
            for kind, (times, sizes) in per_kind.items():
                p50, p99 = percentile(times, 50) * 1000, percentile(times, 99) * 1000
                mean_kb = sum(sizes) / len(sizes) / 1024
                rows.append([kind, preset, language, len(sizes), f"{p50:.1f}", f"{p99:.1f}", f"{mean_kb:.0f}",
                             f"{max(sizes) / 1024:.0f}"])
                figures[f"{kind}/{preset}/{language}"] = {"images": len(sizes), "p50_ms": round(p50, 1),
                                                          "p99_ms": round(p99, 1), "mean_kib": round(mean_kb, 1)}
    print_table(f"render time per image ({args.games} club-strategy games per preset and language, "
                f"each image drawn {args.repeat} times):",
                ["image", "preset", "lang", "images", "p50 ms", "p99 ms", "mean KiB", "max KiB"], rows)
    return figures


def _pictures_off() -> None:
    """The renderer as it was before the pictures: it attaches none."""
    def none(batch: render._Batch) -> tuple[render.Picture, ...]:
        batch.pictures.clear()
        return ()

    render._Batch.take_pictures = none  # type: ignore[method-assign, assignment]


async def _requests(preset: str, players: int, seed: int) -> tuple[collections.Counter[str], int]:
    # Real time, as the figures in docs/performance.md were taken: the game's countdown edits count too.
    async with harness(players, emulator_config=FAST, config={"game": {"seed": seed}}, real_time=True) as h:
        table = await open_table(h, preset, players)
        await Driver(h, table, Strategy(seed)).play()
        await table.done.wait()
        await h.wait(lambda: h.table() is None)
        me = h.bot.user.id if h.bot.user is not None else 0
        images = sum(len(m.attachments) for m in h.emu.messages(h.env.text) if m.author_id == me)
        return collections.Counter(f"{r.method} {r.route or r.path}" for r in h.emu.requests), images


def requests_per_game(args: argparse.Namespace) -> dict[str, Any]:
    after = {preset: asyncio.run(_requests(preset, players, args.seed)) for preset, players in PRESETS}
    original = render._Batch.take_pictures
    _pictures_off()
    try:
        before = {preset: asyncio.run(_requests(preset, players, args.seed)) for preset, players in PRESETS}
    finally:
        render._Batch.take_pictures = original  # type: ignore[method-assign]
    figures: dict[str, Any] = {}
    for preset, _players in PRESETS:
        (counts_before, _none), (counts_after, images) = before[preset], after[preset]
        routes = sorted(set(counts_before) | set(counts_after), key=lambda r: -counts_after[r])
        rows = [[route, counts_before[route], counts_after[route]] for route in routes]
        rows.append(["all", sum(counts_before.values()), sum(counts_after.values())])
        print_table(f"{preset}: requests per game by route, without and with pictures ({images} images posted):",
                    ["route", "without", "with"], rows)
        figures[preset] = {"without": sum(counts_before.values()), "with": sum(counts_after.values()),
                           "images": images}
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--samples", default="", help="write sample renders into this folder")
    parser.add_argument("--requests", action="store_true", help="also count requests per game on the emulator")
    args = parser.parse_args()
    if args.samples:
        Path(args.samples).mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {"benchmark": "pictures", "render": render_times(args)}
    if args.requests:
        result["requests"] = requests_per_game(args)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
