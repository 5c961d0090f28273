"""A second bot process in miniature: it appends to one game's log when told to.

Run as ``python append_worker.py URL GAME_ID NAME``. It prints ``ready`` once the store is open,
then for each ``go SEQ`` line on stdin tries to append command ``SEQ`` (tagged with NAME) and
prints ``won SEQ`` or ``lost SEQ``. An empty line or end of input stops it.
"""

from __future__ import annotations

import asyncio
import sys
from datetime import UTC, datetime

from mafiabot.store import ConcurrencyError, Store


async def main(url: str, game_id: int, name: str) -> None:
    store = await Store.open(url)
    try:
        print("ready", flush=True)  # noqa: T201
        loop = asyncio.get_running_loop()
        while True:
            line = (await loop.run_in_executor(None, sys.stdin.readline)).strip()
            if not line:
                break
            seq = int(line.split()[1])
            command = {"type": "Timeout", "step": None, "writer": name}
            try:
                await store.append(game_id, seq, command, [], actor_id=None, at=datetime.now(UTC))
            except ConcurrencyError:
                print(f"lost {seq}", flush=True)  # noqa: T201
            else:
                print(f"won {seq}", flush=True)  # noqa: T201
    finally:
        await store.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), sys.argv[3]))
