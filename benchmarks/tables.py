"""Many concurrent tables in one bot process: event-loop lag, CPU seconds per game, memory per table.

Run: python benchmarks/tables.py [--tables 50] [--step 5.0] [--seconds 60] [--latency-ms 50]

For each table count a fresh emulator process (one guild per table, so every table has its own
member-edit bucket: 5 edits per 5 s per guild, and the bot's global limit of ``--global-limit``)
and the real bot in this process, with the game's timers at full length.

Pace: a classic game is about 74 commands and, at a minute a speech, roughly an hour: a command per
table every ~50 s (an estimate).
``--step 5`` plays ten times faster, so the default global limit is Discord's 50 requests per
second scaled by the same factor (``--global-limit 500/1``), as ``floor.py`` scales the
member-edit window with the speeches; ``--global-limit 50/1`` is the unscaled limit.

The 12 players and the judge of every guild join its voice channel through the control API.
Each table is opened in the bot (a lobby of the 12 players handed to ``TableManager.start``, as
``/mafia start`` does: the game row, the seating, the deal, the mafia thread). Then each table is
played bot-side: every ``--step`` seconds (±50 %, at random) it submits the next command of the
``random`` strategy of ``mafiabot.tools.simulate`` (``Nominate``, ``EndSpeech``, ``Shoot``, ``Check``,
``MakeBestMove``, ``Timeout`` for votes) with ``await table.submit(...)``. Each command is stored,
rendered to Discord and reconciled into member edits exactly as one from a click would be.
With ``--clicks`` the speaker's own acts (``EndSpeech``, ``Nominate``) are instead the speaker's
click on "Thank you" or pick in "Nominate…" through the control API, as at a real table, so the
messages they cause go as the click's follow-ups; the rest stays bot-side.

Figures, in the bot process: the lateness of a ``call_later`` tick every 50 ms during play;
``time.process_time()`` over the play window divided by the games it is worth (commands
submitted / the mean commands of a whole game of that strategy, from 500 engine-only games: a
game at this pace outlasts the window); resident memory (``/proc/self/statm``) with all
tables running, minus the baseline before the first table, per table; how late a command's
messages are (``Presenter.lateness``: from the command's events to the last of its messages
posted, the games' openings aside); the bot token's queue for the global limit each second.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import (
    EmulatorProcess,
    GuildInfo,
    LoopLag,
    join_voice_all,
    print_table,
    rss_bytes,
    start_bot,
    summary_ms,
)
from engine import EndSpeech, Nominate, RulesError, find_ruleset
from mafiabot.core.runtime import Lobby, Table, TableError
from mafiabot.host.presenter import custom_id
from mafiabot.testing.hands import EnginePlayer
from mafiabot.tools.simulate import play_random_game

MB = 1024 * 1024


async def open_tables(run: Any, guilds: list[GuildInfo], concurrency: int = 16) -> list[Table]:
    manager = run.bot.tables
    ruleset = find_ruleset("classic")
    sem = asyncio.Semaphore(concurrency)

    async def one(g: GuildInfo) -> Table:
        async with sem:
            # A lobby is a row that claims its channels, as /mafia new makes it.
            lobby_id = await run.store.open_lobby(guild_id=g.guild_id, channel_id=g.text, voice_channel_id=g.voice,
                                                  judge_id=g.judge, ruleset=ruleset)
            lobby = Lobby(id=lobby_id, guild_id=g.guild_id, channel_id=g.text,
                          voice_channel_id=g.voice, judge_id=g.judge, ruleset=ruleset, language="en",
                          seats=len(g.players), players=[(u, f"player {i}") for i, u in enumerate(g.players, 1)])
            manager.lobbies[lobby.id] = lobby
            table: Table = await manager.start(g.text, g.judge)
            return table

    return list(await asyncio.gather(*(one(g) for g in guilds)))


def reference_commands_per_game(seed: int, games: int = 500) -> float:
    """Mean commands of a whole game of the ``random`` strategy (the engine alone; what a game is worth)."""
    rng = random.Random(seed)
    ruleset = find_ruleset("classic")
    return sum(len(play_random_game(ruleset, 12, rng).history) for _ in range(games)) / games


async def click(run: Any, table: Table, command: EndSpeech | Nominate) -> bool | None:
    """The speaker's click for ``command``: whether the game took it (None: no control seen yet)."""
    action = "thanks" if isinstance(command, EndSpeech) else "nominate"
    cid = custom_id(action, table.id)
    message = run.index.latest.get((table.channel_id, cid))
    if message is None:
        return None
    before = len(table.game.history)
    body: dict[str, Any] = {"message_id": str(message), "custom_id": cid, "timeout": 30}
    if isinstance(command, Nominate):
        body["values"] = [str(command.target)]
    await run.control.act(table.user_at(command.seat), "click" if action == "thanks" else "select", **body)
    return len(table.game.history) > before


