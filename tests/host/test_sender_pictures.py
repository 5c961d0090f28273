"""A table's pictures, sent by the real bot through the emulator: drawn off the loop, in order, read back whole.

When Discord refuses the files (too large, alt text too long, no Attach Files) the text still goes,
alone, and the judge is told once per kind of refusal.
"""

from __future__ import annotations

import io
import threading
from collections.abc import AsyncIterator, Callable, Sequence

import aiohttp
import pytest
from PIL import Image

from mafiabot.core.runtime import Table
from mafiabot.emulator.attachments import UPLOAD_LIMIT
from mafiabot.emulator.state import Message, Overwrite, Permission
from mafiabot.host.render import Outgoing, Picture
from mafiabot.host.sender import Sender
from mafiabot.tools.demo import Harness, harness, open_table
from tests.harness import FAST


def png(width: int, height: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), "green").save(out, format="PNG")
    return out.getvalue()


class Canvas:
    """A picture's drawing that notes which threads drew it."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.on_loop: list[bool] = []

    def __call__(self) -> bytes:
        self.on_loop.append(threading.current_thread() is threading.main_thread())
        return self.data


@pytest.fixture
async def game() -> AsyncIterator[tuple[Harness, Table]]:
    async with harness(10, emulator_config=FAST) as h:
        table = await open_table(h, "classic", 10)
        yield h, table


def sender_of(h: Harness) -> Sender:
    return h.bot.presenter.sender


async def deliver(h: Harness, table: Table, messages: Sequence[Outgoing]) -> list[Message]:
    """Queue ``messages`` on the table's worker, as a command's are, and return what reached the channel."""
    sender = sender_of(h)
    before = {m.id for m in h.emu.messages(h.env.text)}

    async def job() -> None:
        await sender.deliver(table, messages)

    sender.put(table, job)
    await sender.drained(table.id)
    return [m for m in h.emu.messages(h.env.text) if m.id not in before and m.ephemeral_for is None]


def ours(posted: list[Message], texts: Sequence[str]) -> list[Message]:
    """The posted messages with ``texts``; they must be next to each other and in that order."""
    found = [m for m in posted if m.content in texts]
    assert [m.content for m in found] == list(texts)
    first = posted.index(found[0])
    assert posted[first : first + len(texts)] == found, "the table's messages kept their order"
    return found


def judge_notes(h: Harness) -> list[str]:
    return [m.content for m in h.judge.dm_messages(h.env.app)]


async def fetch(url: str) -> bytes:
    async with aiohttp.ClientSession() as http, http.get(url) as got:
        assert got.status == 200
        return await got.read()


async def test_pictures_arrive_whole_in_their_place_and_are_drawn_off_the_loop(
    game: tuple[Harness, Table],
) -> None:
    h, table = game
    card, sheet = Canvas(png(120, 80)), Canvas(png(30, 60))
    pictures = (Picture("card.png", "The table: seats 1 to 10", card), Picture("sheet.png", "The sheet", sheet))
    posted = await deliver(h, table, [Outgoing("before"), Outgoing("morning", pictures=pictures), Outgoing("after")])
    _, morning, after = ours(posted, ["before", "morning", "after"])
    assert h.emu.world.attachment_bytes(morning.id) == [("card.png", card.data), ("sheet.png", sheet.data)]
    shown = morning.to_json(h.emu.world)["attachments"]
    assert [(a["width"], a["height"], a["description"]) for a in shown] == [
        (120, 80, "The table: seats 1 to 10"),
        (30, 60, "The sheet"),
    ]
    assert [await fetch(a["url"]) for a in shown] == [card.data, sheet.data]
    assert h.emu.world.attachment_bytes(after.id) == []
    assert card.on_loop == sheet.on_loop == [False]
    assert judge_notes(h) == []


async def test_pictures_ride_with_the_controls_of_a_long_text(game: tuple[Harness, Table]) -> None:
    h, table = game
    long = "\n".join(["line " * 100] * 9)  # three messages' worth
    posted = await deliver(h, table, [Outgoing(long, pictures=(Picture("c.png", "card", Canvas(png(4, 4))),))])
    assert len(posted) >= 2
    assert [len(h.emu.world.attachment_bytes(m.id)) for m in posted] == [0] * (len(posted) - 1) + [1]


def refusing(make: Callable[[], Picture]) -> list[Outgoing]:
    """Two messages whose pictures Discord will refuse alike."""
    return [Outgoing("first", pictures=(make(),)), Outgoing("second", pictures=(make(),))]


async def test_an_alt_text_discord_refuses_costs_the_picture_not_the_text(game: tuple[Harness, Table]) -> None:
    h, table = game

    def too_long() -> Picture:
        return Picture("card.png", "x" * 1025, Canvas(png(4, 4)))

    posted = await deliver(h, table, refusing(too_long))
    first, second = ours(posted, ["first", "second"])
    assert h.emu.world.attachment_bytes(first.id) == h.emu.world.attachment_bytes(second.id) == []
    (note,) = judge_notes(h)
    assert "50035" in note
    assert f"<#{h.env.text.id}>" in note


async def test_a_picture_over_the_upload_limit_is_told_once_and_the_text_goes(game: tuple[Harness, Table]) -> None:
    h, table = game

    def huge() -> Picture:
        return Picture("card.png", "card", Canvas(b"\0" * (UPLOAD_LIMIT + 1)))

    posted = await deliver(h, table, refusing(huge))
    ours(posted, ["first", "second"])
    assert h.emu.world.files == {}
    (note,) = judge_notes(h)
    assert "413" in note
    assert "40005" in note
    statuses = [r.status for r in h.emu.requests if r.route == "/channels/{channel_id}/messages" and r.status >= 400]
    assert statuses == [413, 413]


async def test_without_attach_files_the_text_goes_and_the_judge_learns_the_permission(
    game: tuple[Harness, Table],
) -> None:
    h, table = game
    bot_id = h.env.app.user.id
    h.env.text.overwrites[bot_id] = Overwrite(bot_id, 1, 0, int(Permission.ATTACH_FILES))
    posted = await deliver(h, table, [Outgoing("card", pictures=(Picture("c.png", "card", Canvas(png(4, 4))),))])
    (card,) = ours(posted, ["card"])
    assert h.emu.world.attachment_bytes(card.id) == []
    (note,) = judge_notes(h)
    assert "Attach Files" in note


async def test_a_drawing_that_fails_costs_only_the_picture(game: tuple[Harness, Table]) -> None:
    h, table = game

    def broken() -> bytes:
        raise RuntimeError("no font")

    posted = await deliver(h, table, [Outgoing("card", pictures=(Picture("c.png", "card", broken),))])
    (card,) = ours(posted, ["card"])
    assert h.emu.world.attachment_bytes(card.id) == []
