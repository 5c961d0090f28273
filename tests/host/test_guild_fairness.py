"""The order in which a guild's waiting member edits get a token, without Discord.

Every table of a guild shares the guild's member-edit bucket per token: floor changes go first,
the tables take turns within a lane, and no waiting edit is starved.
"""

from __future__ import annotations

import pytest

from mafiabot.core.voice import EditBudget
from mafiabot.host.ratelimit import FairQueue

FLOOR, BATCH = 0, 1


def drain(queue: FairQueue[str], now: float = 0.0) -> list[str]:
    out = []
    while queue:
        head = queue.peek(now)
        out.append(queue.pop(now))
        assert out[-1] == head
    return out


def test_a_floor_change_goes_before_a_batch_queued_earlier() -> None:
    queue: FairQueue[str] = FairQueue()
    for i in range(12):
        queue.push(f"A start {i}", lane=BATCH, table="A", at=0.0)
    queue.push("B unmute", lane=FLOOR, table="B", at=1.0)
    queue.push("B mute", lane=FLOOR, table="B", at=1.0)
    assert drain(queue, 1.0)[:3] == ["B unmute", "B mute", "A start 0"]


def test_tables_take_turns_within_a_lane_and_each_keeps_its_own_order() -> None:
    queue: FairQueue[str] = FairQueue()
    for i in range(3):
        queue.push(f"A{i}", lane=BATCH, table="A", at=0.0)
    for i in range(2):
        queue.push(f"C{i}", lane=BATCH, table="C", at=0.5)
    queue.push("D0", lane=BATCH, table="D", at=0.7)
    assert drain(queue) == ["A0", "C0", "D0", "A1", "C1", "A2"]


def test_floor_changes_of_several_tables_take_turns_so_every_new_speaker_is_unmuted_first() -> None:
    queue: FairQueue[str] = FairQueue()
    for table in ("B", "C"):
        queue.push(f"{table} unmute", lane=FLOOR, table=table, at=0.0)
        queue.push(f"{table} mute", lane=FLOOR, table=table, at=0.0)
    assert drain(queue) == ["B unmute", "C unmute", "B mute", "C mute"]


def test_a_table_that_comes_back_joins_the_end_of_the_turn() -> None:
    queue: FairQueue[str] = FairQueue()
    queue.push("A0", lane=BATCH, table="A", at=0.0)
    queue.push("C0", lane=BATCH, table="C", at=0.0)
    queue.push("C1", lane=BATCH, table="C", at=0.0)
    assert queue.pop(0.0) == "A0"
    queue.push("A1", lane=BATCH, table="A", at=0.1)
    assert drain(queue) == ["C0", "A1", "C1"]


def test_a_retry_goes_ahead_of_its_own_tables_other_edits_only() -> None:
    queue: FairQueue[str] = FairQueue()
    queue.push("A1", lane=BATCH, table="A", at=0.0)
    queue.push("C0", lane=BATCH, table="C", at=0.0)
    queue.push("A0 again", lane=BATCH, table="A", at=0.2, front=True)
    assert drain(queue) == ["A0 again", "C0", "A1"]


def test_an_overdue_batch_takes_every_other_place_until_it_has_caught_up() -> None:
    queue: FairQueue[str] = FairQueue(patience=30.0)
    for i in range(3):
        queue.push(f"A start {i}", lane=BATCH, table="A", at=0.0)
    for i in range(4):
        queue.push(f"floor {i}", lane=FLOOR, table=f"T{i}", at=29.0)
    assert queue.peek(29.5) == "floor 0"  # not overdue yet: floor changes first
    order = [queue.pop(30.0) for _ in range(6)]
    assert order == ["A start 0", "floor 0", "A start 1", "floor 1", "A start 2", "floor 2"]
    assert drain(queue, 30.0) == ["floor 3"]


def test_a_batch_that_has_not_waited_long_stays_behind_floor_changes() -> None:
    queue: FairQueue[str] = FairQueue(patience=30.0)
    queue.push("A start", lane=BATCH, table="A", at=10.0)
    for i in range(3):
        queue.push(f"floor {i}", lane=FLOOR, table=f"T{i}", at=10.0)
    assert drain(queue, 39.0) == ["floor 0", "floor 1", "floor 2", "A start"]


def test_counts_and_an_empty_queue() -> None:
    queue: FairQueue[str] = FairQueue()
    assert not queue
    queue.push("x", lane=BATCH, table=None, at=0.0)  # an edit of no table (a mute lifted after a restart)
    queue.push("y", lane=FLOOR, table=1, at=0.0)
    assert (len(queue), queue.waiting(FLOOR), queue.waiting(BATCH)) == (2, 1, 1)
    assert drain(queue) == ["y", "x"]
    with pytest.raises(IndexError):
        queue.peek(0.0)
    with pytest.raises(ValueError, match="lane"):
        FairQueue(0)


def test_a_token_whose_global_limit_has_a_queue_is_taken_only_when_no_other_has_budget() -> None:
    budget = EditBudget(2)
    picks = [budget.pick(1, 0.0, busy={1}) for _ in range(10)]
    assert picks == [0] * 5 + [1] * 5  # the helper is busy: the bot's token first, the helper after
    assert isinstance(budget.pick(1, 0.0, busy={1}), float)


def test_next_reset_is_known_only_once_an_answer_said_it() -> None:
    budget = EditBudget(1)
    for _ in range(5):
        budget.pick(3, 0.0)
    assert budget.next_reset(3, 0.0) is None  # only the answers on their way can say
    budget.answered(0, 3, 0.05, limit=5, remaining=0, reset_after=4.95)
    assert budget.next_reset(3, 1.0) == pytest.approx(4.0)
    assert budget.next_reset(4, 1.0) is None
