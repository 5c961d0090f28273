"""A round's opening under a tight member-edit bucket: Night 0's clock starts only once every seated player is muted.

The emulator keeps Discord's member-edit bucket per guild and token (5 edits per window here, with
a 1 s window so the test is quick): ten start mutes take two windows, while the opening message
is shown at once. The table's clock is watched at the moment it is armed, and every seated
player's mute is read from the emulator's own state then.
"""

from __future__ import annotations

from typing import Any

from engine import Phase
from mafiabot.core.runtime import Table
from mafiabot.emulator import EmulatorConfig, RateLimitConfig
from mafiabot.testing import harness, open_table

TIGHT = EmulatorConfig(rate_limits=RateLimitConfig(member_edits=(5, 1.0), reactions=(100, 1.0)))
"""Discord's 5 member edits per window and token, in a 1 s window."""


def unmuted_when_armed(table: Table, muted: Any) -> list[list[int]]:
    """Record, each time the table arms a timer, the seated players Discord has not muted then."""
    seen: list[list[int]] = []
    arm = table._arm

    def watched(*args: Any, **kwargs: Any) -> None:
        seen.append([u for u in table.seats if not muted(u)])
        arm(*args, **kwargs)

    table._arm = watched  # type: ignore[method-assign]
    return seen


async def test_night_zero_starts_only_once_every_seated_player_is_muted() -> None:
    async with harness(10, emulator_config=TIGHT, time_scale=0.5) as h:
        members = h.env.guild.members
        tables: list[list[list[int]]] = []

        def watch(table: Table) -> None:
            tables.append(unmuted_when_armed(table, lambda u: members[u].mute))

        original = h.bot.tables._make_table

        def made(*args: Any, **kwargs: Any) -> Table:
            table = original(*args, **kwargs)
            watch(table)
            return table

        h.bot.tables._make_table = made  # type: ignore[method-assign]
        table = await open_table(h, "classic", 10)
        await h.wait(lambda: table.timer_armed, timeout=30)
        assert table.game.state.phase is Phase.NIGHT_ZERO
        (armed,) = tables
        assert armed, "Night 0's clock never started"
        assert armed[0] == [], f"Night 0's clock started while seats {armed[0]} could still be heard"
        assert all(members[u].mute for u in table.seats)
