"""What can go wrong in the store, by kind, so the runtime can tell a lost race from a bad call."""

from __future__ import annotations

from typing import Literal


class StoreError(Exception):
    """The base of every error the store raises on purpose."""


class ConcurrencyError(StoreError):
    """Another writer took this log position first; nothing was written.

    The runtime must reload the game's log and decide again: an append never overwrites.
    """

    def __init__(self, game_id: int, seq: int, last_seq: int | None) -> None:
        super().__init__(f"game {game_id}: position {seq!r} is not free (last written: {last_seq!r})")
        self.game_id = game_id
        self.seq = seq
        self.last_seq = last_seq


class GameNotFoundError(StoreError, LookupError):
    """No game has this id."""

    def __init__(self, game_id: int) -> None:
        super().__init__(f"no game with id {game_id!r}")
        self.game_id = game_id


class GameClosedError(StoreError):
    """The game is already finished or abandoned, so its result cannot be written again."""

    def __init__(self, game_id: int, status: str) -> None:
        super().__init__(f"game {game_id!r} is already {status}")
        self.game_id = game_id
        self.status = status


class ChannelTakenError(StoreError):
    """Another lobby or open game already holds this text channel (``which="channel"``) or voice channel."""

    def __init__(self, which: Literal["channel", "voice"]) -> None:
        super().__init__(f"the {which} channel already has a table")
        self.which: Literal["channel", "voice"] = which


class StoreUnavailableError(StoreError):
    """The database could not be reached or dropped the connection.

    For an append this means the command may or may not be durable: reload the log before going on.
    """


SettingsProblem = Literal["language", "ruleset", "timer_unknown", "timer_range", "vote_window"]
"""What can be wrong with a setting; the bot words each one in the server's language."""


class SettingsError(StoreError, ValueError):
    """A guild setting has a value the bot cannot use; ``field`` names it, ``problem`` and ``data`` say why."""

    def __init__(self, field: str, message: str, *, problem: SettingsProblem, **data: object) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.problem: SettingsProblem = problem
        self.data = data


class FencedError(StoreError):
    """This process no longer holds the shard lease of the game's guild: the write was refused.

    Another process runs the shard now (or this one let it go); nothing of this write was kept.
    """

    def __init__(self, guild_id: int, shard_id: int) -> None:
        super().__init__(f"guild {guild_id}: shard {shard_id} is not leased to this process")
        self.guild_id = guild_id
        self.shard_id = shard_id
