"""Files on messages through the real discord.py client: kept, served back, edited, and refused as Discord does.

Discord's rules are in developers/reference "Uploading Files" and the message resource (Create and
Edit Message, the attachment object): a file above 10 MiB is 413/40005, more than 10 files, alt
text over 1024 characters or an ``attachments`` entry naming no file is 400/50035.
"""

from __future__ import annotations

import io
from collections.abc import AsyncIterator

import aiohttp
import discord
import pytest
from discord import app_commands
from PIL import Image

from mafiabot.emulator import Overwrite, Permission
from mafiabot.emulator.attachments import UPLOAD_LIMIT
from mafiabot.emulator.testing import Table, running
from tests.emulator.emulator_bot import MafiaTestBot


def png(width: int, height: int, colour: str = "red") -> bytes:
    """A real PNG of the given size."""
    out = io.BytesIO()
    Image.new("RGB", (width, height), colour).save(out, format="PNG")
    return out.getvalue()


def text_channel(bot: discord.Client, table: Table) -> discord.TextChannel:
    channel = bot.get_channel(table.text.id)
    assert isinstance(channel, discord.TextChannel)
    return channel


async def fetch(url: str) -> tuple[int, bytes]:
    async with aiohttp.ClientSession() as http, http.get(url) as got:
        return got.status, await got.read()


async def test_a_sent_picture_is_kept_described_and_served_back(table: Table, bot: MafiaTestBot) -> None:
    card, sheet = png(64, 40), png(3, 5, "blue")
    sent = await text_channel(bot, table).send(
        "morning",
        files=[
            discord.File(io.BytesIO(card), "card.png", description="The table at dawn"),
            discord.File(io.BytesIO(sheet), "sheet.png"),
        ],
    )
    first, second = sent.attachments
    assert (first.filename, first.size, first.content_type) == ("card.png", len(card), "image/png")
    assert (first.width, first.height, first.description) == (64, 40, "The table at dawn")
    assert (second.width, second.height, second.description) == (3, 5, None)
    assert table.emu.world.attachment_bytes(sent.id) == [("card.png", card), ("sheet.png", sheet)]
    assert await first.read() == card
    assert await fetch(second.url) == (200, sheet)
    assert (await fetch(first.url.replace("hm=", "hm=0")))[0] == 404
    assert (await fetch(first.url.split("?")[0]))[0] == 404
    stored = table.emu.world.messages[sent.id]
    assert stored.to_json(table.emu.world)["attachments"][0]["description"] == "The table at dawn"


async def test_a_file_alone_is_a_message_and_text_files_get_a_charset(table: Table, bot: MafiaTestBot) -> None:
    sent = await text_channel(bot, table).send(file=discord.File(io.BytesIO(b"a,b\n"), "votes.csv"))
    (only,) = sent.attachments
    assert (sent.content, only.content_type, only.width) == ("", "text/csv; charset=utf-8", None)
    assert await only.read() == b"a,b\n"


async def test_an_edit_keeps_what_it_lists_adds_new_files_and_drops_the_rest(table: Table, bot: MafiaTestBot) -> None:
    channel = text_channel(bot, table)
    sent = await channel.send(
        files=[discord.File(io.BytesIO(b"one"), "1.txt"), discord.File(io.BytesIO(b"two"), "2.txt")]
    )
    one, two = sent.attachments
    edited = await sent.edit(content="now", attachments=[two, discord.File(io.BytesIO(b"three"), "3.txt")])
    assert [a.filename for a in edited.attachments] == ["2.txt", "3.txt"]
    assert edited.attachments[0].id == two.id
    assert table.emu.world.attachment_bytes(sent.id) == [("2.txt", b"two"), ("3.txt", b"three")]
    assert (await fetch(one.url))[0] == 404
    assert await fetch(two.url) == (200, b"two")
    unchanged = await edited.edit(content="text only")
    assert [a.filename for a in unchanged.attachments] == ["2.txt", "3.txt"]
    cleared = await unchanged.edit(attachments=[])
    assert cleared.attachments == []
    assert table.emu.world.files == {}


