"""Run an emulator as its own process: ``python -m mafiabot.emulator --port 8765 --latency-ms 50``."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import sys
from pathlib import Path

from .ratelimit import RateLimitConfig, parse_limit
from .server import Emulator, EmulatorConfig


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m mafiabot.emulator", description="A local Discord for mafiabot.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (printed on start)")
    parser.add_argument("--latency-ms", type=float, default=50.0, help="added REST round trip")
    parser.add_argument("--member-edits", default="5/5", help="member edit bucket, LIMIT/SECONDS per guild")
    parser.add_argument("--reactions", default="1/0.25", help="reaction bucket, LIMIT/SECONDS per channel")
    parser.add_argument("--global-limit", default="50/1", help="global limit, LIMIT/SECONDS per token")
    parser.add_argument("--no-rate-limits", action="store_true")
    parser.add_argument("--spec", type=Path, default=None, help="OpenAPI file (default: env var or shared/)")
    parser.add_argument("--setup-members", type=int, default=0, help="also build a guild with this many users")
    return parser.parse_args(argv)


async def _serve(args: argparse.Namespace) -> None:
    limits = RateLimitConfig(
        member_edits=parse_limit(args.member_edits),
        reactions=parse_limit(args.reactions),
        global_limit=parse_limit(args.global_limit),
        enabled=not args.no_rate_limits,
    )
    emu = Emulator(EmulatorConfig(latency_ms=args.latency_ms, rate_limits=limits, spec_path=args.spec))
    await emu.start(args.host, args.port)
    info: dict[str, object] = {"url": emu.url, "api": emu.api_url, "gateway": emu.gateway_url}
    if args.setup_members:
        from .state import BOT_PERMISSIONS, ChannelType

        guild = emu.create_guild()
        text = emu.create_channel(guild, "table")
        voice = emu.create_channel(guild, "Table voice", ChannelType.GUILD_VOICE)
        users = [emu.create_user(f"player{i + 1}") for i in range(args.setup_members)]
        for user in users:
            emu.add_member(guild, user)
        app = emu.create_application()
        emu.add_bot(guild, app, BOT_PERMISSIONS)
        info.update(
            guild_id=str(guild.id),
            text_channel_id=str(text.id),
            voice_channel_id=str(voice.id),
            user_ids=[str(u.id) for u in users],
            token=app.token,
        )
    sys.stdout.write(json.dumps(info) + "\n")
    sys.stdout.flush()
    try:
        await asyncio.Event().wait()
    finally:
        await emu.close()


def main(argv: list[str] | None = None) -> None:
    """Serve until interrupted."""
    logging.basicConfig(level=logging.WARNING)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(_parse(argv)))


if __name__ == "__main__":
    main()
