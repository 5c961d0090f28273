"""Identifiers and enumerations shared by every part of the engine."""

from __future__ import annotations

from enum import StrEnum

Seat = int
"""A seat number at the table, starting from 1."""


class Role(StrEnum):
    """A card a player is dealt."""

    CITIZEN = "citizen"
    SHERIFF = "sheriff"
    DOCTOR = "doctor"
    MAFIA = "mafia"
    DON = "don"
    MANIAC = "maniac"

    @property
    def team(self) -> Team:
        """The side this role wins with."""
        if self in (Role.MAFIA, Role.DON):
            return Team.BLACK
        if self is Role.MANIAC:
            return Team.MANIAC
        return Team.RED


class Team(StrEnum):
    """A side of the table; the maniac plays alone."""

    RED = "red"
    BLACK = "black"
    MANIAC = "maniac"


class Phase(StrEnum):
    """Where the game is; every phase says what the table waits for."""

    NEW = "new"
    NIGHT_ZERO = "night_zero"
    LAST_WORDS = "last_words"
    SPEECHES = "speeches"
    DEFENSE = "defense"
    VOTING = "voting"
    TIE_SPEECHES = "tie_speeches"
    LIFT_VOTE = "lift_vote"
    FAREWELL = "farewell"
    NIGHT = "night"
    BEST_MOVE = "best_move"
    FINAL_WORDS = "final_words"
    ENDED = "ended"


class FloorKind(StrEnum):
    """Why a player holds the floor; only a day speech carries a nomination."""

    SPEECH = "speech"
    SILENT = "silent"
    LAST_WORD = "last_word"
    DEFENSE = "defense"
    TIE_SPEECH = "tie_speech"
    FAREWELL = "farewell"

    @property
    def is_speech(self) -> bool:
        """The day's own speech (silent or not), the one turn in which its holder may nominate."""
        return self in _SPEECH_KINDS


_SPEECH_KINDS = frozenset({FloorKind.SPEECH, FloorKind.SILENT})


class VoteKind(StrEnum):
    """Which round of voting is running."""

    MAIN = "main"
    REVOTE = "revote"


class Cause(StrEnum):
    """How a player left the table."""

    KILLED = "killed"
    VOTED_OUT = "voted_out"
    LIFTED = "lifted"
    FOULS = "fouls"
    TECHNICAL_FOULS = "technical_fouls"
    OATHS = "oaths"
    DISQUALIFIED = "disqualified"
    LEFT = "left"

    @property
    def is_removal(self) -> bool:
        """A removal leaves at once, with no last word, and may cancel a vote."""
        return self in (Cause.FOULS, Cause.TECHNICAL_FOULS, Cause.OATHS, Cause.DISQUALIFIED, Cause.LEFT)


class Result(StrEnum):
    """Who won, or how the game ended without a winner."""

    RED = "red"
    BLACK = "black"
    MANIAC = "maniac"
    DRAW = "draw"
    ABANDONED = "abandoned"


class WinReason(StrEnum):
    """Why the game ended."""

    ALL_BLACK_GONE = "all_black_gone"
    PARITY = "parity"
    MANIAC_DUEL = "maniac_duel"
    EVERYONE_GONE = "everyone_gone"
    NO_DEPARTURES = "no_departures"
    DECLARED_DRAW = "declared_draw"
    ABANDONED = "abandoned"


class NoVoteReason(StrEnum):
    """Why a day ended without a vote."""

    NO_NOMINATIONS = "no_nominations"
    SINGLE_NOMINEE_DAY_ONE = "single_nominee_day_one"
    CANCELLED = "cancelled"
    ALL_ALIVE_TIED = "all_alive_tied"
    THREE_TIED_AT_NINE = "three_tied_at_nine"
    LIFT_FAILED = "lift_failed"
