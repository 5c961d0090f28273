"""A round's openings: every table of ONE guild starts in the same second; how long until Night 0 runs.

Run: python benchmarks/openings.py [--tables 4,10] [--helpers 0,3] [--scale 1]

For each (tables, helpers) pair a fresh emulator process with one guild holding every table's text
and voice channel and its 12 players and judge (Discord's member-edit limit per guild and token,
5 per 5 s, its global limit, a 50 ms round trip), and the real bot in this process with that many
helper tokens. Every lobby is opened and filled through Discord; then every judge runs
``/mafia start`` at once. Nobody plays: the run ends once every table's Night 0 clock runs.

Figures per table, from the judges' commands: when its twelve start mutes were all answered by
Discord ("mutes confirmed"), when its Night 0 clock started, and how many of its seated players
Discord still had in voice and unmuted at that moment (the bot's view, from the gateway: it must be
0); per run
their p50 and max, the notes the judges got (Night 0 waits long: how many helper tokens the round
needs) and the 429s. ``--scale`` shrinks the member-edit window (1: Discord's 5 s).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import BotRun, EmulatorProcess, GuildInfo, percentile, print_table, start_bot
from benchmarks.one_guild import fill_lobby, start_round
from mafiabot.core.runtime import Table
from mafiabot.host.members import DiscordMemberEditor

WINDOW = 5.0
"""Discord's member-edit window (5 edits per token per guild), before ``--scale``."""


class Opening:
    """One table's opening, timed on the loop: its start update, the last start mute's answer, Night 0's clock."""

    def __init__(self, table: Table, heard: Callable[[int], bool]) -> None:
        self.table = table
        self.updated: float | None = None
        self.night_zero: float | None = None
        self.unmuted: int | None = None
        self.armed = asyncio.Event()
        update, arm = table.voice.update, table._arm

        def updated(desired: dict[int, bool], *, kind: str = "play") -> None:
            if kind == "start" and self.updated is None:
                self.updated = asyncio.get_running_loop().time()
            update(desired, kind=kind)

        def armed(*args: Any, **kwargs: Any) -> None:
            if self.night_zero is None:
                self.night_zero = asyncio.get_running_loop().time()
                self.unmuted = sum(heard(u) for u in table.seats)
                self.armed.set()
            arm(*args, **kwargs)

        table.voice.update = updated  # type: ignore[method-assign]
        table._arm = armed  # type: ignore[method-assign]

    async def done(self) -> None:
        """Night 0's clock runs and every start mute is answered."""
        await self.armed.wait()
        await self.table.voice.settled()

    def confirmed(self) -> float | None:
        """Loop time of Discord's answer to the last start mute (None: not all answered)."""
        start = self.table.voice.stats.latencies_of("start")
        return None if self.updated is None or not start else self.updated + start[0]


def watch(run: BotRun) -> tuple[list[Opening], list[dict[str, int]]]:
    """Time every table the bot makes from now on, and note what the judges are told of slow openings."""
    manager = run.bot.tables
    openings: list[Opening] = []
    notes: list[dict[str, int]] = []
    make, slow = manager._make_table, manager.side.slow_opening

    def made(*args: Any, **kwargs: Any) -> Table:
        table = make(*args, **kwargs)
        guild = run.bot.get_guild(table.guild_id)

        def heard(user_id: int) -> bool:
            """In voice and not server-muted, as Discord last reported (the bot's gateway view)."""
            member = guild.get_member(user_id) if guild is not None else None
            return member is not None and member.voice is not None and not member.voice.mute

        openings.append(Opening(table, heard))
        return table

    def told(table: Table, *, tables: int, seconds: int, helpers: int) -> None:
        notes.append({"table": table.id, "tables": tables, "seconds": seconds, "helpers": helpers})
        slow(table, tables=tables, seconds=seconds, helpers=helpers)

    manager._make_table = made  # type: ignore[method-assign]
    manager.side.slow_opening = told  # type: ignore[method-assign]
    return openings, notes


