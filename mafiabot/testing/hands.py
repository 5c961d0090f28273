"""What a scripted player does next, shared by the demo's players and the benchmarks' players.

The demo's players act through the emulator in this process, the benchmarks' through the emulator's
control API in another; both click the bot's buttons, pick in its menus and react to its votes.
``Hands`` holds what they decide and in which order (who nominates, who votes, the black team's
shot, the night's checks and heals, the best move); a subclass supplies the hands themselves: how
a control is found, clicked, picked and reacted to. ``EnginePlayer`` is the same kind of player one
level down: it answers the engine's next command instead of clicking.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from engine import (
    Check,
    Command,
    EndSpeech,
    Game,
    GameView,
    MakeBestMove,
    Nominate,
    Phase,
    Role,
    Shoot,
    Team,
    Timeout,
)
from mafiabot.core.runtime import Table
from mafiabot.host.presenter import custom_id

Where = Literal["text", "thread"]
"""The table's channel, or the black team's room."""
Act = Literal["speak", "vote", "lift", "night", "best_move"]

M = TypeVar("M")
"""How a driver names a message: the emulator's ``Message``, or its id through the control API."""


class Strategy:
    """How the scripted players play; seeded, so a demo run can be repeated."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def nominate(self, table: Table, seat: int) -> int | None:
        """Whom the speaker nominates (None: nobody)."""
        state = table.game.state
        free = [s for s in state.alive_seats() if s not in state.nominees]
        if not free or self.rng.random() > 0.45:
            return None
        return self.rng.choice(free)

    def vote(self, table: Table, seat: int, candidates: tuple[int, ...]) -> int | None:
        """Whom a voter raises a hand against in this round (None: stays silent)."""
        if self.rng.random() < 0.2:
            return None
        return self.rng.choice(candidates)

    def lift(self, table: Table, seat: int) -> bool:
        """Whether a voter wants all the tied players out."""
        return self.rng.random() < 0.5

    def mafia_target(self, table: Table) -> int:
        """The seat the black team agrees on in its room."""
        state = table.game.state
        reds = [s for s in state.alive_seats() if state.role(s).team is not Team.BLACK]
        return self.rng.choice(reds or state.alive_seats())

    def shot(self, table: Table, seat: int, agreed: int) -> int:
        """One black player's pick; now and then one disagrees."""
        if self.rng.random() < 0.1:
            return self.rng.choice(table.game.state.alive_seats())
        return agreed

    def check(self, table: Table, seat: int) -> int:
        """The Don's or the Sheriff's check."""
        return self.rng.choice([s for s in range(1, table.game.state.players + 1) if s != seat])

    def heal(self, table: Table, seat: int) -> list[int]:
        """The Doctor's picks, best first (the rules may refuse some)."""
        alive = table.game.state.alive_seats()
        self.rng.shuffle(alive)
        return alive

    def maniac(self, table: Table, seat: int) -> int | None:
        """The maniac's shot, or None to pass."""
        others = [s for s in table.game.state.alive_seats() if s != seat]
        return self.rng.choice(others) if others and self.rng.random() < 0.6 else None

    def best_move(self, table: Table, seat: int) -> list[int]:
        """Three seats the first night's victim names."""
        others = [s for s in range(1, table.game.state.players + 1) if s != seat]
        return sorted(self.rng.sample(others, 3))

    def talk(self, table: Table, seat: int, seconds: int) -> float:
        """How long the floor holder speaks (on a scripted clock); now and then past the time."""
        if self.rng.random() < 0.1:
            return seconds + 1.0
        return round(self.rng.uniform(0.3, 0.95) * seconds)


def seeded(seed: int, i: int) -> Strategy:
    """The strategy of table ``i`` of a run seeded ``seed``: tables of one run play differently."""
    return Strategy(random.Random(f"{seed}:{i}").randrange(1 << 30))


def next_act(state: GameView) -> Act | None:
    """What the players do next in ``state`` (None: nothing, the judge or a timer moves the table)."""
    if state.paused or state.phase in (Phase.NIGHT_ZERO, Phase.NEW, Phase.ENDED):
        return None
    if state.floor is not None:
        return "speak"
    if state.phase is Phase.VOTING and state.vote is not None:
        return "vote"
    acts: dict[Phase, Act] = {Phase.LIFT_VOTE: "lift", Phase.NIGHT: "night", Phase.BEST_MOVE: "best_move"}
    return acts.get(state.phase)


