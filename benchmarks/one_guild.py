"""Many tables in ONE guild: they share its member-edit bucket (5 per 5 s per token), by tables and helpers.

Run: python benchmarks/one_guild.py [--tables 5] [--helpers 3] [--seconds 60] [--scale 0.25]
Full grid: python benchmarks/one_guild.py --grid  (the same as --tables 2,5,10 --helpers 0,1,3)

For each (tables, helpers) pair a fresh emulator process with one guild holding every table's
text and voice channel and its 12 players and judge (the round trip of ``--latency-ms``,
Discord's member-edit limit per guild and token, its global limit of 50 per second per token),
and the real bot in this process with that many helper tokens. Every table's lobby is opened
and filled through Discord (the judge's ``/mafia new``, the players' "Join" clicks); then the
round starts: every judge runs ``/mafia start`` at once. The scripted players
(``mafiabot.testing.hands``, as in ``floor.py``) play through the control API: speakers hold the
floor ``--speech`` seconds (table by table 0.8 to 1.2 times that, so that tables started
together drift apart as real ones do) and click "Thank you", nominate by menu, vote by ✋
reactions, act at night by clicks. Play stops after ``--seconds`` (the games go on longer).
With ``--late-start S`` the last table starts S seconds (before scaling) after the others, so its
twelve start mutes meet the floor changes of tables already playing.

``--scale`` shrinks the speeches, the game's timers and the member-edit window by the same factor
(``floor.py`` also halves the timers; here they keep their ratio to the window, since whether the
round's start mutes fit inside Night 0 is one of the figures), so a speech spans as many
member-edit windows as at full length and a window holds as many floor changes of all the tables
as at the real pace; the round trip is not scaled. ``--scale 1`` is the real clock.

Figures per run: floor-change latency (from the engine's floor change to Discord's answer to the
last edit it needed, every table), member edits per floor change, the time from the round's
start (the judges' commands) to each table's first speech (its speaker's unmute answered; Night 0
lies in between), how long each table's start mutes took, and the 429s the member editor met;
beside them the bot's event-loop lag (a tick every 50 ms) and each token's mean wait for its
global limit, which say what a floor change's time is made of when the budget is not the bound.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import (
    BotRun,
    Driver,
    EmulatorProcess,
    GuildInfo,
    LoopLag,
    Pace,
    percentile,
    print_table,
    start_bot,
    summary_ms,
)
from engine import find_ruleset
from mafiabot.core.runtime import Table
from mafiabot.core.tables import TableManager
from mafiabot.host.members import DiscordMemberEditor
from mafiabot.testing.hands import seeded

WINDOW = 5.0
"""Discord's member-edit window (5 edits per token per guild), before ``--scale``."""


async def fill_lobby(run: BotRun, g: GuildInfo) -> None:
    """Everyone of a table sits in its voice channel; the judge opens a lobby and the players join it."""
    control = run.control
    await asyncio.gather(*(control.act(u, "join_voice", channel_id=str(g.voice)) for u in [*g.players, g.judge]))
    guild = run.bot.get_guild(g.guild_id)
    for _ in range(400):
        if guild is not None and all((m := guild.get_member(u)) and m.voice for u in g.players):
            break
        await asyncio.sleep(0.05)
    reply = await control.act(g.judge, "command", channel_id=str(g.text), name="mafia new",
                              options={"ruleset": "classic", "seats": len(g.players)}, timeout=30)
    lobby = reply["message"]
    join = next(c["custom_id"] for row in lobby["components"] for c in row["components"] if ":join:" in c["custom_id"])
    for user in g.players:
        await control.act(user, "click", message_id=lobby["id"], custom_id=join, timeout=30)


async def start_round(run: BotRun, guilds: list[GuildInfo]) -> list[Table]:
    """Every judge starts their table at once; the tables, once the bot has them."""
    await asyncio.gather(*(run.control.act(g.judge, "command", channel_id=str(g.text), name="mafia start",
                                           timeout=60) for g in guilds))
    tables = []
    for g in guilds:
        for _ in range(1200):
            table = run.bot.tables.table_in(g.text)
            if table is not None:
                tables.append(table)
                break
            await asyncio.sleep(0.05)
        else:
            raise RuntimeError(f"the table in {g.text} did not start")
    return tables


class FirstSpeech:
    """When a table's first speech began (its floor moved, loop time), read as the manager wakes its watchers."""

    def __init__(self, manager: TableManager, table: Table, began: float) -> None:
        self.table = table
        self.began = began
        """When the table's judge ran ``/mafia start`` (loop time)."""
        self.at: float | None = None
        self.generation: int | None = None
        manager.watch(table, self._seen)

    def _seen(self) -> None:
        state = self.table.game.state
        if self.at is None and state.day >= 1 and state.floor is not None:
            self.at = asyncio.get_running_loop().time()
            self.generation = self.table.voice._generation

    def answered(self) -> float | None:
        """Seconds from the start to Discord's answer to the first speech's edits (None: not answered)."""
        if self.at is None or self.generation is None:
            return None
        latency = self.table.voice.stats.latencies.get(self.generation)
        return None if latency is None else self.at + latency - self.began


