"""What each tier of a table's feed shows at one moment, as plain JSON-ready data.

The public frame is built from ``engine.public.public_table`` (what the table card is drawn from),
the names, the floor's time left and the protocol's days (nominations and hands, which the channel
shows as they happen); roles join it only once the result is fixed, as the channel's summary
reveals them. The secret frame adds every role and the protocol's nights (shots, checks, saves,
the Best Move). Nothing else reaches a frame, so a tier's stream cannot carry what it may not show.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

from engine import Game, Role, Ruleset
from engine.public import PublicTable, public_table
from mafiabot.core.protocol import GameHeader, VoteRound, build_protocol
from mafiabot.core.protocol import Protocol as GameProtocol
from mafiabot.host.i18n import role_name, t

Tier = Literal["public", "broadcast", "judge"]
TIERS: tuple[Tier, ...] = ("public", "broadcast", "judge")
SECRET_TIERS = frozenset({"broadcast", "judge"})


class Source(Protocol):
    """What a frame is drawn from: a running table now, or one moment of its game rebuilt from the log."""

    language: str
    ruleset: Ruleset
    game: Game

    def name_at(self, seat: int, /) -> str:
        """The seat's display name."""

    def role_at(self, seat: int, /) -> Role:
        """The seat's card."""

    def remaining(self) -> float | None:
        """Seconds left on the timer at that moment."""


def _seats(table: Source, public: PublicTable, *, roles: bool) -> list[dict[str, Any]]:
    lang = table.language
    seats = []
    for seat in public.seats:
        row: dict[str, Any] = {
            "seat": seat.seat, "name": table.name_at(seat.seat), "alive": seat.alive, "fouls": seat.fouls,
            "silenced": seat.silenced, "nominee": seat.nominee,
            "left": None if seat.left is None else {
                "cause": seat.left.value, "text": t(lang, f"card.cause.{seat.left.value}"),
                "day": (seat.left_at + 1) // 2 if seat.left_at is not None and seat.left_at % 2 else None,
                "night": seat.left_at // 2 if seat.left_at is not None and seat.left_at % 2 == 0 else None,
            },
        }
        if roles:
            role = table.role_at(seat.seat)
            row["role"] = {"id": role.value, "team": role.team.value,
                           "name": role_name(lang, table.ruleset, role)}
        seats.append(row)
    return seats


def _vote(table: Source) -> dict[str, Any] | None:
    vote = table.game.state.vote
    if vote is None:
        return None
    return {
        "lift": vote.kind is None,
        "candidates": list(vote.candidates),
        "current": vote.candidates[vote.index] if vote.index < len(vote.candidates) else None,
        "hands": [[voter, choice] for voter, choice in sorted(vote.votes.items())],
    }


def vote_round(vote: VoteRound) -> dict[str, Any]:
    """A day's voting round with its tally, every field of it (``dataclasses.asdict`` took a quarter of a frame)."""
    return {
        "kind": vote.kind, "candidates": list(vote.candidates),
        "tally": [{"candidate": row.candidate, "voters": list(row.voters), "total": row.total} for row in vote.tally],
        "silent": list(vote.silent), "closed": vote.closed,
    }


def _days(protocol: GameProtocol) -> list[dict[str, Any]]:
    return [{
        "day": day.number,
        "nominations": [[n.seat, n.target] for n in day.nominations],
        "votes": [vote_round(v) for v in day.votes],
        "voted_out": list(day.voted_out),
    } for day in protocol.days]


def public_frame(table: Source, protocol: GameProtocol | None = None) -> dict[str, Any]:
    """What the table's channel shows now; roles once the result is fixed."""
    state = table.game.state
    public = public_table(state)
    outcome = state.outcome
    lang = table.language
    protocol = protocol or build_protocol(GameHeader(), (), table.game.events)
    remaining = table.remaining()
    return {
        "language": lang,
        "phase": public.phase.value,
        "phase_text": t(lang, f"phase.{public.phase.value}"),
        "day": public.day, "night": public.night, "is_night": public.is_night,
        "paused": state.paused,
        "floor": public.floor,
        "left": None if remaining is None or public.floor is None else round(remaining, 1),
        "nominees": list(public.nominees),
        "vote": _vote(table),
        "seats": _seats(table, public, roles=outcome is not None),
        "days": _days(protocol),
        "result": None if outcome is None else {
            "result": outcome.result.value, "text": t(lang, f"end.result.{outcome.result.value}"),
        },
    }


def secret_frame(table: Source, protocol: GameProtocol | None = None,
                 public: dict[str, Any] | None = None) -> dict[str, Any]:
    """The public frame with every role and every night's shots, checks, saves and Best Move.

    ``public``: the public frame of the same moment, when already built (it is copied, not changed),
    so a moment's public picture is drawn once for both tiers.
    """
    protocol = protocol or build_protocol(GameHeader(), (), table.game.events)
    frame = dict(public) if public is not None else public_frame(table, protocol)
    frame["seats"] = _seats(table, public_table(table.game.state), roles=True)
    frame["nights"] = [{
        "night": night.number,
        "shots": [[n.seat, n.target] for n in night.shots],
        "checks": [{"seat": c.seat, "target": c.target, "by": c.by, "found": c.found} for c in night.checks],
        "heals": [[n.seat, n.target] for n in night.heals],
        "killed": list(night.killed),
        "best_move": None if night.best_move is None else {
            "seat": night.best_move.seat, "targets": list(night.best_move.targets), "black": night.best_move.black,
        },
    } for night in protocol.nights]
    return frame
