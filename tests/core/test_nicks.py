"""After a restart, which seated players still need their seat nickname (``resume_plan``).

Pure: the nicknames the Discord side reports are given, as the gateway cache would give them.
"""

from __future__ import annotations

from mafiabot.core.nicks import Nickname, resume_plan, seat_nick

GUILD = 1


class Cache:
    """What the gateway told the bot of each member (the ``NickEditor`` read side)."""

    def __init__(self, members: dict[int, Nickname]) -> None:
        self.members = members

    def nickname(self, guild_id: int, user_id: int) -> Nickname:
        return self.members.get(user_id, Nickname(None, "", "unknown"))

    async def set_nick(self, guild_id: int, user_id: int, nick: str | None) -> None:
        raise AssertionError("planning sends nothing")


def test_a_restart_renames_whoever_discord_does_not_call_by_their_seat_and_names_the_seats_it_may_not() -> None:
    seats, names = [10, 20, 30, 40, 50], ["Anya", "Boris", "Vera", "Gleb", "Dina"]
    cache = Cache({
        10: Nickname("1 · anya", "1 · anya", account="anya"),  # renamed before the crash
        20: Nickname(None, "boris_g", account="boris_g"),  # the crash came before the rename
        30: Nickname("Vee", "Vee", account="vera"),  # had a nickname of her own, not renamed yet
        40: Nickname("Gleb", "Gleb", "owner", account="gleb"),  # the server changed hands meanwhile
    })  # 50 is not in the cache (out of voice): renamed all the same, a rename needs no voice connection
    owed = [(10, None), (20, None), (30, "Vee"), (40, "Gleb"), (50, "D"), (99, "someone else's game")]
    numbered, old, applied, blocked = resume_plan(cache, seats, names, owed, guild_id=GUILD)
    # Made of what the start made it of: the nickname given back, else the account's name.
    assert numbered == {10: seat_nick(1, "anya"), 20: seat_nick(2, "boris_g"), 30: seat_nick(3, "Vee"),
                        40: seat_nick(4, "Gleb"), 50: seat_nick(5, "D")}
    assert old == {10: None, 20: None, 30: "Vee", 40: "Gleb", 50: "D"}
    # Numbered already, or maybe (the end gives the old nickname back to those): not renamed again.
    assert applied == {10, 40}
    assert blocked == [(4, "owner")]
