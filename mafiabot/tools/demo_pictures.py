"""``mafiabot demo --pictures DIR``: every picture the table posted, saved from the emulator's messages.

The files are the bytes the bot uploaded, read back from what the emulator stored for the table's
channel (not drawn again), in the order they were posted, each under the name the bot gave it
(``table-day-2-morning.png``, ``protocol-1.png``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from mafiabot.emulator import Emulator
from mafiabot.emulator.state import Channel


def posted_pictures(emu: Emulator, channel: Channel, bot_id: int) -> list[tuple[str, bytes]]:
    """Every file the bot attached to a public message in ``channel``, in the order posted."""
    return [file for message in emu.messages(channel)
            if message.author_id == bot_id and message.ephemeral_for is None
            for file in emu.world.attachment_bytes(message.id)]


def save_pictures(folder: Path, files: Sequence[tuple[str, bytes]]) -> list[Path]:
    """Write ``files`` into ``folder`` (made if missing); the paths written.

    A name the table used twice (a revote's card the same day) gets ``-2``, ``-3`` before its suffix.
    """
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name, data in files:
        path = folder / Path(name).name
        repeat = 1
        while path in written:
            repeat += 1
            path = folder / f"{Path(name).stem}-{repeat}{Path(name).suffix}"
        path.write_bytes(data)
        written.append(path)
    return written