async def test_a_deleted_message_takes_its_files_off_the_cdn(table: Table, bot: MafiaTestBot) -> None:
    sent = await text_channel(bot, table).send(file=discord.File(io.BytesIO(b"gone"), "x.txt"))
    url = sent.attachments[0].url
    await sent.delete()
    assert (await fetch(url))[0] == 404


async def test_a_file_above_the_upload_limit_is_413_and_posts_nothing(table: Table, bot: MafiaTestBot) -> None:
    channel = text_channel(bot, table)
    before = len(table.emu.world.messages)
    with pytest.raises(discord.HTTPException) as refused:
        await channel.send("big", file=discord.File(io.BytesIO(b"#" * (UPLOAD_LIMIT + 1)), "big.png"))
    assert (refused.value.status, refused.value.code) == (413, 40005)
    assert len(table.emu.world.messages) == before
    at_limit = await channel.send(file=discord.File(io.BytesIO(b"#" * UPLOAD_LIMIT), "limit.bin"))
    assert at_limit.attachments[0].size == UPLOAD_LIMIT


@pytest.mark.spec_violations_expected  # eleven entries break the spec's maxItems too
async def test_eleven_files_are_refused_and_ten_taken(table: Table, bot: MafiaTestBot) -> None:
    channel = text_channel(bot, table)
    with pytest.raises(discord.HTTPException) as refused:
        await channel.send(files=[discord.File(io.BytesIO(b"x"), f"{i}.txt") for i in range(11)])
    assert (refused.value.status, refused.value.code) == (400, 50035)
    assert table.emu.world.files == {}
    ten = await channel.send(files=[discord.File(io.BytesIO(b"x"), f"{i}.txt") for i in range(10)])
    assert len(ten.attachments) == 10
    with pytest.raises(discord.HTTPException) as eleventh:
        await ten.edit(attachments=[*ten.attachments, discord.File(io.BytesIO(b"y"), "10.txt")])
    assert eleventh.value.code == 50035
    assert len(table.emu.world.messages[ten.id].attachments) == 10


@pytest.mark.spec_violations_expected  # an alt text over 1024 characters breaks the spec's maxLength too
async def test_alt_text_over_1024_characters_is_refused(table: Table, bot: MafiaTestBot) -> None:
    channel = text_channel(bot, table)
    with pytest.raises(discord.HTTPException) as refused:
        await channel.send(file=discord.File(io.BytesIO(png(2, 2)), "a.png", description="x" * 1025))
    assert (refused.value.status, refused.value.code) == (400, 50035)
    assert "attachments.0.description" in str(refused.value)
    fits = await channel.send(file=discord.File(io.BytesIO(png(2, 2)), "a.png", description="x" * 1024))
    assert fits.attachments[0].description == "x" * 1024


async def test_an_edit_may_not_name_another_messages_file(table: Table, bot: MafiaTestBot) -> None:
    channel = text_channel(bot, table)
    mine = await channel.send(file=discord.File(io.BytesIO(b"mine"), "mine.txt"))
    other = await channel.send(file=discord.File(io.BytesIO(b"other"), "other.txt"))
    with pytest.raises(discord.HTTPException) as refused:
        await mine.edit(content="steal", attachments=[mine.attachments[0], other.attachments[0]])
    assert (refused.value.status, refused.value.code) == (400, 50035)
    kept = table.emu.world.messages[mine.id]
    assert (kept.content, table.emu.world.attachment_bytes(mine.id)) == ("", [("mine.txt", b"mine")])


async def test_an_entry_without_its_file_part_is_refused(table: Table, bot: MafiaTestBot) -> None:
    url = f"{table.emu.api_url}/channels/{table.text.id}/messages"
    form = aiohttp.FormData()
    form.add_field("payload_json", '{"content": "x", "attachments": [{"id": 1, "filename": "a.txt"}]}')
    form.add_field("files[0]", b"zero", filename="a.txt")
    async with (
        aiohttp.ClientSession() as http,
        http.post(url, data=form, headers={"Authorization": f"Bot {table.token}"}) as answer,
    ):
        assert (answer.status, (await answer.json())["code"]) == (400, 50035)
    assert table.emu.world.files == {}