@dataclass(frozen=True)
class Menu(Generic[M]):
    """A private menu the bot answered a click with: its message and its control."""

    message: M
    cid: str


class Hands(ABC, Generic[M]):
    """Scripted players at one table: the decisions here, the clicks in a subclass."""

    table: Table
    strategy: Strategy

    @abstractmethod
    async def control(self, where: Where, cid: str) -> M:
        """The newest message in ``where`` carrying ``cid``, once there is one."""

    @abstractmethod
    def latest(self, where: Where, cid: str) -> M | None:
        """The newest message in ``where`` carrying ``cid``, if there is one now."""

    @abstractmethod
    async def click(self, seat: int, message: M, cid: str) -> Menu[M] | None:
        """The player of ``seat`` presses ``cid``; the private menu the bot answered with, if any."""

    @abstractmethod
    async def select(self, seat: int, message: M, cid: str, values: Sequence[str]) -> bool:
        """The player of ``seat`` picks ``values`` in ``cid``; whether the bot took the pick."""

    @abstractmethod
    async def react(self, seat: int, message: M) -> None:
        """The player of ``seat`` raises a hand on a vote message."""

    @abstractmethod
    async def wait_vote_message(self, target: int | str) -> M:
        """The current vote message for ``target`` (a candidate seat, or "lift"), once there is one."""

    @abstractmethod
    async def until(self, predicate: Callable[[], bool]) -> None:
        """Wait until ``predicate()`` holds."""

    async def act(self) -> None:
        """Do the next thing the table waits for from its players, if anything."""
        state = self.table.game.state
        move = next_act(state)
        if move == "speak":
            assert state.floor is not None  # noqa: S101
            await self.speak(state.floor.seat, state.floor.kind.value)
        elif move is not None:
            acts: dict[str, Callable[[], Awaitable[None]]] = {
                "vote": self.vote, "lift": self.lift, "night": self.night, "best_move": self.best_move,
            }
            await acts[move]()

    @abstractmethod
    async def speak(self, seat: int, kind: str) -> None:
        """The floor holder speaks (and may nominate, see ``nominate``), then says "Thank you"."""

    async def nominate(self, seat: int, kind: str) -> None:
        """The speaker nominates whom the strategy says, where a speech may nominate."""
        table = self.table
        state = table.game.state
        if kind not in ("speech", "silent") or state.nominated or state.vote_cancelled:
            return
        target = self.strategy.nominate(table, seat)
        cid = custom_id("nominate", table.id)
        latest = self.latest("text", cid)
        if target is not None and latest is not None:
            await self.select(seat, latest, cid, [str(target)])

    def holds_floor(self, seat: int) -> bool:
        """Whether ``seat`` still has the floor (the timer may have moved it on)."""
        floor = self.table.game.state.floor
        return floor is not None and floor.seat == seat

    async def _raise_hand(self, seat: int, message: M, vote: object) -> None:
        await self.react(seat, message)
        state = self.table.game.state
        await self.until(lambda: state.vote is not vote or (state.vote is not None and seat in state.vote.votes))

    async def vote(self) -> None:
        """Voters raise a hand in the open window, as planned for this round."""
        table = self.table
        vote = table.game.state.vote
        assert vote is not None  # noqa: S101
        candidate = vote.candidates[vote.index]
        message = await self.wait_vote_message(candidate)
        for seat in table.game.state.alive_seats():
            if seat in vote.votes or table.game.state.vote is not vote or vote.candidates[vote.index] != candidate:
                continue
            if self.strategy.vote(table, seat, vote.candidates[vote.index:]) == candidate:
                await self._raise_hand(seat, message, vote)

    async def lift(self) -> None:
        """Everyone decides on "shall all of them leave?"."""
        table = self.table
        message = await self.wait_vote_message("lift")
        vote = table.game.state.vote
        for seat in table.game.state.alive_seats():
            if vote is None or table.game.state.vote is not vote:
                return
            if self.strategy.lift(table, seat):
                await self._raise_hand(seat, message, vote)

    def _night_moved_on(self, night: int) -> bool:
        state = self.table.game.state
        return state.phase is not Phase.NIGHT or state.night != night

    async def night(self) -> None:
        """The black team shoots in its room; everyone presses "Night action"; actors pick."""
        table = self.table
        state = table.game.state
        night = state.night
        act = custom_id("act", table.id)
        button = await self.control("text", act)
        agreed = self.strategy.mafia_target(table)
        shoot = custom_id("shoot", table.id)
        for seat in list(state.alive_seats()):
            if self._night_moved_on(night):
                return
            role = state.role(seat)
            if role.team is Team.BLACK and seat not in state.shots:
                picker = await self.control("thread", shoot)
                await self.select(seat, picker, shoot, [str(self.strategy.shot(table, seat, agreed))])
            if table.game.state.phase is not Phase.NIGHT:
                return
            menu = await self.click(seat, button, act)
            if menu is not None:
                await self.night_choice(seat, role, menu)

    async def night_choice(self, seat: int, role: Role, menu: Menu[M]) -> None:
        """Answer the private menu "Night action" gave: a check, a heal or the maniac's shot."""
        table = self.table
        if role in (Role.DON, Role.SHERIFF):
            await self.select(seat, menu.message, menu.cid, [str(self.strategy.check(table, seat))])
        elif role is Role.DOCTOR:
            for target in self.strategy.heal(table, seat):
                if await self.select(seat, menu.message, menu.cid, [str(target)]):
                    break
        elif role is Role.MANIAC:
            shot = self.strategy.maniac(table, seat)
            await self.select(seat, menu.message, menu.cid, [str(shot or 0)])

    async def best_move(self) -> None:
        """The first night's victim names three seats."""
        table = self.table
        seat = table.game.state.best_move_seat
        assert seat is not None  # noqa: S101
        cid = custom_id("bestmove", table.id)
        message = await self.control("text", cid)
        menu = await self.click(seat, message, cid)
        if menu is not None:
            await self.select(seat, menu.message, menu.cid, [str(s) for s in self.strategy.best_move(table, seat)])


