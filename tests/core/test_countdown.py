"""The table's timer on a manual clock: its end, its warning, pause and keep, retry, and a stale step."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from mafiabot.core.clock import START, ManualClock
from mafiabot.core.countdown import Countdown


@dataclass
class Heard:
    """What the countdown told, with the clock's time."""

    clock: ManualClock
    up: list[tuple[float, int]] = field(default_factory=list)
    warned: list[tuple[float, int]] = field(default_factory=list)

    def on_time(self, step: int) -> None:
        self.up.append((self.clock.now, step))

    def on_warning(self, seat: int) -> None:
        self.warned.append((self.clock.now, seat))


def countdown() -> tuple[ManualClock, Heard, Countdown]:
    clock = ManualClock()
    heard = Heard(clock)
    return clock, heard, Countdown(clock, heard.on_time, heard.on_warning)


def test_a_started_time_ends_at_its_deadline_after_its_warning() -> None:
    clock, heard, timer = countdown()
    clock.advance(5)
    assert timer.start(3, 60, warn=4, warn_before=10) == 65
    assert (timer.step, timer.deadline, timer.left(), timer.armed, timer.warning_armed) == (3, 65, 60, True, True)
    assert timer.wall_deadline() == START + timedelta(seconds=65)
    clock.advance(50)
    assert (heard.warned, heard.up, timer.warning_armed) == ([(55, 4)], [], False)
    clock.advance(10)
    assert (heard.up, timer.armed, timer.left()) == ([(65, 3)], False, 0)


def test_no_warning_without_a_seat_or_when_the_time_is_shorter_than_it() -> None:
    clock, heard, timer = countdown()
    timer.start(1, 30)
    assert not timer.warning_armed
    timer.start(2, 10, warn=4, warn_before=10)
    assert not timer.warning_armed
    clock.advance(10)
    assert (heard.warned, heard.up) == ([], [(10, 2)])


def test_a_pause_keeps_what_was_left_and_calls_nothing() -> None:
    clock, heard, timer = countdown()
    timer.start(7, 60, warn=2, warn_before=10)
    clock.advance(25)
    assert timer.pause() == 35
    assert (timer.step, timer.deadline, timer.kept, timer.left(), timer.wall_deadline()) == (7, None, 35, 35, None)
    clock.advance(100)
    assert (heard.up, heard.warned, timer.armed, timer.warning_armed) == ([], [], False, False)
    timer.start(7, timer.kept or 0)
    assert timer.kept is None
    clock.advance(35)
    assert heard.up == [(160, 7)]


def test_a_paused_step_is_kept_after_a_restart_until_it_runs() -> None:
    clock, heard, timer = countdown()
    timer.keep(9, 12.5)
    assert (timer.step, timer.kept, timer.left(), timer.armed) == (9, 12.5, 12.5, False)
    clock.advance(50)
    assert heard.up == []


def test_a_new_start_calls_the_old_time_off() -> None:
    clock, heard, timer = countdown()
    timer.start(1, 10, warn=1, warn_before=5)
    clock.advance(3)
    timer.start(2, 30)
    clock.advance(40)
    assert (heard.up, heard.warned) == ([(33, 2)], [])


def test_an_untimed_wait_runs_nothing_and_keeps_its_step() -> None:
    clock, heard, timer = countdown()
    timer.start(1, 10)
    timer.untimed(2)
    clock.advance(60)
    assert (heard.up, timer.step, timer.left(), timer.armed) == ([], 2, None, False)


def test_a_retry_says_the_same_step_again_and_keeps_the_deadline() -> None:
    clock, heard, timer = countdown()
    timer.start(4, 10)
    clock.advance(10)
    timer.retry(1.0, 4)
    assert (timer.armed, timer.deadline) == (True, 10)
    clock.advance(1)
    assert heard.up == [(10, 4), (11, 4)]


def test_stop_calls_off_both_and_keeps_the_step() -> None:
    clock, heard, timer = countdown()
    timer.start(5, 20, warn=3, warn_before=10)
    timer.stop()
    clock.advance(30)
    assert (heard.up, heard.warned, timer.step, timer.deadline) == ([], [], 5, None)
