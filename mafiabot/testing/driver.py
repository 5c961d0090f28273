"""A driver that plays a harnessed table to its end through Discord, one action at a time."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from engine import Phase
from mafiabot.core.runtime import Table
from mafiabot.emulator.state import Channel, Message
from mafiabot.emulator.users import ScriptedUser
from mafiabot.host.presenter import VOTE_EMOJI, current_vote_message, custom_id
from mafiabot.testing.clock import ScriptedClock
from mafiabot.testing.hands import Hands, Menu, Strategy, Where
from mafiabot.testing.harness import Harness, has_component, settle

__all__ = ["END_TIMEOUT", "UPDATE_MESSAGE", "Driver"]

UPDATE_MESSAGE = 7
"""The interaction response that updates the message a component sits on: the bot took a pick."""
END_TIMEOUT = 180.0
"""How long the end may take: lifting every mute waits for Discord's member-edit windows."""


class Driver(Hands[Message]):
    """Plays a table to its end through Discord, one action at a time."""

    def __init__(
        self, h: Harness, table: Table, strategy: Strategy, *, clock: ScriptedClock | None = None, pace: float = 0.0,
    ) -> None:
        self.h = h
        self.table = table
        self.strategy = strategy
        scripted = table.clock if isinstance(table.clock, ScriptedClock) else None
        self.clock = clock or scripted
        """The table's scripted clock: the driver moves time itself, so nothing is left to timing (None: real time)."""
        self.pace = pace
        """Real seconds per second on the scripted clock, so a person can read along (0: no pauses)."""
        self.cards_seen: set[int] = set()

    async def play(self, max_steps: int = 5000) -> None:
        """Act until the game is over."""
        await self.look_at_cards()
        for _ in range(max_steps):
            if self.table.done.is_set():
                return
            await self.step()
        raise RuntimeError("the game did not end")

    async def look_at_cards(self) -> None:
        """Every player presses "My card" once."""
        cid = custom_id("card", self.table.id)
        message = await self.control("text", cid)
        for person in self.h.players:
            reply = await person.press(message, cid)
            if reply.ephemeral:
                self.cards_seen.add(person.id)

    async def step(self) -> None:
        """Do the next thing the table waits for, then wait until the table moves on."""
        table = self.table
        if self.clock is not None:
            await self.settle()
        marker = (len(table.game.events), table.done.is_set())
        if table.game.state.phase is Phase.ENDED:
            # Lifting every mute at the end waits for Discord's member-edit windows (5 per 5 s).
            await self.h.wait(table.done.is_set, timeout=END_TIMEOUT)
            return
        await self.act()

        def moved() -> bool:
            return (len(table.game.events), table.done.is_set()) != marker

        if self.clock is not None:
            await self.run_out(moved)
        await self.h.wait(moved)

    async def settle(self) -> None:
        """Wait until the table is quiet (no command half-applied, no timeout on its way) and all it did is shown."""
        await settle(self.h, self.table)

    async def _pass(self, seconds: float) -> None:
        if self.pace > 0 and seconds > 0:
            await asyncio.sleep(seconds * self.pace)  # reading time for a person, not synchronization

    async def run_out(self, moved: Callable[[], bool]) -> None:
        """Nobody acts any more: let the table's timers fire, one after another, until it moves on."""
        clock = self.clock
        assert clock is not None  # noqa: S101
        while True:
            await self.h.wait(lambda: moved() or clock.next_at() is not None)
            await self.settle()  # what the table shows now is shown at this time, not the next
            at = clock.next_at()
            if moved() or at is None:
                return
            await self._pass(at - clock.time())
            clock.fire_next()
            await self.settle()

    async def talk(self, seat: int, seconds: int) -> bool:
        """Let the floor holder speak on the scripted clock; False when their time ran out first."""
        clock = self.clock
        if clock is None:
            return True
        # The strategy speaks in game seconds; the table's clock runs them ``time_scale`` times fast.
        talk = self.strategy.talk(self.table, seat, seconds) * self.table.time_scale
        await self.settle()
        end = clock.last_at()
        if end is None or clock.time() + talk >= end:
            return False
        await self._pass(talk)
        clock.advance(talk)
        await self.settle()
        return True

    async def speak(self, seat: int, kind: str) -> None:
        """The floor holder may nominate, then says "Thank you"."""
        thanks = custom_id("thanks", self.table.id)
        message = await self.control("text", thanks)
        await self.nominate(seat, kind)
        await self.settle()
        floor = self.table.game.state.floor
        if floor is None or floor.seat != seat or not await self.talk(seat, floor.seconds):
            return
        await self.click(seat, message, thanks)

    def vote_message(self, target: int | str) -> Message | None:
        """The newest vote message for ``target`` (a candidate seat, or "lift")."""
        message_id = current_vote_message(self.table, target)
        return self.h.emu.world.messages.get(message_id) if message_id is not None else None

    # -- the hands: the players' own clicks, picks and reactions in the emulator --

    def _channel(self, where: Where) -> Channel:
        if where == "text":
            return self.h.env.text
        return self.h.emu.world.channels[int(self.table.meta.thread or 0)]

    def latest(self, where: Where, cid: str) -> Message | None:
        """The newest message in ``where`` carrying ``cid``, if there is one now."""
        return self.h.latest(self._channel(where), lambda m: has_component(m, cid))

    async def control(self, where: Where, cid: str) -> Message:
        """The newest message in ``where`` carrying ``cid``, once there is one."""
        found: Message = await self.h.wait(lambda: self.latest(where, cid))
        return found

    def _person(self, seat: int) -> ScriptedUser:
        return self.h.user(self.table.user_at(seat))

    async def click(self, seat: int, message: Message, cid: str) -> Menu[Message] | None:
        """The player of ``seat`` presses ``cid``; the private menu the bot answered with, if any."""
        reply = await self._person(seat).press(message, cid)
        menu = reply.message
        if menu is None or not menu.components:
            return None
        return Menu(menu, menu.components[0]["components"][0]["custom_id"])

    async def select(self, seat: int, message: Message, cid: str, values: Sequence[str]) -> bool:
        """The player of ``seat`` picks ``values`` in ``cid``; whether the bot took it (updated the menu)."""
        answer = await self._person(seat).choose(message, cid, list(values))
        return answer.response_type == UPDATE_MESSAGE

    async def react(self, seat: int, message: Message) -> None:
        """The player of ``seat`` raises a hand on a vote message."""
        self._person(seat).react(message, VOTE_EMOJI)

    async def wait_vote_message(self, target: int | str) -> Message:
        """The current vote message for ``target``, once the bot has posted it."""
        found: Message = await self.h.wait(lambda: self.vote_message(target))
        return found

    async def until(self, predicate: Callable[[], bool]) -> None:
        """Wait until ``predicate()`` holds."""
        await self.h.wait(predicate)