async def play(table: Table, player: EnginePlayer, step: float, deadline: float, counts: dict[str, int],
               run: Any = None) -> None:
    """Play ``table`` a command at a time; with ``run``, the speaker's acts are clicks through Discord."""
    rng = random.Random(table.id)
    await asyncio.sleep(rng.uniform(0, step))
    while not table.over and time.monotonic() < deadline:
        await asyncio.sleep(step * rng.uniform(0.5, 1.5))
        if table.over:
            break
        command = player.next(table.game)
        if run is not None and isinstance(command, EndSpeech | Nominate):
            taken = await click(run, table, command)
            if taken is not None:
                counts["commands" if taken else "refused"] += 1
                counts["clicks"] += 1
                continue
        try:
            await table.submit(command)
            counts["commands"] += 1
        except (RulesError, TableError):
            counts["refused"] += 1  # the table's own timer moved the game first


async def run_size(args: argparse.Namespace, info: dict[str, Any], n: int) -> dict[str, Any]:
    guilds = [GuildInfo.of(g) for g in info["guilds"][:n]]
    run = await start_bot(info, time_scale=1.0, max_messages=1000, helpers=args.helpers)
    if args.bulk_patience is not None:
        run.bot.global_limit.patience = args.bulk_patience
    try:
        began = time.monotonic()
        await join_voice_all(run, guilds)
        joined = time.monotonic() - began
        gc.collect()
        baseline = rss_bytes()
        began = time.monotonic()
        tables = await open_tables(run, guilds)
        opened = time.monotonic() - began
        gc.collect()
        after_open = rss_bytes()
        limit = run.bot.global_limit
        opening_granted, opening_waited = limit.granted, limit.waited
        presenter = run.bot.presenter
        presenter.lateness.clear()
        lag = LoopLag(0.05)
        lag.start()
        counts = {"commands": 0, "refused": 0, "clicks": 0}
        cpu0, wall0 = time.process_time(), time.monotonic()
        deadline = wall0 + args.seconds
        players = [EnginePlayer(args.seed * 100_003 + i) for i in range(n)]
        peak = after_open
        tasks = [asyncio.create_task(play(t, p, args.step, deadline, counts, run if args.clicks else None))
                 for t, p in zip(tables, players, strict=True)]
        queue: list[int] = []  # the bot token's requests waiting for the global limit, each second of play
        while not all(task.done() for task in tasks):
            await asyncio.sleep(1.0)
            peak = max(peak, rss_bytes())
            queue.append(limit.queued)
        cpu, wall = time.process_time() - cpu0, time.monotonic() - wall0
        lags = lag.stop()
        finished = [t for t in tables if t.over]
        per_game = reference_commands_per_game(args.seed)
        games_worth = counts["commands"] / per_game
        backlog = sum(q.qsize() for q in run.bot.presenter._queues.values())
        for t in tables:  # stop the clocks of unfinished games before the bot closes
            t.stop()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*(t.done.wait() for t in finished)), 30)
        requests = await run.control.get("requests/counts")
        return {
            "tables": n, "join_voice_s": round(joined, 1), "open_s": round(opened, 1),
            "play_s": round(wall, 1), "lag_ms": summary_ms(lags),
            "commands": counts["commands"], "refused": counts["refused"], "clicks": counts["clicks"],
            "commands_per_s": round(counts["commands"] / wall, 1),
            "games_finished": len(finished), "commands_per_game": round(per_game, 1),
            "games_worth": round(games_worth, 1),
            "cpu_s": round(cpu, 1), "cpu_load": round(cpu / wall, 2),
            "cpu_s_per_game": round(cpu / games_worth, 3) if games_worth else None,
            "cpu_ms_per_command": round(cpu / max(counts["commands"], 1) * 1000, 2),
            "rss_baseline_mb": round(baseline / MB, 1),
            "rss_per_table_kb_open": round((after_open - baseline) / n / 1024, 1),
            "rss_per_table_kb_peak": round((peak - baseline) / n / 1024, 1),
            "presenter_backlog_at_end": backlog,
            "rate_limited": run.bot.editor.rate_limited,
            "global_queue_at_play_start": queue[0] if queue else 0,
            "global_queue_empty_after_s": next((i + 1 for i, n in enumerate(queue) if n == 0), None),
            "global_queue_max_second_half": max(queue[len(queue) // 2:], default=0),
            "message_lateness_ms": summary_ms(list(presenter.lateness)),
            "global_wait_ms_mean_opening": round(1000 * opening_waited / max(opening_granted, 1), 1),
            "global_wait_ms_mean_play": round(
                1000 * (limit.waited - opening_waited) / max(limit.granted - opening_granted, 1), 1),
            "member_edit_requests": sum(v for k, v in requests.items() if k.startswith("PATCH /guilds/")),
            "messages": sum(v for k, v in requests.items() if k.startswith("POST /channels/{channel_id}/messages")),
            "followups": sum(v for k, v in requests.items() if k.startswith("POST /webhooks/")),
        }
    finally:
        await run.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tables", default="50", help="comma-separated table counts, e.g. 50,200,500")
    parser.add_argument("--step", type=float, default=5.0, help="mean seconds between a table's commands")
    parser.add_argument("--seconds", type=float, default=60.0, help="cap on the play window per size")
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--member-edits", default="5/5")
    parser.add_argument("--global-limit", default="500/1",
                        help="the bot's requests per window, all routes (Discord's 50/1, scaled like the pace)")
    parser.add_argument("--helpers", type=int, default=0, help="helper tokens for member edits")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--bulk-patience", type=float, default=None,
                        help="seconds openings wait behind running games (0: by age, as if there were no bulk lane)")
    parser.add_argument("--clicks", action="store_true",
                        help="speakers end their speech and nominate by clicking, through the control API")
    args = parser.parse_args()
    results = []
    for n in (int(x) for x in args.tables.split(",")):
        emulator = EmulatorProcess(guilds=n, latency_ms=args.latency_ms, member_edits=args.member_edits,
                                   global_limit=args.global_limit, helpers=args.helpers, no_spec_check=True)
        with emulator:
            results.append(asyncio.run(run_size(args, emulator.info, n)))
        print(f"{n} tables done", file=sys.stderr)
    print(f"concurrent tables: RTT {args.latency_ms:g} ms, member edits {args.member_edits} per guild, global "
          f"{args.global_limit}, {args.helpers} helper tokens, a command per table every {args.step:g} s (mean), "
          f"play window <= {args.seconds:g} s" + (", speakers click" if args.clicks else ""))
    print_table("", ["tables", "open s", "lag p50 ms", "lag p99 ms", "lag max ms", "cmds/s", "games done",
                     "CPU s/game", "CPU load", "KB/table", "KB/table peak", "backlog", "429s",
                     "global wait ms (open/play)"],
                [[r["tables"], r["open_s"], r["lag_ms"]["p50"], r["lag_ms"]["p99"], r["lag_ms"]["max"],
                  r["commands_per_s"], f"{r['games_finished']}/{r['tables']}", r["cpu_s_per_game"], r["cpu_load"],
                  r["rss_per_table_kb_open"], r["rss_per_table_kb_peak"], r["presenter_backlog_at_end"],
                  r["rate_limited"], f"{r['global_wait_ms_mean_opening']}/{r['global_wait_ms_mean_play']}"]
                 for r in results])
    for r in results:
        print(f"{r['tables']} tables: {r['messages']} channel messages, {r['followups']} follow-ups, "
              f"{r['clicks']} clicks")
        late = r["message_lateness_ms"]
        print(f"{r['tables']} tables: a command's messages during play, from its events to the last of them: "
              f"p50 {late['p50']} ms, p95 {late['p95']} ms, p99 {late['p99']} ms, max {late['max']} ms")
        print(f"{r['tables']} tables: {r['global_queue_at_play_start']} requests of the bot's token queued for the "
              f"global limit when play began, none after {r['global_queue_empty_after_s']} s, at most "
              f"{r['global_queue_max_second_half']} in the second half of play")
    for r in results:
        print(json.dumps({"benchmark": "tables", "rtt_ms": args.latency_ms, "step_s": args.step,
                          "member_edits": args.member_edits, "global_limit": args.global_limit,
                          "helpers": args.helpers,
                          "goal_lag_p99_under_100ms": r["lag_ms"]["p99"] < 100, **r}))


if __name__ == "__main__":
    main()