async def run_one(args: argparse.Namespace, info: dict[str, Any], tables: int, helpers: int) -> dict[str, Any]:
    guilds = [GuildInfo.of(g) for g in info["guilds"][:tables]]
    run = await start_bot(info, helpers=helpers, time_scale=args.scale)
    opened: list[Table] = []
    try:
        sem = asyncio.Semaphore(4)

        async def fill(g: GuildInfo) -> None:
            async with sem:
                await fill_lobby(run, g)

        await asyncio.gather(*(fill(g) for g in guilds))
        editor = run.bot.editor
        assert isinstance(editor, DiscordMemberEditor)  # noqa: S101
        limited_before = editor.rate_limited
        loop = asyncio.get_running_loop()
        late = guilds[-1:] if args.late_start and tables > 1 else []
        firsts: list[FirstSpeech] = []
        tasks: list[asyncio.Task[None]] = []

        async def start(group: list[GuildInfo]) -> float:
            """Start ``group``'s tables at once and set their players going; when the judges' commands went."""
            at = loop.time()
            new = await start_round(run, group)
            for g, t in zip(group, new, strict=True):
                i = guilds.index(g)
                firsts.append(FirstSpeech(run.bot.tables, t, at))
                pace = Pace(speech=args.speech * args.scale * spread(i, tables))
                tasks.append(asyncio.create_task(Driver(run, g, t, seeded(args.seed, i), pace).play()))
            opened.extend(new)
            return at

        lag = LoopLag(0.05)
        lag.start()
        began = await start(guilds[: len(guilds) - len(late)])
        started_s = loop.time() - began
        if late:  # one table opens while the others play: its start mutes meet their floor changes
            await asyncio.sleep(args.late_start * args.scale)
            await start(late)
        done, _ = await asyncio.wait(tasks, timeout=max(began + args.seconds - loop.time(), 1.0))
        lags = lag.stop()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        failed = [t.exception() for t in done if not t.cancelled() and t.exception() is not None]
        for table in opened:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(table.voice.settled(), 10)
        await asyncio.sleep(1.0)  # clicks already on their way reach the bot before it closes
        return figures(opened, firsts, started_s) | {
            "tables": tables, "helpers": helpers, "rate_limited": editor.rate_limited - limited_before,
            "waited_s": round(editor.waited, 2), "edits_by_token": list(editor.sent_by_token),
            **lanes(editor),
            "games_over": sum(t.over for t in opened), "driver_errors": [repr(e) for e in failed],
            "loop_lag_ms": summary_ms(lags), "global_wait_ms": global_waits(editor),
        }
    finally:
        for table in opened:  # stop the clocks of unfinished games before the bot closes
            if not table.over:
                table.stop()
        await run.close()


def spread(i: int, tables: int) -> float:
    """Table ``i``'s speeches last 0.8 to 1.2 times the mean: tables started together drift apart, as real ones do."""
    return 1.0 if tables < 2 else 0.8 + 0.4 * i / (tables - 1)


def global_waits(editor: DiscordMemberEditor) -> list[float]:
    """Mean milliseconds a request waited for each token's global limit (the bot's own first)."""
    return [round(1000 * g.waited / max(g.granted, 1), 2) for g in editor.global_limits]


def lanes(editor: DiscordMemberEditor) -> dict[str, Any]:
    """Edits and seconds waited for budget by lane (floor changes, starts and ends); absent before the lanes."""
    sent, waited = getattr(editor, "sent_by_lane", None), getattr(editor, "waited_by_lane", None)
    if sent is None or waited is None:
        return {}
    return {"edits_by_lane": {"floor": sent[0], "batch": sent[1]},
            "waited_by_lane_s": {"floor": round(waited[0], 3), "batch": round(waited[1], 2)}}


def figures(tables: list[Table], firsts: list[FirstSpeech], started_s: float) -> dict[str, Any]:
    stats = [t.voice.stats for t in tables]
    play = [s for st in stats for s in st.latencies_of("play")]
    edits = [n for st in stats for g, n in st.edits.items() if st.kinds.get(g) == "play"]
    changes = sum(1 for st in stats for k in st.kinds.values() if k == "play")
    first = [f.answered() for f in firsts]
    answered = [x for x in first if x is not None]
    return {
        "floor_change_ms": summary_ms(play),
        "floor_changes": changes,
        "edits_per_change_mean": round(sum(edits) / max(changes, 1), 2),
        "edits_per_change_max": max(edits, default=0),
        "start_ms": summary_ms([s for st in stats for s in st.latencies_of("start")]),
        "first_speech_s": {"p50": round(percentile(answered, 50), 2) if answered else None,
                           "max": round(max(answered), 2) if answered else None,
                           "missing": len(first) - len(answered)},
        "commands_answered_s": round(started_s, 2),
    }


