"""``/mafia game id`` answers a stored game's protocol with its sheet, read back from the emulator."""

from __future__ import annotations

import io

from PIL import Image

from mafiabot.host.pictures import sheet
from mafiabot.host.pictures.sheet import SheetInput, alt_text, draw_sheet
from mafiabot.testing import Strategy, harness
from tests.harness import FAST_GLOBAL as FAST
from tests.harness import play_whole_game


async def test_a_stored_games_protocol_comes_with_its_sheet() -> None:
    async with harness(10, emulator_config=FAST, config={"game": {"language": "ru"}}) as h:
        table = await play_whole_game(h, "classic", 10, Strategy(3))
        await h.wait(lambda: h.table() is None)
        reply = await h.players[3].run_command(h.env.text, "mafia game", id=table.id)
        message = await reply.wait_final()
        assert reply.ephemeral
        name = f"protocol-{table.id}.png"
        ((filename, data),) = h.emu.world.attachment_bytes(message.id)
        assert filename == name
        protocol = await h.store.game_protocol(table.id)
        assert protocol is not None
        # The member's language (the server's, Russian here), drawn from the store as the cog drew it.
        assert data == draw_sheet(SheetInput(protocol, "ru"))
        (shown,) = message.to_json(h.emu.world)["attachments"]
        assert shown["description"] == alt_text(SheetInput(protocol, "ru"))
        page = Image.open(io.BytesIO(data)).convert("RGB")
        assert page.width == sheet.WIDTH
        for index in range(10):
            role = table.game.state.role(index + 1)
            y = sheet.MARGIN + 110 + sheet.ROW * (index + 1) + sheet.ROW // 2
            assert page.getpixel((sheet.MARGIN + 3, y)) == sheet.TEAM_TINTS[role.team.value]
        assert h.emu.violations == []
