"""Attachment options and their CDN links, and autocomplete interactions, as Discord has them."""

from __future__ import annotations

import aiohttp
import pytest

from mafiabot.emulator.attachments import UPLOAD_LIMIT, UploadTooLargeError
from mafiabot.emulator.testing import Table

COMMAND = {
    "name": "club", "description": "club things", "type": 1,
    "options": [
        {"type": 11, "name": "file", "description": "a file", "required": True},
        {"type": 3, "name": "pick", "description": "a pick", "autocomplete": True},
        {"type": 3, "name": "plain", "description": "no autocomplete"},
    ],
}


async def _register(table: Table) -> None:
    url = f"{table.emu.api_url}/applications/{table.app.id}/guilds/{table.guild.id}/commands"
    async with aiohttp.ClientSession() as http, http.put(
        url, json=[COMMAND], headers={"Authorization": f"Bot {table.token}"}
    ) as answer:
        assert answer.status == 200


async def _callback(table: Table, interaction_id: int, token: str, body: dict[str, object]) -> int:
    url = f"{table.emu.api_url}/interactions/{interaction_id}/{token}/callback"
    async with aiohttp.ClientSession() as http, http.post(url, json=body) as answer:
        return answer.status


async def test_an_attached_file_is_resolved_and_served_from_its_signed_url(table: Table) -> None:
    await _register(table)
    alice = table.members[0]
    reply = alice.command(table.text, "club", file=alice.attach("club.toml", b'name = "x"\n'))
    data = reply.interaction.data
    option = data["options"][0]
    attachment = data["resolved"]["attachments"][option["value"]]
    assert (option["type"], attachment["filename"], attachment["size"]) == (11, "club.toml", 11)
    assert attachment["content_type"].startswith("application/toml") or attachment["content_type"].startswith(
        "application/octet-stream")
    async with aiohttp.ClientSession() as http:
        async with http.get(attachment["url"]) as got:
            assert (got.status, await got.read()) == (200, b'name = "x"\n')
        forged = attachment["url"].replace("hm=", "hm=0")
        async with http.get(forged) as refused:
            assert refused.status == 404
        unsigned = attachment["url"].split("?")[0]
        async with http.get(unsigned) as refused:
            assert refused.status == 404
    assert table.emu.attachments.downloads == [int(option["value"])]


async def test_a_file_above_the_upload_limit_never_leaves_the_client(table: Table) -> None:
    with pytest.raises(UploadTooLargeError):
        table.members[0].attach("big.toml", b"#" * (UPLOAD_LIMIT + 1))
    assert table.emu.attachments.files == {}


@pytest.mark.spec_violations_expected  # the malformed results are the point
async def test_autocomplete_is_sent_only_for_autocomplete_options_and_takes_only_a_result(table: Table) -> None:
    await _register(table)
    alice = table.members[0]
    with pytest.raises(LookupError):
        alice.autocomplete(table.text, "club", "plain", "x")
    reply = alice.autocomplete(table.text, "club", "pick", "ou")
    interaction = reply.interaction
    assert interaction.type == 4
    assert interaction.data["options"] == [{"type": 3, "name": "pick", "value": "ou", "focused": True}]
    message = {"type": 4, "data": {"content": "no"}}
    assert await _callback(table, interaction.id, interaction.token, message) == 400
    too_many = {"type": 8, "data": {"choices": [{"name": str(i), "value": str(i)} for i in range(26)]}}
    assert await _callback(table, interaction.id, interaction.token, too_many) == 400
    unnamed = {"type": 8, "data": {"choices": [{"name": "", "value": "x"}]}}
    assert await _callback(table, interaction.id, interaction.token, unnamed) == 400
    assert interaction.response_type is None
    good = {"type": 8, "data": {"choices": [{"name": "Our Club", "value": "our club"}]}}
    assert await _callback(table, interaction.id, interaction.token, good) == 204
    assert interaction.choices == [{"name": "Our Club", "value": "our club"}]
    command = alice.command(table.text, "club", file=alice.attach("a.toml", b""))
    result = {"type": 8, "data": {"choices": []}}
    assert await _callback(table, command.interaction.id, command.interaction.token, result) == 400


async def test_an_autocomplete_result_has_no_message_to_follow_up(table: Table) -> None:
    await _register(table)
    reply = table.members[0].autocomplete(table.text, "club", "pick", "")
    interaction = reply.interaction
    assert await _callback(table, interaction.id, interaction.token, {"type": 8, "data": {"choices": []}}) == 204
    url = f"{table.emu.api_url}/webhooks/{table.app.id}/{interaction.token}/messages/@original"
    async with aiohttp.ClientSession() as http, http.patch(url, json={"content": "late"}) as answer:
        assert answer.status == 404
        assert (await answer.json())["code"] == 10015