def budget(args: argparse.Namespace, r: dict[str, Any]) -> dict[str, float]:
    """The budget arithmetic of a run: edits the floor changes ask for per window, against the slots."""
    window = WINDOW * args.scale
    per_change = r["edits_per_change_mean"]
    changes_per_window = r["floor_changes"] / max(args.seconds, 1e-9) * window
    slots = 5 * (1 + r["helpers"])
    return {"window_s": window, "edits_per_window": round(per_change * changes_per_window, 2), "slots": slots,
            "start_edits": 12 * r["tables"], "start_windows": round(12 * r["tables"] / slots, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tables", default="5", help="comma-separated table counts, e.g. 2,5,10")
    parser.add_argument("--helpers", default="3", help="comma-separated helper-token counts, e.g. 0,1,3")
    parser.add_argument("--speech", type=float, default=20.0, help="seconds a speaker holds the floor, unscaled")
    parser.add_argument("--scale", type=float, default=0.25, help="shrinks speeches, timers and the edit window")
    parser.add_argument("--seconds", type=float, default=60.0, help="play window per run (real seconds)")
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--late-start", type=float, default=0.0,
                        help="the last table starts this many seconds (unscaled) after the others; 0: all at once")
    parser.add_argument("--grid", action="store_true", help="the issue's grid: 2, 5 and 10 tables, 0, 1 and 3 helpers")
    args = parser.parse_args()
    if args.grid:
        args.tables, args.helpers = "2,5,10", "0,1,3"
    window = WINDOW * args.scale
    night_zero = find_ruleset("classic").night_zero_seconds * args.scale
    results = []
    for tables in (int(x) for x in args.tables.split(",")):
        for helpers in (int(x) for x in args.helpers.split(",")):
            emulator = EmulatorProcess(guilds=1, tables_per_guild=tables, latency_ms=args.latency_ms,
                                       member_edits=f"5/{window:g}", reactions="1/0.25", helpers=helpers)
            with emulator:
                started = time.monotonic()
                results.append(asyncio.run(run_one(args, emulator.info, tables, helpers)))
            print(f"{tables} tables, {helpers} helpers done in {time.monotonic() - started:.0f} s", file=sys.stderr)
    rtt = args.latency_ms
    print(f"tables in ONE guild: RTT {rtt:g} ms, member edits 5 per {window:g} s per guild per token, "
          f"speeches {args.speech * args.scale:g} s, Night 0 {night_zero:g} s (scale {args.scale:g}), "
          f"play window {args.seconds:g} s"
          + (f", the last table starts {args.late_start * args.scale:g} s after the others" if args.late_start else ""))
    print_table("", ["tables", "helpers", "changes", "p50 ms", "p99 ms", "max ms", "edits/change", "max edits",
                     "start p50 ms", "start max ms", "1st speech p50 s", "1st speech max s", "429s"],
                [[r["tables"], r["helpers"], r["floor_changes"], r["floor_change_ms"]["p50"],
                  r["floor_change_ms"]["p99"], r["floor_change_ms"]["max"], r["edits_per_change_mean"],
                  r["edits_per_change_max"], r["start_ms"]["p50"], r["start_ms"]["max"],
                  _maybe(r["first_speech_s"]["p50"]), _maybe(r["first_speech_s"]["max"]), r["rate_limited"]]
                 for r in results])
    print_table("budget per window (floor changes of all tables vs slots of all tokens):",
                ["tables", "helpers", "window s", "floor edits/window", "slots", "start edits", "start windows"],
                [[r["tables"], r["helpers"], *budget(args, r).values()] for r in results])
    print_table("where the time goes:", ["tables", "helpers", "loop lag p50 ms", "loop lag p99 ms",
                                         "global wait ms by token", "floor edits waited s", "batch edits waited s"],
                [[r["tables"], r["helpers"], r["loop_lag_ms"]["p50"], r["loop_lag_ms"]["p99"],
                  "/".join(f"{w:g}" for w in r["global_wait_ms"]), r.get("waited_by_lane_s", {}).get("floor", "-"),
                  r.get("waited_by_lane_s", {}).get("batch", "-")] for r in results])
    for r in results:
        goal = r["floor_change_ms"]["p99"] <= rtt + 30 and r["rate_limited"] == 0
        print(json.dumps({"benchmark": "one_guild", "rtt_ms": rtt, "scale": args.scale,
                          "speech_s": args.speech * args.scale, "member_edit_window_s": window,
                          "play_s": args.seconds, "late_start_s": args.late_start * args.scale,
                          "budget": budget(args, r),
                          "goal_p99_within_rtt_plus_30_no_429": goal, **r}))


def _maybe(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


if __name__ == "__main__":
    main()
