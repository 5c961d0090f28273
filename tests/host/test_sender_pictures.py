"""A table's pictures, sent by the real bot through the emulator: drawn off the loop, in order, read back whole.

When Discord refuses the files (too large, alt text too long, no Attach Files) the text still goes,
alone, and the judge is told once per kind of refusal.
"""

from __future__ import annotations

import asyncio
import dataclasses
import io
import threading
from collections.abc import AsyncIterator, Callable, Sequence

import aiohttp
import discord
import pytest
from PIL import Image

from engine import Event
from engine import events as ev
from mafiabot.core.records import GuildSettings
from mafiabot.core.runtime import Table
from mafiabot.emulator import EmulatorConfig
from mafiabot.emulator.attachments import UPLOAD_LIMIT
from mafiabot.emulator.state import Message, Overwrite, Permission
from mafiabot.host import render
from mafiabot.host.i18n import LANGUAGES
from mafiabot.host.presenter import custom_id
from mafiabot.host.refusals import Action, refusal_kind, refusal_text
from mafiabot.host.render import Button, Outgoing, Picture, Rendered, Route, TableView
from mafiabot.host.sender import Sender
from mafiabot.testing import Driver, Harness, Strategy, harness, has_component, open_table
from tests.harness import FAST, FAST_GLOBAL


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
        await sender_of(h).drained(table.id)  # the start's own messages (night zero's card among them) are out
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

    files = dict(h.emu.world.files)  # the table's own card of night zero
    posted = await deliver(h, table, refusing(huge))
    ours(posted, ["first", "second"])
    assert h.emu.world.files == files
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


class _Response:
    def __init__(self, status: int) -> None:
        self.status = status
        self.reason = "refused"


@pytest.mark.parametrize(
    ("status", "code", "kind"),
    [(413, 40005, "picture:413:40005"), (400, 50035, "picture:400:50035"), (403, 50013, "permission:attach_files")],
)
@pytest.mark.parametrize("language", LANGUAGES)
def test_each_refused_picture_reads_in_every_language(language: str, status: int, code: int, kind: str) -> None:
    exc = discord.HTTPException(_Response(status), {"code": code, "message": "refused"})
    assert refusal_kind(Action.ATTACH_PICTURE, exc) == kind
    text = refusal_text(language, kind)
    assert "{" not in text
    assert str(code) in text or kind.startswith("permission")


FLOOR = png(16, 9)


def with_floor_pictures(draw: Callable[..., Rendered]) -> Callable[..., Rendered]:
    """The renderer, but every floor message (the one with Thank you) carries a picture."""

    def floor(out: Outgoing) -> Outgoing:
        if any(isinstance(c, Button) and ":thanks:" in c.custom_id for c in out.controls):
            return dataclasses.replace(out, pictures=(Picture("floor.png", "who speaks", lambda: FLOOR),))
        return out

    def rendered(view: TableView, events: Sequence[Event], *, first: int = 0) -> Rendered:
        drawn = draw(view, events, first=first)
        return dataclasses.replace(drawn, messages=tuple(floor(m) for m in drawn.messages))

    return rendered


@pytest.mark.parametrize("followups", ["accepted", "expired"])
async def test_a_whole_game_shows_every_floors_picture_as_a_follow_up_or_in_the_channel(
    followups: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A public click's messages go as its follow-ups, files too; when Discord refuses the follow-ups
    # (every token expired) the channel gets the same messages with the same pictures, in order.
    monkeypatch.setattr(render, "render", with_floor_pictures(render.render))
    token_life = 900.0 if followups == "accepted" else 0.0
    config = EmulatorConfig(rate_limits=FAST_GLOBAL.rate_limits, interaction_token_seconds=token_life)
    async with harness(10, emulator_config=config) as h:
        table = await open_table(h, "classic", 10)
        await Driver(h, table, Strategy(3)).play()
        await table.done.wait()
        floors = [m for m in h.emu.messages(h.env.text) if has_component(m, custom_id("thanks", table.id))]
        assert len(floors) == sum(isinstance(e, ev.FloorGiven) for e in table.game.events) > 0
        assert all(h.emu.world.attachment_bytes(m.id) == [("floor.png", FLOOR)] for m in floors)
        answered = [m for m in floors if m.interaction_id is not None]
        assert (len(answered) > len(floors) // 2) if followups == "accepted" else answered == []
        assert judge_notes(h) == []


async def test_the_results_channel_gets_the_summarys_pictures_or_its_text_alone(game: tuple[Harness, Table]) -> None:
    h, table = game
    results = h.emu.create_channel(h.env.guild, "results")
    await asyncio.wait_for(h.bot.wait_for("guild_channel_create", check=lambda c: c.id == results.id), 5)
    await h.store.save_settings(GuildSettings(h.env.guild.id, results_channel_id=results.id))
    sheet = png(50, 70)
    await deliver(
        h,
        table,
        [
            Outgoing("summary", route=Route.RESULTS, pictures=(Picture("sheet.png", "the game", lambda: sheet),)),
            Outgoing("again", route=Route.RESULTS, pictures=(Picture("sheet.png", "x" * 1025, lambda: sheet),)),
        ],
    )
    summary, again = h.emu.messages(results)
    assert (summary.content, h.emu.world.attachment_bytes(summary.id)) == ("summary", [("sheet.png", sheet)])
    assert (again.content, h.emu.world.attachment_bytes(again.id)) == ("again", [])
    (note,) = judge_notes(h)
    assert "50035" in note
