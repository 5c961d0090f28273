"""The emulator keeps Discord's IDENTIFY concurrency: ``max_concurrency`` per rate-limit key per 5 s.

Discord (developers/events/gateway.mdx, "Identifying" and "Max Concurrency"): a shard's rate-limit
key is ``shard_id % max_concurrency``, one IDENTIFY per key per 5 s, and an app beyond that gets
Invalid Session (opcode 9). ``GET /gateway/bot`` says ``max_concurrency``.
"""

from __future__ import annotations

import json
from typing import Any

import aiohttp

from mafiabot.emulator import Emulator, EmulatorConfig

HELLO, DISPATCH, INVALID_SESSION = 10, 0, 9


async def identify(session: aiohttp.ClientSession, emu: Emulator, token: str, shard: list[int]) -> dict[str, Any]:
    """Connect, IDENTIFY for ``shard`` and return the first answer after HELLO (READY or Invalid Session)."""
    async with session.ws_connect(emu.gateway_url) as ws:
        hello = json.loads((await ws.receive(timeout=10)).data)
        assert hello["op"] == HELLO
        await ws.send_str(json.dumps({"op": 2, "d": {
            "token": token, "intents": 0, "shard": shard, "properties": {"os": "linux", "browser": "t", "device": "t"},
        }}))
        answer: dict[str, Any] = json.loads((await ws.receive(timeout=10)).data)
        return answer


async def test_an_identify_beyond_max_concurrency_gets_invalid_session() -> None:
    async with Emulator(EmulatorConfig()) as emu, aiohttp.ClientSession() as session:
        app = emu.create_application("mafiabot")
        first = await identify(session, emu, app.token, [0, 2])
        assert (first["op"], first["t"]) == (DISPATCH, "READY")
        second = await identify(session, emu, app.token, [1, 2])  # key 1 % 1 == 0: the same bucket
        assert second == {"op": INVALID_SESSION, "d": False}
        assert emu.gateway.identify_refusals == 1
        assert [shard for _at, _app, shard in emu.gateway.identifies] == [0]


async def test_max_concurrency_buckets_start_together() -> None:
    async with Emulator(EmulatorConfig(max_concurrency=2)) as emu, aiohttp.ClientSession() as session:
        app = emu.create_application("mafiabot")
        async with session.get(f"{emu.api_url}/gateway/bot", headers={"Authorization": f"Bot {app.token}"}) as r:
            assert (await r.json())["session_start_limit"]["max_concurrency"] == 2
        answers = [await identify(session, emu, app.token, [shard, 4]) for shard in range(3)]
        assert [a["op"] for a in answers] == [DISPATCH, DISPATCH, INVALID_SESSION]  # shard 2 shares key 0
