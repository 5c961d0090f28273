"""The console's board without Discord: one edit in flight per panel, the rest coalesced, a spent token unused.

The floor-change path only calls ``PanelBoard.changed``, which never awaits: the edits run beside it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, cast

import discord

from mafiabot.core.clock import START, ManualClock
from mafiabot.core.runtime import Table
from mafiabot.host.panel import TOKEN_MARGIN, TOKEN_SECONDS, Panel, PanelBoard


@dataclass
class FakeTable:
    id: int = 1
    over: bool = False
    judges: frozenset[int] = frozenset({7})
    version: int = 0
    clock: ManualClock = field(default_factory=ManualClock)


@dataclass
class FakeInteraction:
    """Stands for the interaction whose webhook edits the panel; each edit waits for ``release``."""

    release: asyncio.Event = field(default_factory=asyncio.Event)
    edits: list[str] = field(default_factory=list)
    in_flight: int = 0
    most_in_flight: int = 0

    async def edit_original_response(self, *, content: str, **_: Any) -> None:
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        await self.release.wait()
        self.edits.append(content)
        self.in_flight -= 1


def draw(table: Table, panel: Panel) -> tuple[str, discord.ui.View]:
    return f"version {cast('FakeTable', table).version}", cast("discord.ui.View", None)


def opened() -> tuple[PanelBoard, FakeTable, FakeInteraction]:
    board = PanelBoard(draw)
    table, interaction = FakeTable(), FakeInteraction()
    panel = board.panel(cast("Table", table), 7, language="en", roles=True)
    board.answered(panel, cast("discord.Interaction", interaction))
    board.draw(cast("Table", table), panel)
    return board, table, interaction


async def settle(board: PanelBoard) -> None:
    tasks = [p.editing for p in board.panels.values() if p.editing is not None]
    await asyncio.gather(*tasks)


async def test_rapid_changes_make_one_edit_in_flight_and_one_more_with_the_latest_state() -> None:
    board, table, interaction = opened()
    for version in range(1, 6):
        table.version = version
        board.changed(cast("Table", table))
        await asyncio.sleep(0)
    assert interaction.in_flight == 1
    interaction.release.set()
    await settle(board)
    assert interaction.most_in_flight == 1
    assert interaction.edits == ["version 1", "version 5"]


async def test_a_change_that_draws_the_same_text_sends_nothing() -> None:
    board, table, interaction = opened()
    interaction.release.set()
    board.changed(cast("Table", table))
    await settle(board)
    assert interaction.edits == []
    assert board.edits == 0


async def test_past_the_tokens_life_no_edit_is_sent_and_a_fresh_answer_renews_it() -> None:
    board, table, interaction = opened()
    interaction.release.set()
    panel = board.panels[(1, 7)]
    assert panel.expires_at == START.timestamp() + TOKEN_SECONDS - TOKEN_MARGIN  # the footer, on the table's clock
    table.clock.advance(TOKEN_SECONDS - TOKEN_MARGIN)
    table.version = 1
    board.changed(cast("Table", table))
    await settle(board)
    assert interaction.edits == []
    board.answered(panel, cast("discord.Interaction", interaction))
    table.version = 2
    board.changed(cast("Table", table))
    await settle(board)
    assert interaction.edits == ["version 2"]


async def test_a_panel_whose_judge_left_the_table_is_drawn_closed_once_and_forgotten() -> None:
    board, table, interaction = opened()
    interaction.release.set()
    table.judges = frozenset({8})
    panel = board.panels[(1, 7)]
    board.changed(cast("Table", table))
    assert panel.editing is not None
    await panel.editing
    assert panel.closed
    assert board.panels == {}
