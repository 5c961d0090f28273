"""A game's JSON export, written by the export's own indenting writer: the bytes ``json.dumps(indent=2)`` gives."""

from __future__ import annotations

import json
import math

import pytest

from mafiabot.store import Store
from mafiabot.store.export import _indented, to_data, to_json
from tests.store.test_site import _server

ODD = {"": [], "a": {}, "b": [[], {}, [1, [2.5, -0.0, 1e300]], None, True, False], "ü ღ \u2028 \"\\\n\t\x00": "ø",
       "n": -12345678901234567890, "f": 0.1, "inf": math.inf, "nan": math.nan, "t": (1, "two")}


def _written(value: object) -> str:
    out: list[str] = []
    _indented(value, "\n", out)  # type: ignore[arg-type]
    return "".join(out)


def test_odd_values_are_written_as_json_dumps_writes_them() -> None:
    assert _written(ODD) == json.dumps(ODD, ensure_ascii=False, indent=2)
    assert _written({1: "x", None: 2, False: 3, 2.5: 4}) == json.dumps({1: "x", None: 2, False: 3, 2.5: 4}, indent=2)
    with pytest.raises(TypeError):
        _written({"x": object()})


async def test_every_game_exported_is_the_indented_json_of_its_data(store: Store) -> None:
    games, _running, _tid = await _server(store)
    for gid in games:
        game, protocol = await store.game_record(gid)
        assert to_json(game, protocol) == json.dumps(to_data(game, protocol), ensure_ascii=False, indent=2)
