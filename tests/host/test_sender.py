"""The sender turns the renderer's plain controls into discord.py views with the same custom ids."""

from __future__ import annotations

import discord

from mafiabot.host.render import Button, Menu, Option, Style
from mafiabot.host.sender import plain, ui_view


def test_buttons_and_menus_keep_their_custom_ids_labels_and_styles() -> None:
    view = ui_view((
        Button("Thank you", "mafia:thanks:7", Style.SUCCESS),
        Button("Card", "mafia:card:7"),
        Menu("Nominate", "mafia:nominate:7", (Option("#2 Ann", "2"), Option("#3 Bob", "3"))),
    ))
    thanks, card, menu = view.children
    assert isinstance(thanks, discord.ui.Button)
    assert isinstance(card, discord.ui.Button)
    assert (thanks.custom_id, thanks.label) == ("mafia:thanks:7", "Thank you")
    assert thanks.style is discord.ButtonStyle.success
    assert (card.custom_id, card.style) == ("mafia:card:7", discord.ButtonStyle.primary)
    assert isinstance(menu, discord.ui.Select)
    assert (menu.custom_id, menu.placeholder) == ("mafia:nominate:7", "Nominate")
    assert [(o.label, o.value) for o in menu.options] == [("#2 Ann", "2"), ("#3 Bob", "3")]
    assert view.timeout is None  # handled by custom id, also after a restart


def test_a_name_is_echoed_without_markdown_or_mentions() -> None:
    assert plain("*hi* @everyone", 40) == "\\*hi\\* @\u200beveryone"
    assert plain("x" * 50, 5) == "xxxx…"
