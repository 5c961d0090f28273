"""The end of a game, as the table hears it: the result message is posted, then the seats are unmuted.

The emulator records requests in the order it answered them, which is the order Discord applied them.
"""

from __future__ import annotations

import json

from mafiabot.emulator.config import RequestRecord
from mafiabot.testing import Driver, Strategy, harness, open_table
from tests.harness import FAST_GLOBAL as FAST

MEMBER_EDIT = "/guilds/{guild_id}/members/{user_id}"


def mute_of(record: RequestRecord) -> bool | None:
    """The server mute a member edit set, None for any other request."""
    if record.method != "PATCH" or record.route != MEMBER_EDIT or not isinstance(record.body, dict):
        return None
    mute = record.body.get("mute")
    return mute if isinstance(mute, bool) else None


async def test_the_result_is_posted_before_the_seats_are_unmuted() -> None:
    async with harness(10, emulator_config=FAST) as h:
        spectator = h.emu.create_scripted_user("spectator", h.env.guild)
        spectator.join_voice(h.env.voice)
        table = await open_table(h, "classic", 10)
        over_at: list[int] = []

        def note_the_end() -> None:
            if table.over and not over_at:
                over_at.append(len(h.emu.requests))

        h.bot.tables.watch(table, note_the_end)
        await Driver(h, table, Strategy(4)).play()
        await table.done.wait()
        await h.wait(lambda: not any(h.env.guild.members[u].mute for u in (*table.seats, spectator.id)))
        requests = list(h.emu.requests)
        result = next(i for i, r in enumerate(requests)
                      if r.method == "POST" and f"protocol-{table.id}.png" in json.dumps(r.body, default=str))
        # A player voted out as the result is fixed still has the floor for a last word: that unmute
        # is play, sent before the game is over. The end's unmutes are those sent once it is.
        end_unmutes = [i for i, r in enumerate(requests) if i >= over_at[0] and mute_of(r) is False]
        unmuted = {int(requests[i].path.rsplit("/", 1)[1]) for i in end_unmutes}
        assert spectator.id in unmuted
        assert len(unmuted) >= 2  # the spectator and the seats still muted when the game ended
        assert min(end_unmutes) > result, "a seat was unmuted before the table saw the result"
