"""Floor changes over whole games, our reconciler side by side with the per-phase policy.

Run: python benchmarks/floor.py [--games 3] [--baseline-games 2] [--scale 0.25] [--latency-ms 50]

The emulator runs in another process with the round-trip latency and Discord's member-edit
limit (5 per 5 s per guild per token); the real bot runs here with one token. Each game has its
own guild. Speakers hold the floor 10 s (``--speech``) and then say "Thank you".

``--scale`` shrinks the speeches, the game's timers and the member-edit window by the same factor,
so a game takes minutes instead of a quarter of an hour while each speech still spans two
member-edit windows, as a 10 s speech does against Discord's 5 s window. The round trip is not
scaled: it is what is measured.

The per-phase policy is what AutoMuteUs does: at every change it sets the mute of the whole table
through discord.py (which sleeps out a 429 inside the call). It plays ``--baseline-games`` games in
the same run, in guilds of their own.

Latency of a floor change: from the engine's floor change (``Table._react`` handing the reconciler
its new state) to Discord's answer to the last edit it needed (the new holder's unmute and the
old holder's mute).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import discord.http

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import mafiabot.core.runtime
from benchmarks._common import (
    Driver,
    EmulatorProcess,
    GuildInfo,
    Pace,
    open_table,
    print_table,
    routes_per_game,
    start_bot,
    summary_ms,
)
from mafiabot.core.nicks import Rename
from mafiabot.core.ports import MemberEditor, MuteLedger
from mafiabot.core.voice import VoiceReconciler
from mafiabot.host.members import DiscordMemberEditor
from mafiabot.testing.hands import seeded


class DiscordPyEditor:
    """Member edits through discord.py's own HTTP client, one token: it sleeps out each 429 window."""

    def __init__(self, inner: MemberEditor) -> None:
        if not isinstance(inner, DiscordMemberEditor):
            raise TypeError("the per-phase policy edits through the bot's own member editor")
        self.inner = inner
        self.http = cast("discord.http.HTTPClient", inner.identity)  # the bot's own discord.py client
        self.sent = 0

    async def set_mute(
        self, guild_id: int, user_id: int, *, mute: bool, still_wanted: Callable[[], bool] | None = None,
        nick: Rename | None = None, table: int | None = None, batch: bool = False,
    ) -> bool:
        self.sent += 1
        await self.http.edit_member(guild_id, user_id, mute=mute)
        return True

    def voice_mute(self, guild_id: int, user_id: int) -> bool | None:
        return self.inner.voice_mute(guild_id, user_id)


class WholeTableReconciler(VoiceReconciler):
    """The per-phase policy: at every change, every member of the table gets an edit."""

    def __init__(self, editor: MemberEditor, ledger: MuteLedger, *, guild_id: int, game_id: int) -> None:
        super().__init__(DiscordPyEditor(editor), ledger, guild_id=guild_id, game_id=game_id)
        self._done_generation = 0

    def _pending(self) -> list[tuple[int, bool]]:
        if self._done_generation == self._generation:
            return []
        self._done_generation = self._generation
        return sorted(self._desired.items(), key=lambda change: change[1])

    async def _edit(
        self, user: int, mute: bool, generation: int, recorded: asyncio.Future[None] | None,  # noqa: FBT001
        rename: Rename | None = None,
    ) -> bool:
        self._desired = dict(self._desired)  # every edit goes out, stale or not, as the policy does
        wanted = self._desired.get(user)
        self._desired[user] = mute
        try:
            return await super()._edit(user, mute, generation, recorded, rename)
        finally:
            if wanted is not None:
                self._desired[user] = wanted


def install_baseline(guilds: set[int]) -> None:
    """Tables in ``guilds`` get the per-phase policy instead of our reconciler."""
    original = VoiceReconciler

    def choose(editor: MemberEditor, ledger: MuteLedger, *, guild_id: int, game_id: int) -> VoiceReconciler:
        cls = WholeTableReconciler if guild_id in guilds else original
        return cls(editor, ledger, guild_id=guild_id, game_id=game_id)

    vars(mafiabot.core.runtime)["VoiceReconciler"] = choose  # the runtime builds each table's reconciler by this name


