"""The table's meta reads the rows older versions stored and writes them back as they were."""

from __future__ import annotations

import json

from mafiabot.core.meta import LIFT, TableMeta

OLD_ROW = {
    "lobby_message": 12, "thread": 900, "round": [1001, 1002], "round_no": 2,
    "votes": {"990": 4, "1001": 5, "1002": 8}, "refused": ["lock_room.2fa"], "judge": 77,
}
"""A row as an older version wrote it: keys in the order a game set them, one this version does not know."""


def test_an_old_row_reads_as_typed_fields() -> None:
    meta = TableMeta.from_json(OLD_ROW)
    assert meta.thread == 900
    assert meta.votes == {990: 4, 1001: 5, 1002: 8}
    assert (meta.round, meta.round_no) == ([1001, 1002], 2)
    assert meta.refused == ["lock_room.2fa"]
    assert meta.judge == 77
    assert meta.extra == {"lobby_message": 12}


def test_a_row_read_and_written_back_is_the_same_json() -> None:
    assert json.dumps(TableMeta.from_json(OLD_ROW).to_json()) == json.dumps(OLD_ROW)
    assert TableMeta.from_json({}).to_json() == {}


def test_a_new_game_writes_the_keys_in_the_order_an_older_version_did() -> None:
    meta = TableMeta()
    meta.thread = 900
    meta.start_round(1)
    meta.add_window(1001, 5)
    assert json.dumps(meta.to_json()) == json.dumps({"thread": 900, "round": [1001], "round_no": 1,
                                                     "votes": {"1001": 5}})


def test_the_rounds_windows() -> None:
    meta = TableMeta.from_json(OLD_ROW)
    assert meta.shows(5, 2)
    assert not meta.shows(5, 3)
    assert meta.window(8, 2) == 1002
    assert meta.window(8, 3) is None  # the round's first window is not shown yet
    meta.start_round(3)
    assert (meta.round, meta.round_no) == ([], 3)
    meta.open_lift(1100, 4)
    assert (meta.round, meta.round_no, meta.votes[1100]) == ([1100], 4, LIFT)
