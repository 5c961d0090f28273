"""Timelines: a ruleset, a seating and a list of commands, with expectations, as one JSON file.

``docs/timeline.md`` documents the format. ``mafiabot replay FILE`` runs one; the numbered rule scenarios
under ``tests/scenarios/`` are timelines that pytest runs the same way.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from engine import (
    Event,
    Game,
    Role,
    RulesError,
    Ruleset,
    RulesetError,
    StartGame,
    command_from_data,
    find_ruleset,
    from_mapping,
    to_data,
)


class TimelineError(ValueError):
    """The timeline file itself is malformed (not a rule violation inside it)."""


@dataclass(slots=True)
class TimelineResult:
    """What running a timeline produced."""

    game: Game
    rejected: RulesError | None = None
    rejected_index: int | None = None
    failures: list[str] = field(default_factory=list)

    @property
    def exit_status(self) -> int:
        """0: ran and met every expectation; 1: an expectation failed; 2: a command was rejected."""
        if self.rejected is not None:
            return 2
        return 1 if self.failures else 0


def load_ruleset(spec: Any) -> Ruleset:
    """A preset name, or an inline table of flags (with an optional ``base`` preset)."""
    if isinstance(spec, str):
        return find_ruleset(spec)
    if isinstance(spec, Mapping):
        return from_mapping(spec)
    raise TimelineError("ruleset must be a preset name or a table of settings")


def _seating(data: Mapping[str, Any]) -> StartGame:
    seating = data.get("seating")
    if seating is None:
        players = data.get("players")
        if not isinstance(players, int):
            raise TimelineError("give a seating, or players and a seed")
        return StartGame(players=players, seed=int(data.get("seed", 0)))
    if isinstance(seating, Mapping):
        try:
            pairs = sorted((int(k), v) for k, v in seating.items())
        except ValueError:
            raise TimelineError("seating keys must be seat numbers") from None
        if [k for k, _ in pairs] != list(range(1, len(pairs) + 1)):
            raise TimelineError("seating must name every seat from 1 up")
        names = [v for _, v in pairs]
    elif isinstance(seating, Sequence) and not isinstance(seating, str):
        names = list(seating)
    else:
        raise TimelineError("seating must be a list of roles or a table of seat = role")
    try:
        roles = tuple(Role(name) for name in names)
    except ValueError as exc:
        raise TimelineError(f"seating: {exc}") from None
    return StartGame(players=len(roles), roles=roles)


def summary(game: Game, events: Sequence[Event] | None = None) -> dict[str, Any]:
    """The state a timeline run prints: phase, day, alive seats, result, fouls, points, events."""
    s = game.state
    outcome = s.outcome
    return {
        "ruleset": game.ruleset.name,
        "phase": s.phase.value,
        "day": s.day,
        "night": s.night,
        "alive": s.alive_seats(),
        "winner": outcome.result.value if outcome else None,
        "reason": outcome.reason.value if outcome else None,
        "fouls": {str(seat): s.foul_count(seat) for seat in range(1, s.players + 1) if s.foul_count(seat)},
        "technical": {str(seat): n for seat in range(1, s.players + 1) if (n := s.technical_count(seat))},
        "nominees": list(s.nominees),
        "floor": s.floor.seat if s.floor else None,
        "maniac_shots_used": s.maniac_shots_used,
        "points": {str(seat): str(p) for seat, p in game.points().items()} if outcome else {},
        "events": [to_data(e) for e in (game.events if events is None else events)],
    }


def _matches(expected: Any, actual: Any) -> bool:
    if isinstance(expected, Mapping):
        return isinstance(actual, Mapping) and all(k in actual and _matches(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(_matches(e, a) for e, a in zip(expected, actual, strict=True))
    return bool(expected == actual)


def _expect_events(want: Any, got: Mapping[str, Any]) -> list[str]:
    return [f"no event matches {json.dumps(p)}" for p in want if not any(_matches(p, e) for e in got["events"])]


def _expect_no_events(want: Any, got: Mapping[str, Any]) -> list[str]:
    return [
        f"an event matches {json.dumps(p)}, none should" for p in want if any(_matches(p, e) for e in got["events"])
    ]


def _expect_points(want: Any, got: Mapping[str, Any]) -> list[str]:
    have = {k: Decimal(v) for k, v in got["points"].items()}
    return [
        f"points of #{seat}: expected {value}, got {have.get(str(seat))}"
        for seat, value in want.items()
        if have.get(str(seat)) != Decimal(str(value))
    ]


def _counts(kind: str) -> Callable[[Any, Mapping[str, Any]], list[str]]:
    """Compare per-seat counts (``fouls``, ``technical``), an absent seat counting zero."""
    def expect(want: Any, got: Mapping[str, Any]) -> list[str]:
        have = got[kind]
        return [
            f"{kind} of #{seat}: expected {count}, got {have.get(str(seat), 0)}"
            for seat, count in want.items()
            if have.get(str(seat), 0) != count
        ]
    return expect


_EXPECTATIONS: dict[str, Callable[[Any, Mapping[str, Any]], list[str]]] = {
    "events": _expect_events,
    "no_events": _expect_no_events,
    "points": _expect_points,
    "fouls": _counts("fouls"),
    "technical": _counts("technical"),
}
"""Expectations read in their own way; any other key of the summary must match as it is."""


def check_expectations(game: Game, expect: Mapping[str, Any], window: Sequence[Event]) -> list[str]:
    """Compare the game against ``expect``; ``window`` holds the events since the last checkpoint."""
    got = summary(game, window)
    failures = []
    for key, want in expect.items():
        check = _EXPECTATIONS.get(key)
        if check is not None:
            failures += check(want, got)
        elif key not in got:
            failures.append(f"unknown expectation {key!r}")
        elif not _matches(want, got[key]):
            failures.append(f"{key}: expected {json.dumps(want)}, got {json.dumps(got[key])}")
    return failures


def run_timeline(data: Mapping[str, Any]) -> TimelineResult:
    """Apply a timeline; stop at the first unexpected rejection.

    Raises:
        TimelineError: the file is malformed (bad ruleset, seating or command shape).
    """
    try:
        ruleset = load_ruleset(data.get("ruleset", "classic"))
    except RulesetError as exc:
        raise TimelineError(f"ruleset: {exc}") from None
    game = Game(ruleset)
    result = TimelineResult(game)
    try:
        game.apply(_seating(data))
    except RulesError as exc:
        result.rejected, result.rejected_index = exc, -1
        return result
    mark = len(game.events)
    steps = data.get("commands", [])
    if not isinstance(steps, list):
        raise TimelineError("commands must be a list")
    for index, step in enumerate(steps):
        if not isinstance(step, Mapping):
            raise TimelineError(f"commands[{index}] must be a table")
        if "expect" in step and "type" not in step:
            expect = _table(step["expect"], f"commands[{index}].expect")
            failures = check_expectations(game, expect, game.events[mark:])
            result.failures.extend(f"commands[{index}]: {f}" for f in failures)
            mark = len(game.events)
        elif not _apply_step(result, index, step):
            return result
    if "expect" in data:
        result.failures.extend(check_expectations(game, _table(data["expect"], "expect"), game.events[mark:]))
    return result


def _table(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise TimelineError(f"{where} must be a table")
    return value


def _apply_step(result: TimelineResult, index: int, step: Mapping[str, Any]) -> bool:
    """Apply one command ``repeat`` times; ``False`` when the engine rejected it unexpectedly (the run stops).

    Raises:
        TimelineError: the command or its ``repeat`` is malformed.
    """
    body = {k: v for k, v in step.items() if k not in ("repeat", "rejected", "note")}
    try:
        command = command_from_data(body)
    except RulesError as exc:
        raise TimelineError(f"commands[{index}]: {exc}") from None
    repeat = step.get("repeat", 1)
    if not isinstance(repeat, int) or isinstance(repeat, bool) or repeat < 1:
        raise TimelineError(f"commands[{index}].repeat must be a whole number of at least 1")
    for _ in range(repeat):
        try:
            result.game.apply(command)
        except RulesError as exc:
            if step.get("rejected") == exc.code:
                break
            result.rejected, result.rejected_index = exc, index
            return False
        else:
            if "rejected" in step:
                result.failures.append(f"commands[{index}]: expected rejection {step['rejected']!r}, accepted")
    return True


def load_timeline(path: Path) -> dict[str, Any]:
    """Read a timeline file.

    Raises:
        TimelineError: the file is not valid JSON or not a table.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise TimelineError(f"{path}: {exc}") from None
    if not isinstance(data, dict):
        raise TimelineError(f"{path}: a timeline is a JSON object")
    return data
