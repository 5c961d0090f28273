"""The table's menus offer exactly the seats the engine accepts, as its queries name them.

A real table plays against the emulator; the menus a player is shown are read from the messages
Discord would display, and compared with ``engine.legal_targets`` and with the seats the rules forbid.
"""

from __future__ import annotations

from engine import Act, Phase, Role, legal_targets
from mafiabot.core.runtime import Table
from mafiabot.emulator.state import Message
from mafiabot.host.presenter import custom_id
from mafiabot.tools.demo import Driver, Strategy, harness, has_component, open_table
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