class EnginePlayer:
    """The ``random`` strategy of ``mafiabot.tools.simulate.play_random_game``, one command at a time.

    It reads the table's game and answers the next command, which the caller submits to the
    ``Table``: the bot stores, renders and mutes as for a command that came from Discord.
    """

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.day_planned = -1
        self.target = self.other = 0
        self.victim: tuple[int, int] | None = None

    def next(self, game: Game) -> Command:
        """The next command for ``game``: the speaker's, the night's, the best move, or a timer's end."""
        state = game.state
        floor = state.floor
        if state.phase is Phase.SPEECHES and floor is not None:
            return self._speech(state, floor.seat)
        if floor is not None:
            return EndSpeech(seat=floor.seat)
        if state.phase is Phase.NIGHT:
            return self._night(state)
        if state.phase is Phase.BEST_MOVE and state.best_move_seat is not None:
            seats = [s for s in range(1, state.players + 1) if s != state.best_move_seat]
            return MakeBestMove(seat=state.best_move_seat, targets=tuple(self.rng.sample(seats, 3)))
        return Timeout()

    def _speech(self, state: GameView, seat: int) -> Command:
        """Each day two seats are planned; the day's first speakers nominate them, the rest just end."""
        if self.day_planned != state.day:
            self.day_planned = state.day
            alive = state.alive_seats()
            self.target = self.rng.choice(alive)
            self.other = self.rng.choice([s for s in alive if s != self.target])
        if not state.nominated and len(state.nominees) < 2:
            return Nominate(seat=seat, target=self.other if not state.nominees else self.target)
        return EndSpeech(seat=seat)

    def _night(self, state: GameView) -> Command:
        """The black team shoots one red victim a night; then the Don and the Sheriff check."""
        victim = self._victim(state)
        alive = state.alive_seats()
        for seat in alive:
            if state.roles[seat - 1].team is Team.BLACK and seat not in state.shots:
                return Shoot(seat=seat, target=victim)
        for seat in alive:
            if state.roles[seat - 1] in (Role.DON, Role.SHERIFF) and seat not in state.checks:
                others = [s for s in range(1, state.players + 1) if s != seat]
                return Check(seat=seat, target=self.rng.choice(others))
        return Timeout()

    def _victim(self, state: GameView) -> int:
        """Tonight's victim, chosen once a night: a red seat, else anyone not black."""
        if self.victim is None or self.victim[0] != state.night:
            alive = state.alive_seats()
            reds = [s for s in alive if state.roles[s - 1].team is Team.RED] or [
                s for s in alive if state.roles[s - 1].team is not Team.BLACK]
            self.victim = (state.night, self.rng.choice(reds))
        return self.victim[1]
