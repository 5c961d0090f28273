"""The table's menus offer exactly the seats the engine accepts, as its queries name them.

A real table plays against the emulator; the menus a player is shown are read from the messages
Discord would display, and compared with ``engine.legal_targets`` and with the seats the rules forbid.
"""

from __future__ import annotations

from typing import Any

from engine import Act, Phase, Role, legal_targets
from mafiabot.core.runtime import Table
from mafiabot.emulator.state import Message
from mafiabot.host.presenter import custom_id
from mafiabot.testing import Driver, Strategy, harness, has_component, open_table
from tests.harness import FAST_GLOBAL as FAST
from tests.harness import play_until


def offered(message: Message, cid: str) -> list[str]:
    """The values a select menu ``cid`` of ``message`` offers."""
    for row in message.components:
        for component in row.get("components") or []:
            if component.get("custom_id") == cid:
                return [option["value"] for option in component["options"]]
    raise AssertionError(f"no menu {cid} in {message.components}")


class SaveTheTarget(Strategy):
    """The black shoot the first plain citizen; the doctor saves that very seat; nobody nominates."""

    def mafia_target(self, table: Table) -> int:
        state = table.game.state
        return next(s for s in state.alive_seats() if state.role(s) is Role.CITIZEN)

    def shot(self, table: Table, seat: int, agreed: int) -> int:
        return agreed

    def heal(self, table: Table, seat: int) -> list[int]:
        return [self.mafia_target(table), *super().heal(table, seat)]

    def maniac(self, table: Table, seat: int) -> int | None:
        return None

    def nominate(self, table: Table, seat: int) -> int | None:
        return None


async def test_the_doctor_is_not_offered_a_seat_he_may_save_only_once() -> None:
    async with harness(12, emulator_config=FAST) as h:
        table = await open_table(h, "georgian", 12)
        assert table.ruleset.doctor_each_seat_once
        driver = Driver(h, table, SaveTheTarget(5))
        await driver.look_at_cards()
        await play_until(driver, table, lambda: table.game.state.phase is Phase.NIGHT and table.game.state.night == 2)
        state = table.game.state
        saved = next(target for night, _doctor, target in state.heals if night == 1)
        assert state.is_alive(saved)  # the save worked: the seat is still at the table, so the old menu listed it
        doctor = next(s for s in state.alive_seats() if state.role(s) is Role.DOCTOR)
        act = custom_id("act", table.id)
        button = await h.wait(lambda: h.latest(h.env.text, lambda m: has_component(m, act) and "Night 2" in m.content))
        reply = await h.user(table.user_at(doctor)).press(button, act)
        assert reply.message is not None
        values = offered(reply.message, custom_id("heal", table.id))
        assert values == [str(s) for s in legal_targets(state, table.ruleset, Act.HEAL, doctor)]
        assert str(saved) not in values
        assert len(values) == len(state.alive_seats()) - 1


class FirstSpeakerNominatesFive(Strategy):
    """Seat 1 puts #5 up; nobody else nominates."""

    def nominate(self, table: Table, seat: int) -> int | None:
        return 5 if seat == 1 else None


async def test_a_seat_already_up_is_not_offered_to_the_next_speaker() -> None:
    async with harness(10, emulator_config=FAST) as h:
        table = await open_table(h, "classic", 10)
        driver = Driver(h, table, FirstSpeakerNominatesFive(2))
        await driver.look_at_cards()

        def second_speaker() -> bool:
            state = table.game.state
            return state.phase is Phase.SPEECHES and state.floor is not None and state.floor.seat == 2

        await play_until(driver, table, second_speaker)
        state = table.game.state
        assert state.nominees == [5]
        nominate = custom_id("nominate", table.id)
        second = f"<@{table.user_at(2)}>"
        floor = await h.wait(lambda: h.latest(h.env.text, lambda m: has_component(m, nominate) and second in m.content))
        values = offered(floor, nominate)
        assert values == [str(s) for s in legal_targets(state, table.ruleset, Act.NOMINATE, 2)]
        assert "5" not in values
        assert values == [str(s) for s in range(1, 11) if s != 5]


CUSTOM_ID_ACTIONS = ("join", "leave", "card", "thanks", "nominate", "act", "check", "heal", "maniac", "shoot",
                     "bestmove", "bestpick")
"""Every action in the custom ids of controls already posted: messages sent before an upgrade keep working."""


def _control_kinds() -> list[type[Any]]:
    import importlib

    from cogs._cog import MafiaCog
    from mafiabot.host.bot import INITIAL_EXTENSIONS

    return [kind for extension in INITIAL_EXTENSIONS for value in vars(importlib.import_module(extension)).values()
            if isinstance(value, type) and issubclass(value, MafiaCog) and value.__module__ == extension
            for kind in value.controls]


def test_every_control_id_routes_to_exactly_one_kind_of_control() -> None:
    kinds = _control_kinds()
    for action in CUSTOM_ID_ACTIONS:
        for cid in (custom_id(action, 1), custom_id(action, 10**19, "extra"), custom_id(action, 42, "a:b")):
            routed = [kind for kind in kinds if kind.__discord_ui_compiled_template__.fullmatch(cid)]
            assert len(routed) == 1, (cid, routed)
    # The night's private menus are made with the engine's act names as their actions.
    assert {act.value for act in (Act.CHECK, Act.HEAL, Act.MANIAC)} <= set(CUSTOM_ID_ACTIONS)
    for forged in ("garbage", "mafia:zzz:1", "mafia:act:" + "9" * 40, "mafia:act:x", "mafia:act:", "other:act:1"):
        assert not [kind for kind in kinds if kind.__discord_ui_compiled_template__.fullmatch(forged)], forged


def test_the_routing_and_history_examples_hold() -> None:
    import doctest

    from cogs import _routing
    from cogs.texts import history

    for module in (_routing, history):
        result = doctest.testmod(module)
        assert result.attempted >= 1, module
        assert result.failed == 0, module
