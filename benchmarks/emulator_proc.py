"""The emulator for the benchmarks, in its own process: many guilds sharing one bot and its helpers.

``python -m mafiabot.emulator`` builds one guild per ``/_emulator/setup`` call with new
applications each time; a benchmark needs the same bot (and the same helper bots) invited to
every guild, so this script builds the world at start and prints it as one JSON line, then serves
the usual control API until interrupted.

Run: python benchmarks/emulator_proc.py --guilds 4 --members 13 --helpers 3 --latency-ms 50

With ``--tables-per-guild N`` each guild gets N tables' channels and members, printed as N entries
that share the guild's id.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import sys

from mafiabot.emulator.ratelimit import RateLimitConfig, parse_limit
from mafiabot.emulator.server import Emulator, EmulatorConfig
from mafiabot.emulator.state import DEFAULT_EVERYONE, ChannelType, Permission
from mafiabot.emulator.testing import BOT_PERMISSIONS

HELPER_PERMISSIONS = int(DEFAULT_EVERYONE | Permission.MUTE_MEMBERS)


async def serve(args: argparse.Namespace) -> None:
    limits = RateLimitConfig(member_edits=parse_limit(args.member_edits), reactions=parse_limit(args.reactions),
                             global_limit=parse_limit(args.global_limit))
    emu = Emulator(EmulatorConfig(latency_ms=args.latency_ms, rate_limits=limits))
    if args.no_spec_check:
        emu.spec.skip_reason = "turned off for a load benchmark"
    await emu.start("127.0.0.1", args.port)
    bot = emu.create_application("mafiabot")
    helpers = [emu.create_application(f"helper{i + 1}") for i in range(args.helpers)]
    guilds = []
    for g in range(args.guilds):
        guild = emu.create_guild(f"Club {g + 1}")
        emu.add_bot(guild, bot, BOT_PERMISSIONS)
        for helper in helpers:
            emu.add_bot(guild, helper, HELPER_PERMISSIONS)
        for t in range(args.tables_per_guild):  # each table an entry of its own, the guild's id repeated
            text = emu.create_channel(guild, f"table-{t + 1}")
            voice = emu.create_channel(guild, f"Table {t + 1} voice", ChannelType.GUILD_VOICE)
            users = [emu.create_user(f"p{g + 1}-{t + 1}-{i + 1}") for i in range(args.members)]
            for user in users:
                emu.add_member(guild, user)
            guilds.append({"guild_id": str(guild.id), "text_channel_id": str(text.id),
                           "voice_channel_id": str(voice.id), "user_ids": [str(u.id) for u in users]})
        if args.guilds > 1 and g % 50 == 0:
            await asyncio.sleep(0)  # guild ids take a fresh millisecond each
    info = {"url": emu.url, "api": emu.api_url, "gateway": emu.gateway_url, "token": bot.token,
            "helper_tokens": [h.token for h in helpers], "guilds": guilds, "bot_app_id": str(bot.id),
            "global_per_second": limits.global_limit[0] / limits.global_limit[1]}
    sys.stdout.write(json.dumps(info) + "\n")
    sys.stdout.flush()
    try:
        await asyncio.Event().wait()
    finally:
        await emu.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--guilds", type=int, default=1)
    parser.add_argument("--members", type=int, default=13, help="per table: 12 players and a judge")
    parser.add_argument("--tables-per-guild", type=int, default=1,
                        help="text and voice channels (and members) for this many tables in each guild")
    parser.add_argument("--helpers", type=int, default=0, help="helper bot applications, invited to every guild")
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--member-edits", default="5/5")
    parser.add_argument("--reactions", default="1/0.25")
    parser.add_argument("--global-limit", default="50/1")
    parser.add_argument("--no-spec-check", action="store_true", help="skip the OpenAPI check (load runs)")
    logging.basicConfig(level=logging.ERROR)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(parser.parse_args()))


if __name__ == "__main__":
    main()
