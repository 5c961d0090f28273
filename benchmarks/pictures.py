"""Pictures: render time and size of the table card and the protocol sheet, and requests per game.

Run: python benchmarks/pictures.py [--games 3] [--repeat 3] [--requests]

For each preset and language it plays games of the simulator's club strategy through the engine and
renders them command by command as the bot does (``mafiabot.tools.samples.posted``): every card
(night zero, each morning, each vote, each lift vote) and the sheet at the end, plus the two sample
charts. For each kind of picture it prints the mean PNG size and the p50 render time, written as
RGB (as before) and by the 256-colour palette (as shipped). ``--requests`` plays one whole game per
preset on the emulator with the pictures and one without, and prints the requests per game by
route for both. The samples in docs/images are drawn by ``mafiabot pictures samples docs/images``.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# The folder holds a script named like the engine package: the checkout's root goes first.
sys.path[:] = [str(Path(__file__).resolve().parent.parent),
               *(p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent)]

from benchmarks._common import percentile, print_table  # noqa: E402
from engine import Game, find_ruleset  # noqa: E402
from mafiabot.emulator import EmulatorConfig, RateLimitConfig  # noqa: E402
from mafiabot.host import render  # noqa: E402
from mafiabot.host.pictures import png  # noqa: E402
from mafiabot.host.render import Picture  # noqa: E402
from mafiabot.testing import Driver, Strategy, harness, open_table  # noqa: E402
from mafiabot.tools.samples import LANGUAGES, PRESETS, chart_samples, kind, posted  # noqa: E402
from mafiabot.tools.simulate import play_club_game  # noqa: E402

FAST = EmulatorConfig(rate_limits=RateLimitConfig(member_edits=(100, 1.0), reactions=(100, 1.0),
                                                   global_limit=(1000, 1.0)))
"""Discord's limits except the ones a single quick game would wait on."""


def kinds_of(game: Game, language: str, game_id: int) -> list[tuple[str, Picture]]:
    """Every picture the bot posts over ``game`` (cards at night zero, each morning, vote and lift vote; the sheet)."""
    return [("sheet" if kind(p) == "protocol" else f"card/{kind(p)}", p) for p in posted(game, language, game_id)]


def timed(draw: Callable[[], bytes], repeat: int) -> tuple[list[float], int]:
    times, size = [], 0
    for _ in range(repeat):
        started = time.perf_counter()
        size = len(draw())
        times.append(time.perf_counter() - started)
    return times, size


def _drawn(args: argparse.Namespace) -> dict[str, list[Callable[[], bytes]]]:
    """Every picture of ``args.games`` club games per preset and language, and the two sample charts, by kind."""
    pictures: dict[str, list[Callable[[], bytes]]] = collections.defaultdict(list)
    for preset, players in PRESETS:
        for language in LANGUAGES:
            rng = random.Random(args.seed)
            for number in range(1, args.games + 1):
                game = play_club_game(find_ruleset(preset), players, rng)
                for name, picture in kinds_of(game, language, number):
                    pictures[name].append(picture.draw)
    for name, draw in chart_samples().items():
        pictures[f"chart/{name.removeprefix('chart-').split('-')[0]}"].append(draw)
    return pictures


def render_times(args: argparse.Namespace) -> dict[str, Any]:
    """Bytes and render time per picture kind, as RGB PNGs (before) and by the palette (after)."""
    pictures = _drawn(args)
    rows: list[list[Any]] = []
    figures: dict[str, Any] = {}
    for name in sorted(pictures):
        measured = {}
        for palette in (False, True):
            png.PALETTE = palette
            times, sizes = [], []
            for draw in pictures[name]:
                took, size = timed(draw, args.repeat)
                times += took
                sizes.append(size)
            measured[palette] = (percentile(times, 50) * 1000, sum(sizes) / len(sizes))
        png.PALETTE = True
        (before_ms, before), (after_ms, after) = measured[False], measured[True]
        rows.append([name, len(pictures[name]), f"{before:.0f}", f"{after:.0f}", f"{before / after:.2f}",
                     f"{before_ms:.0f}", f"{after_ms:.0f}"])
        figures[name] = {"images": len(pictures[name]), "bytes_before": round(before), "bytes_after": round(after),
                         "ratio": round(before / after, 2), "p50_ms_before": round(before_ms, 1),
                         "p50_ms_after": round(after_ms, 1)}
    print_table(f"bytes and render time per picture ({args.games} club-strategy games per preset and language; "
                f"each picture drawn {args.repeat} times): RGB PNG before, 256-colour palette after",
                ["picture", "images", "bytes before", "bytes after", "ratio", "p50 ms before", "p50 ms after"], rows)
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
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--requests", action="store_true", help="also count requests per game on the emulator")
    args = parser.parse_args()
    result: dict[str, Any] = {"benchmark": "pictures", "render": render_times(args)}
    if args.requests:
        result["requests"] = requests_per_game(args)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