async def play_all(args: argparse.Namespace, info: dict[str, Any]) -> dict[str, Any]:
    guilds = [GuildInfo.of(g) for g in info["guilds"]]
    ours, theirs = guilds[: args.games], guilds[args.games:]
    install_baseline({g.guild_id for g in theirs})
    run = await start_bot(info, helpers=0, time_scale=0.5 * args.scale)
    try:
        await run.control.post("requests/reset")
        tables = [await open_table(run, g) for g in guilds]
        drivers = [Driver(run, g, t, seeded(args.seed, i), Pace(speech=args.speech * args.scale))
                   for i, (g, t) in enumerate(zip(guilds, tables, strict=True))]
        await asyncio.wait_for(asyncio.gather(*(d.play() for d in drivers)), args.timeout)
        for table in tables:  # the per-phase policy's backlog of edits drains well after the game
            await asyncio.wait_for(table.voice.settled(), 600)
        counts = await run.control.get("requests/counts")
        app_counts = dict(counts)
        editor = run.bot.editor
        return {"tables": tables, "ours": len(ours), "routes": app_counts, "rate_limited": editor.rate_limited,
                "waited": editor.waited, "drivers": drivers}
    finally:
        await run.close()


def figures(tables: list[Any]) -> dict[str, Any]:
    play = [s for t in tables for s in t.voice.stats.latencies_of("play")]
    edits = [n for t in tables for g, n in t.voice.stats.edits.items() if t.voice.stats.kinds.get(g) == "play"]
    changes = [g for t in tables for g, k in t.voice.stats.kinds.items() if k == "play"]
    total = [sum(t.voice.stats.edits.values()) for t in tables]
    return {
        "floor_change_ms": summary_ms(play),
        "floor_changes": len(changes),
        "edits_per_change_mean": round(sum(edits) / max(len(changes), 1), 2),
        "edits_per_change_max": max(edits, default=0),
        "member_edits_per_game": round(sum(total) / max(len(tables), 1), 1),
        "start_ms": summary_ms([s for t in tables for s in t.voice.stats.latencies_of("start")]),
        "end_ms": summary_ms([s for t in tables for s in t.voice.stats.latencies_of("end")]),
        "days_per_game": round(sum(t.game.state.day for t in tables) / max(len(tables), 1), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=3, help="games with our reconciler")
    parser.add_argument("--baseline-games", type=int, default=2, help="games with the per-phase policy")
    parser.add_argument("--speech", type=float, default=10.0, help="seconds a speaker holds the floor")
    parser.add_argument("--scale", type=float, default=0.25, help="shrinks speeches, timers and the edit window")
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=900)
    args = parser.parse_args()
    window = 5 * args.scale
    emulator = EmulatorProcess(guilds=args.games + args.baseline_games, latency_ms=args.latency_ms,
                               member_edits=f"5/{window:g}", reactions="1/0.25")
    with emulator:
        result = asyncio.run(play_all(args, emulator.info))
    tables = result["tables"]
    ours, theirs = figures(tables[: result["ours"]]), figures(tables[result["ours"]:])
    games = len(tables)
    rtt = args.latency_ms
    rows = []
    for name, f in (("reconciler", ours), ("per-phase", theirs)):
        lat = f["floor_change_ms"]
        rows.append([name, games and f"{lat['n']}", lat["p50"], lat["p95"], lat["p99"], lat["max"],
                     f["edits_per_change_mean"], f["edits_per_change_max"], f["member_edits_per_game"]])
    print(f"floor changes over whole games: RTT {rtt:g} ms, member edits 5 per {window:g} s per guild, one token, "
          f"speeches {args.speech * args.scale:g} s (scale {args.scale:g})")
    print_table("", ["policy", "changes", "p50 ms", "p95 ms", "p99 ms", "max ms", "edits/change", "max edits",
                     "edits/game"], rows)
    ratio = {k: round(theirs["floor_change_ms"][k] / ours["floor_change_ms"][k], 1)
             for k in ("p50", "p95", "p99", "max") if ours["floor_change_ms"][k]}
    print(f"per-phase / reconciler latency: {ratio}")
    print(f"429 answers to our editor: {result['rate_limited']}; seconds it waited for budget: "
          f"{result['waited']:.2f}")
    print_table("requests per game by route (all games, both policies):", ["route", "per game"],
                [[r, n] for r, n in routes_per_game(result["routes"], games).items()])
    print(json.dumps({
        "benchmark": "floor", "rtt_ms": rtt, "scale": args.scale, "speech_s": args.speech * args.scale,
        "member_edit_window_s": window, "games": args.games, "baseline_games": args.baseline_games,
        "reconciler": ours, "per_phase": theirs, "latency_ratio": ratio,
        "rate_limited": result["rate_limited"], "waited_s": round(result["waited"], 3),
        "requests_per_game": routes_per_game(result["routes"], games),
    }))


if __name__ == "__main__":
    main()