async def test_files_need_attach_files_in_the_channel_and_text_does_not(table: Table, bot: MafiaTestBot) -> None:
    channel = text_channel(bot, table)
    table.text.overwrites[table.app.user.id] = Overwrite(table.app.user.id, 1, 0, int(Permission.ATTACH_FILES))
    with pytest.raises(discord.Forbidden) as refused:
        await channel.send("card", file=discord.File(io.BytesIO(png(2, 2)), "card.png"))
    assert refused.value.code == 50013
    text = await channel.send("card")
    assert text.attachments == []
    with pytest.raises(discord.Forbidden):
        await text.edit(attachments=[discord.File(io.BytesIO(b"x"), "x.txt")])
    assert table.emu.world.files == {}


class Redraw(discord.ui.View):
    """A button that swaps its message's picture for a new one (callback type 7 with files)."""

    def __init__(self) -> None:
        super().__init__(timeout=None)

    @discord.ui.button(label="Redraw", custom_id="pics:redraw")
    async def redraw(self, interaction: discord.Interaction, button: discord.ui.Button[Redraw]) -> None:
        await interaction.response.edit_message(attachments=[discord.File(io.BytesIO(png(9, 9)), "new.png")])


class Pictures(app_commands.Group):
    """Commands that answer with files, through each interaction path."""

    @app_commands.command(name="now", description="Answer with a picture")
    async def now(self, interaction: discord.Interaction) -> None:
        await interaction.response.send_message(
            "card", file=discord.File(io.BytesIO(png(8, 6)), "card.png", description="the table")
        )

    @app_commands.command(name="board", description="A picture with a redraw button")
    async def board(self, interaction: discord.Interaction) -> None:
        await interaction.response.send_message(file=discord.File(io.BytesIO(png(4, 4)), "old.png"), view=Redraw())

    @app_commands.command(name="later", description="Defer, then a picture and a follow-up with another")
    async def later(self, interaction: discord.Interaction) -> None:
        await interaction.response.defer(thinking=True)
        await interaction.edit_original_response(
            content="sheet", attachments=[discord.File(io.BytesIO(png(5, 7)), "sheet.png")]
        )
        await interaction.followup.send(file=discord.File(io.BytesIO(b"r,1\n"), "top.csv"), ephemeral=True)

    @app_commands.command(name="huge", description="Try a file over the limit, then say what Discord said")
    async def huge(self, interaction: discord.Interaction) -> None:
        try:
            await interaction.response.send_message(file=discord.File(io.BytesIO(b"#" * (UPLOAD_LIMIT + 1)), "x.png"))
        except discord.HTTPException as exc:
            await interaction.response.send_message(f"refused {exc.status} {exc.code}")


    @app_commands.command(name="blocked", description="Try a file every way, then say what Discord said")
    async def blocked(self, interaction: discord.Interaction) -> None:
        def card() -> discord.File:
            return discord.File(io.BytesIO(png(2, 2)), "card.png")

        codes = []
        try:
            await interaction.response.send_message("card", file=card())
        except discord.HTTPException as exc:
            codes.append(exc.code)
        await interaction.response.defer(thinking=True)
        for attempt in (interaction.edit_original_response(attachments=[card()]),
                        interaction.followup.send(file=card())):
            try:
                await attempt
            except discord.HTTPException as exc:
                codes.append(exc.code)
        await interaction.edit_original_response(content=f"refused {codes}")
        try:
            await interaction.followup.send(file=card())
        except discord.HTTPException as exc:
            await interaction.followup.send(f"then refused {exc.code}")

    @app_commands.command(name="early", description="Defer privately, then follow up as if in public")
    async def early(self, interaction: discord.Interaction) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        await interaction.followup.send("first page", file=discord.File(io.BytesIO(png(3, 3)), "page.png"))
        await interaction.followup.send("second page")


class PictureBot(MafiaTestBot):
    """The test bot with the picture commands too."""

    async def setup_hook(self) -> None:
        self.tree.add_command(Pictures(name="pics", description="pictures"), guild=discord.Object(self.guild_id))
        self.add_view(Redraw())
        await super().setup_hook()


@pytest.fixture
async def picture_bot(table: Table) -> AsyncIterator[PictureBot]:
    client = PictureBot(table.guild.id)
    async with running(client, table):
        yield client


