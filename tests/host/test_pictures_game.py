"""Whole games on the emulator: night zero, each morning, vote and lift vote post the card, the end the sheet.

The images are read back from what the emulator received and checked against the game as the
engine played it: the size, a circle at each seat, out or alive as the table stood when the card's
command was done (worked out here from the events, not from the card's own code), the alt text in
the table's language, and the sheet's row per seat.
"""

from __future__ import annotations

import io

import pytest
from PIL import Image

from engine import Event, Phase, replay_events
from engine import events as ev
from mafiabot.core.protocol import GameHeader, build_protocol
from mafiabot.core.runtime import Table
from mafiabot.emulator.state import Message
from mafiabot.host.i18n import t
from mafiabot.host.pictures import card, sheet
from mafiabot.host.pictures.card import ALIVE_FILL, OUT_FILL, SEAT_RADIUS, seat_centres
from mafiabot.testing import Harness, Strategy, harness
from tests.harness import FAST_GLOBAL as FAST
from tests.harness import play_whole_game

PRESETS = [("classic", 10, 3), ("georgian", 12, 5), ("fiim", 10, 4)]


def _posted(h: Harness) -> list[Message]:
    assert h.bot.user is not None
    return [m for m in h.emu.messages(h.env.text) if m.ephemeral_for is None and m.author_id == h.bot.user.id]


def _files(h: Harness, prefix: str) -> list[tuple[Message, str, bytes]]:
    return [(m, name, data) for m in _posted(h) for name, data in h.emu.world.attachment_bytes(m.id)
            if name.startswith(prefix)]


def _out_after(events: list[Event]) -> set[int]:
    """Who has left the table once ``events`` are played: killed, voted out, removed."""
    out: set[int] = set()
    for event in events:
        if isinstance(event, ev.NightResolved):
            out |= set(event.killed)
        elif isinstance(event, ev.PlayersVotedOut):
            out |= set(event.seats)
        elif isinstance(event, ev.PlayerRemoved):
            out.add(event.seat)
    return out


async def _expected_cards(h: Harness, table: Table) -> list[tuple[str, str, set[int]]]:
    """Each card the game should post, in order: (its file name, its title, the seats out).

    One at night zero (the seating), one per vote round and lift vote, and one per morning unless
    that dawn ended the game (the sheet follows).
    """
    stored = await h.store.get_game(table.id)
    events = table.game.events
    expected: list[tuple[str, str, set[int]]] = []
    end = 0
    for command in stored.log:
        start, end = end, end + len(command.events)
        mine = events[start:end]
        state = replay_events(events[:end])
        night = state.phase in (Phase.NIGHT_ZERO, Phase.NIGHT)  # the Best Move follows the morning's news
        number = state.night if night else state.night + 1 if state.phase is Phase.BEST_MOVE else state.day
        moment = f"night-{number}" if night else f"day-{number}"
        title = t(table.language, "card.night" if night else "card.day", night=number, day=number)
        ended = any(isinstance(e, ev.GameEnded) for e in mine)
        for event in mine:
            kind = None
            if isinstance(event, ev.NightResolved) and not ended:
                kind = "morning"
            elif isinstance(event, ev.NightFell) and event.night == 0:
                kind = "start"
            elif isinstance(event, ev.VotingStarted):
                kind = "vote"
            elif isinstance(event, ev.LiftVoteStarted):
                kind = "lift"
            if kind is not None:
                expected.append((f"table-{moment}-{kind}.png", title, _out_after(events[:end])))
    assert end == len(events)
    return expected


def _fill(image: Image.Image, centre: tuple[int, int]) -> object:
    x, y = centre
    return image.getpixel((x - SEAT_RADIUS + 12, y))


@pytest.mark.parametrize("language", ["en", "ru", "ka"])
@pytest.mark.parametrize(("ruleset", "players", "seed"), PRESETS)
async def test_a_whole_game_posts_a_card_each_morning_and_vote_and_the_sheet_at_the_end(
    ruleset: str, players: int, seed: int, language: str,
) -> None:
    async with harness(players, emulator_config=FAST, config={"game": {"language": language}}) as h:
        table = await play_whole_game(h, ruleset, players, Strategy(seed))
        await h.wait(lambda: h.table() is None and _files(h, "protocol-"))
        expected = await _expected_cards(h, table)
        cards = _files(h, "table-")
        assert expected, "the game had a morning or a vote"
        assert len(cards) == len(expected)
        for (message, name, data), (expected_name, title, out) in zip(cards, expected, strict=True):
            assert name == expected_name
            opened = Image.open(io.BytesIO(data))
            assert (opened.format, opened.size) == ("PNG", (card.WIDTH, card.HEIGHT))
            image = opened.convert("RGB")
            for seat, centre in enumerate(seat_centres(players), 1):
                assert _fill(image, centre) == (OUT_FILL if seat in out else ALIVE_FILL), (name, seat)
            (shown,) = [a for a in message.to_json(h.emu.world)["attachments"] if a["filename"] == name]
            assert title in shown["description"]
            assert shown["width"] == card.WIDTH
        mornings = [m for m, name, _data in cards if name.endswith("-morning.png")]
        assert mornings, "a night took someone or missed, and the morning showed it"
        for morning in mornings:  # the card rides with the morning's news
            assert any(t(language, "morning.title", day=day) in morning.content for day in range(2, 20))

        ((message, name, data),) = _files(h, "protocol-")
        assert name == f"protocol-{table.id}.png"
        assert t(language, "end.roles_title") in message.content
        page = Image.open(io.BytesIO(data)).convert("RGB")
        assert page.width == sheet.WIDTH
        protocol = build_protocol(GameHeader(), [], table.game.events)
        for index, row in enumerate(protocol.seats):
            y = sheet.MARGIN + 110 + sheet.ROW * (index + 1) + sheet.ROW // 2
            assert row.team is not None
            assert page.getpixel((sheet.MARGIN + 3, y)) == sheet.TEAM_TINTS[row.team]
        assert len(protocol.seats) == players
        assert table.game.state.phase is Phase.ENDED
        assert h.emu.violations == []