async def run_one(info: dict[str, Any], tables: int, helpers: int, limit: float) -> dict[str, Any]:
    guilds = [GuildInfo.of(g) for g in info["guilds"][:tables]]
    run = await start_bot(info, helpers=helpers, time_scale=1.0)
    try:
        sem = asyncio.Semaphore(4)

        async def fill(g: GuildInfo) -> None:
            async with sem:
                await fill_lobby(run, g)

        await asyncio.gather(*(fill(g) for g in guilds))
        editor = run.bot.editor
        assert isinstance(editor, DiscordMemberEditor)  # noqa: S101
        limited = editor.rate_limited
        openings, notes = watch(run)
        loop = asyncio.get_running_loop()
        began = loop.time()
        opened = await start_round(run, guilds)
        try:
            await asyncio.wait_for(asyncio.gather(*(o.done() for o in openings)), limit)
        except TimeoutError:
            print(f"not every table reached Night 0 within {limit:g} s", file=sys.stderr)
        for table in opened:
            table.stop()
        return figures(openings, began) | {"tables": tables, "helpers": helpers, "notes": notes,
                                           "rate_limited": editor.rate_limited - limited}
    finally:
        await run.close()


def figures(openings: list[Opening], began: float) -> dict[str, Any]:
    confirmed = [c - began for o in openings if (c := o.confirmed()) is not None]
    night = [o.night_zero - began for o in openings if o.night_zero is not None]
    return {
        "mutes_confirmed_s": stats(confirmed, len(openings)),
        "night_zero_s": stats(night, len(openings)),
        "unmuted_at_night_zero": max((o.unmuted or 0 for o in openings), default=0),
    }


def stats(values: list[float], expected: int) -> dict[str, Any]:
    return {"p50": round(percentile(values, 50), 2) if values else None,
            "max": round(max(values), 2) if values else None, "missing": expected - len(values)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tables", default="4,10", help="comma-separated table counts")
    parser.add_argument("--helpers", default="0,3", help="comma-separated helper-token counts")
    parser.add_argument("--scale", type=float, default=1.0, help="shrinks the member-edit window (1: 5 s)")
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds a run may wait for every Night 0")
    args = parser.parse_args()
    window = WINDOW * args.scale
    results = []
    for tables in (int(x) for x in args.tables.split(",")):
        for helpers in (int(x) for x in args.helpers.split(",")):
            emulator = EmulatorProcess(guilds=1, tables_per_guild=tables, latency_ms=args.latency_ms,
                                       member_edits=f"5/{window:g}", reactions="1/0.25", helpers=helpers)
            with emulator:
                started = time.monotonic()
                results.append(asyncio.run(run_one(emulator.info, tables, helpers, args.timeout)))
            print(f"{tables} tables, {helpers} helpers done in {time.monotonic() - started:.0f} s", file=sys.stderr)
    print(f"openings of tables in ONE guild, all started at once: RTT {args.latency_ms:g} ms, "
          f"member edits 5 per {window:g} s per guild per token; seconds from the judges' /mafia start")
    print_table("", ["tables", "helpers", "mutes confirmed p50 s", "mutes confirmed max s", "Night 0 p50 s",
                     "Night 0 max s", "heard at Night 0 (gateway)", "judges told", "helpers asked", "429s"],
                [[r["tables"], r["helpers"], r["mutes_confirmed_s"]["p50"], r["mutes_confirmed_s"]["max"],
                  r["night_zero_s"]["p50"], r["night_zero_s"]["max"], r["unmuted_at_night_zero"], len(r["notes"]),
                  max((n["helpers"] for n in r["notes"]), default="-"), r["rate_limited"]] for r in results])
    for r in results:
        print(json.dumps({"benchmark": "openings", "member_edit_window_s": window, **r}))


if __name__ == "__main__":
    main()
