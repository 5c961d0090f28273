"""``mafiabot demo --pictures DIR``: every picture the table posted, saved from the emulator's messages.

The files are the bytes the bot uploaded, read back from what the emulator stored for the table's
channel (not drawn again), in the order they were posted, each under the name the bot gave it
(``table-day-2-morning.png``, ``protocol-1.png``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mafiabot.core.runtime import Table
    from mafiabot.tools.demo import Harness


async def posted_pictures(h: Harness, table: Table) -> list[tuple[str, bytes]]:
    """Every file the bot attached to a public message in the table's channel, once the table's sender is done."""
    await h.bot.presenter.sender.drained(table.id)  # the summary and its sheet are out
    me = h.bot.user.id if h.bot.user is not None else 0
    return [file for message in h.emu.messages(h.env.text)
            if message.author_id == me and message.ephemeral_for is None
            for file in h.emu.world.attachment_bytes(message.id)]


def save_pictures(folder: Path, files: Sequence[tuple[str, bytes]]) -> list[Path]:
    """Write ``files`` into ``folder`` (made if missing); the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, data in files:
        path = folder / Path(name).name
        path.write_bytes(data)
        written.append(path)
    return written