async def test_an_interaction_answer_carries_its_picture(table: Table, picture_bot: PictureBot) -> None:
    reply = await table.members[0].run_command(table.text, "pics now")
    message = reply.message
    assert message is not None
    assert table.emu.world.attachment_bytes(message.id) == [("card.png", png(8, 6))]
    (shown,) = message.to_json(table.emu.world)["attachments"]
    assert (shown["width"], shown["height"], shown["description"]) == (8, 6, "the table")
    assert await fetch(shown["url"]) == (200, png(8, 6))


async def test_a_deferred_answer_and_its_follow_up_carry_files(table: Table, picture_bot: PictureBot) -> None:
    reply = await table.members[0].run_command(table.text, "pics later")
    final = await reply.wait_final()
    (followup,) = await reply.wait_followups(1)
    assert (final.content, table.emu.world.attachment_bytes(final.id)) == ("sheet", [("sheet.png", png(5, 7))])
    assert table.emu.world.attachment_bytes(followup.id) == [("top.csv", b"r,1\n")]
    assert followup.ephemeral_for == table.members[0].id


async def test_files_on_interaction_answers_need_attach_files_too(table: Table, picture_bot: PictureBot) -> None:
    table.text.overwrites[table.app.user.id] = Overwrite(table.app.user.id, 1, 0, int(Permission.ATTACH_FILES))
    reply = await table.members[0].run_command(table.text, "pics blocked")
    final = await reply.wait_final()
    assert final.content == "refused [50013, 50013, 50013]"
    (followup,) = await reply.wait_followups(1)
    assert followup.content == "then refused 50013"
    assert table.emu.world.files == {}


async def test_a_follow_up_straight_after_a_deferral_takes_the_thinking_messages_place(
    table: Table, picture_bot: PictureBot
) -> None:
    alice = table.members[0]
    reply = await alice.run_command(table.text, "pics early")
    final = await reply.wait_final()
    (second,) = await reply.wait_followups(1)
    # The first follow-up edited the loading message, which stays as private as the deferral made it.
    assert final.id == reply.message.id if reply.message else False
    assert (final.content, final.ephemeral_for) == ("first page", alice.id)
    assert table.emu.world.attachment_bytes(final.id) == [("page.png", png(3, 3))]
    assert (second.content, second.ephemeral_for) == ("second page", None)


async def test_an_interaction_answer_over_the_limit_is_refused_and_can_be_answered_again(
    table: Table, picture_bot: PictureBot
) -> None:
    reply = await table.members[0].run_command(table.text, "pics huge")
    assert reply.content == "refused 413 40005"
    assert table.emu.world.files == {}


async def test_a_button_replaces_its_messages_picture(table: Table, picture_bot: PictureBot) -> None:
    alice = table.members[0]
    board = (await alice.run_command(table.text, "pics board")).message
    assert board is not None
    old_url = board.to_json(table.emu.world)["attachments"][0]["url"]
    pressed = await alice.press(board, "pics:redraw")
    assert pressed.response_type == 7
    assert table.emu.world.attachment_bytes(board.id) == [("new.png", png(9, 9))]
    assert (await fetch(old_url))[0] == 404


async def test_without_message_content_a_persons_files_are_blanked_on_the_gateway(
    table: Table, bot: MafiaTestBot
) -> None:
    seen: list[discord.Message] = []

    async def note(message: discord.Message) -> None:
        seen.append(message)
        table.emu.changed()  # wakes wait_for

    bot.add_listener(note, "on_message")
    alice = table.members[0]
    posted = alice.send(table.text, "my card", files=[("card.png", png(2, 2))])
    own = await text_channel(bot, table).send(file=discord.File(io.BytesIO(b"mine"), "mine.txt"))
    await table.emu.wait_for(lambda: len(seen) >= 2)
    by_id = {m.id: m for m in seen}
    assert by_id[posted.id].attachments == []  # Discord blanks attachments too without MESSAGE_CONTENT
    assert [a.filename for a in by_id[own.id].attachments] == ["mine.txt"]
    assert table.emu.world.attachment_bytes(posted.id) == [("card.png", png(2, 2))]
