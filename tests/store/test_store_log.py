from __future__ import annotations

import asyncio
import itertools
import json
import os
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from sqlalchemy import Connection, Engine, RootTransaction, create_engine, event, text
from sqlalchemy.exc import OperationalError

from engine import (
    CLASSIC,
    FIIM,
    GEORGIAN,
    Game,
    Role,
    Ruleset,
    Timeout,
    command_from_data,
    event_from_data,
    from_mapping,
    replay_events,
)
from mafiabot.core.records import JSON
from mafiabot.store import (
    ConcurrencyError,
    GameFinal,
    GameNotFoundError,
    SeatInfo,
    Store,
    StoreError,
    StoreUnavailableError,
    stored_ruleset,
)

if TYPE_CHECKING:
    from tests.store.conftest import StartScripted

T0 = datetime(2026, 3, 1, 19, 0, tzinfo=UTC)
REPO = Path(__file__).resolve().parents[2]
SNOWFLAKE = 1_234_567_890_123_456_789  # above 2**53 too: a float would lose it
ROLES_6 = (Role.DON, Role.MAFIA, Role.SHERIFF, Role.CITIZEN, Role.CITIZEN, Role.CITIZEN)


async def _game(store: Store, guild_id: int = SNOWFLAKE, table: int = 0) -> int:
    """A new open game; open games need a text and a voice channel each, so ``table`` picks them."""
    return await store.create_game(
        guild_id=guild_id, channel_id=SNOWFLAKE + 1 + 10 * table, voice_channel_id=SNOWFLAKE + 2 + 10 * table,
        judge_id=SNOWFLAKE + 3, ruleset=CLASSIC, language="ru", created_at=T0,
    )


def _timeout(n: int) -> dict[str, JSON]:
    return {"type": "Timeout", "step": n}


async def test_append_in_order_and_load_back(store: Store) -> None:
    game_id = await _game(store)
    written = []
    for seq in range(1, 6):
        chosen: list[dict[str, JSON]] = [{"type": "NightFell", "night": seq}, {"type": "Resumed"}]
        events = chosen[: seq % 3]
        at = T0 + timedelta(seconds=seq)
        await store.append(game_id, seq, _timeout(seq), events, actor_id=SNOWFLAKE + seq, at=at)
        written.append((seq, _timeout(seq), events, SNOWFLAKE + seq, at))
    log = await store.load_log(game_id)
    assert [(c.seq, c.command, c.events, c.actor_id, c.at) for c in log] == written
    assert all(c.at.tzinfo is not None for c in log)
    game = await store.get_game(game_id)
    assert (game.guild_id, game.channel_id, game.voice_channel_id, game.judge_id) == (
        SNOWFLAKE, SNOWFLAKE + 1, SNOWFLAKE + 2, SNOWFLAKE + 3,
    )
    assert (game.last_seq, game.status, game.language, game.ruleset_name) == (5, "open", "ru", "classic")
    assert game.ruleset == CLASSIC.to_dict()
    assert game.rules() == CLASSIC


@pytest.mark.parametrize("rules", [CLASSIC, FIIM, GEORGIAN, from_mapping({"base": "fiim", "name": "club"})])
def test_stored_rulesets_read_back_equal(rules: Ruleset) -> None:
    assert stored_ruleset(json.loads(json.dumps(rules.to_dict()))) == rules


async def test_times_in_other_zones_are_stored_as_utc(store: Store) -> None:
    game_id = await _game(store)
    tbilisi = timezone(timedelta(hours=4))
    await store.append(game_id, 1, _timeout(1), [], actor_id=None, at=datetime(2026, 3, 1, 23, 0, tzinfo=tbilisi))
    (stored,) = await store.load_log(game_id)
    assert stored.at == datetime(2026, 3, 1, 19, 0, tzinfo=UTC)
    assert stored.at.utcoffset() == timedelta(0)
    with pytest.raises(ValueError, match="zone"):
        await store.append(game_id, 2, _timeout(2), [], actor_id=None, at=datetime(2026, 3, 1))  # noqa: DTZ001


async def test_a_taken_position_raises_and_keeps_the_first(store: Store) -> None:
    game_id = await _game(store)
    await store.append(game_id, 1, _timeout(1), [{"type": "Resumed"}], actor_id=1, at=T0)
    with pytest.raises(ConcurrencyError) as caught:
        await store.append(game_id, 1, _timeout(99), [{"type": "Paused", "seat": None}], actor_id=2, at=T0)
    assert (caught.value.seq, caught.value.last_seq) == (1, 1)
    (kept,) = await store.load_log(game_id)
    assert (kept.command, kept.events, kept.actor_id) == (_timeout(1), [{"type": "Resumed"}], 1)


async def test_a_gap_in_the_log_is_refused(store: Store) -> None:
    game_id = await _game(store)
    with pytest.raises(ConcurrencyError):
        await store.append(game_id, 2, _timeout(2), [], actor_id=None, at=T0)
    await store.append(game_id, 1, _timeout(1), [], actor_id=None, at=T0)
    with pytest.raises(ConcurrencyError):
        await store.append(game_id, 3, _timeout(3), [], actor_id=None, at=T0)
    assert [c.seq for c in await store.load_log(game_id)] == [1]


async def test_unknown_game_and_malformed_input(store: Store) -> None:
    with pytest.raises(GameNotFoundError):
        await store.append(404, 1, _timeout(1), [], actor_id=None, at=T0)
    with pytest.raises(GameNotFoundError):
        await store.load_log(404)
    game_id = await _game(store)
    with pytest.raises(ValueError, match="type"):
        await store.append(game_id, 1, {"step": 1}, [], actor_id=None, at=T0)
    with pytest.raises(ValueError, match="seq"):
        await store.append(game_id, 0, _timeout(0), [], actor_id=None, at=T0)


async def test_open_games_bring_back_seats_log_timer_and_discord_meta(store: Store) -> None:
    mine, other, done = await _game(store, 10), await _game(store, 11, table=1), await _game(store, 10, table=2)
    await store.seat_players(mine, [(1, SNOWFLAKE, "Ann", None), SeatInfo(2, 7, "Bob")])
    await store.seat_players(mine, [SeatInfo(1, SNOWFLAKE, "Ann", "don"), SeatInfo(2, 7, "Bob", "sheriff")])
    await store.append(mine, 1, _timeout(1), [{"type": "Resumed"}], actor_id=None, at=T0)
    deadline = T0 + timedelta(seconds=60)
    await store.set_timer(mine, 3, deadline)
    await store.set_discord_meta(mine, {"lobby_message": SNOWFLAKE, "thread": 42})
    await store.finish_game(done, GameFinal("abandoned", "abandoned"), at=T0)

    games = await store.open_games()
    assert [g.id for g in games] == [mine, other]
    (game,) = await store.open_games(lambda guild: guild % 2 == 0)
    assert game.id == mine
    assert game.seats == [SeatInfo(1, SNOWFLAKE, "Ann", "don"), SeatInfo(2, 7, "Bob", "sheriff")]
    assert [c.command for c in game.log] == [_timeout(1)]
    assert (game.timer_id, game.timer_deadline, game.timer_remaining) == (3, deadline, None)
    assert game.discord == {"lobby_message": SNOWFLAKE, "thread": 42}

    await store.set_timer(mine, 3, None, remaining=12.5)
    game = await store.get_game(mine)
    assert (game.timer_id, game.timer_deadline, game.timer_remaining) == (3, None, 12.5)
    with pytest.raises(GameNotFoundError):
        await store.set_timer(404, 1, None)


async def test_the_heartbeat_of_open_games_marks_when_a_restart_reads_their_clocks(store: Store) -> None:
    """``seen`` notes open games alive at a moment; the stop is the later of it and the last command."""
    mine, done = await _game(store, 10), await _game(store, 10, table=1)
    await store.append(mine, 1, _timeout(1), [{"type": "Resumed"}], actor_id=None, at=T0)
    await store.finish_game(done, GameFinal("abandoned", "abandoned"), at=T0)
    (game,) = await store.open_games()
    assert (game.seen_at, game.stopped_at()) == (None, T0)

    later = T0 + timedelta(seconds=42)
    await store.seen([mine, done], later)
    await store.seen([], later + timedelta(hours=1))  # nothing running: nothing written
    (game,) = await store.open_games()
    assert (game.seen_at, game.stopped_at()) == (later, later)
    assert (await store.get_game(done)).seen_at is None  # a closed game keeps no heartbeat

    await store.append(mine, 2, _timeout(2), [{"type": "Resumed"}], actor_id=None, at=later + timedelta(seconds=1))
    assert (await store.get_game(mine)).stopped_at() == later + timedelta(seconds=1)


async def test_the_stored_log_rebuilds_the_game(store: Store, start_game: StartScripted) -> None:
    table = await start_game(SNOWFLAKE, "classic", [1, 2, 3, 4, 5, 6], ROLES_6)
    await table.run(Timeout())
    await table.end_floors()
    stored = await store.load_log(table.game_id)
    rebuilt = Game.replay(CLASSIC, [command_from_data(c.command) for c in stored])
    assert rebuilt.state.to_data() == table.game.state.to_data()
    from_events = replay_events(event_from_data(e) for c in stored for e in c.events)
    assert from_events.to_data() == table.game.state.to_data()


async def test_appends_run_off_the_event_loop(store: Store) -> None:
    """The SQL waits for a task on the loop: if it ran on the loop, that task could never run."""
    game_id = await _game(store)
    gate = threading.Event()
    on_worker: list[tuple[bool, bool]] = []

    def wait_for_the_loop(*_args: object) -> None:
        on_worker.append((gate.wait(timeout=10), threading.current_thread() is threading.main_thread()))

    async def open_gate() -> None:
        gate.set()

    event.listen(store.engine, "before_cursor_execute", wait_for_the_loop)
    try:
        await asyncio.gather(store.append(game_id, 1, _timeout(1), [], actor_id=None, at=T0), open_gate())
    finally:
        event.remove(store.engine, "before_cursor_execute", wait_for_the_loop)
    assert on_worker
    assert all(opened and not on_main for opened, on_main in on_worker)


async def test_a_ticking_task_keeps_running_during_a_batch_of_appends(store: Store) -> None:
    game_id = await _game(store)
    order: list[str] = []
    done = asyncio.Event()

    async def ticker() -> None:
        while not done.is_set():
            order.append("tick")
            await asyncio.sleep(0)

    task = asyncio.create_task(ticker())
    for seq in range(1, 31):
        await store.append(game_id, seq, _timeout(seq), [{"type": "Resumed"}], actor_id=None, at=T0)
        order.append(f"append {seq}")
    done.set()
    await task
    appends = [i for i, item in enumerate(order) if item.startswith("append")]
    # Every append awaited the worker thread, and the ticker ran while it waited.
    ticks_between = [order[a + 1 : b].count("tick") for a, b in itertools.pairwise(appends)]
    assert all(n >= 1 for n in ticks_between)
    assert [c.seq for c in await store.load_log(game_id)] == list(range(1, 31))


def _worker(url: str, game_id: int, name: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen(  # noqa: S603  (our own interpreter and script)
        [sys.executable, str(Path(__file__).with_name("append_worker.py")), url, str(game_id), name],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO, env=env,
    )


def _hold_game_row(url: str, game_id: int) -> tuple[Engine, Connection, RootTransaction]:
    """Lock the game row in another session so both workers queue up on it (PostgreSQL)."""
    engine = create_engine(url)
    connection = engine.connect()
    transaction = connection.begin()
    connection.execute(text("SELECT id FROM games WHERE id = :id FOR UPDATE"), {"id": game_id})
    return engine, connection, transaction


QUEUED_BEHIND = text(
    """
    WITH RECURSIVE queued(pid) AS (
        SELECT pid FROM pg_stat_activity WHERE CAST(:holder AS integer) = ANY(pg_blocking_pids(pid))
        UNION
        SELECT a.pid FROM pg_stat_activity AS a JOIN queued AS q ON q.pid = ANY(pg_blocking_pids(a.pid))
    )
    SELECT count(*) FROM queued
    """
)
"""Sessions waiting for the holder's lock, directly or behind another waiter (this test's writers only)."""


def _waiting_on_locks(url: str, holder: Connection, count: int) -> None:
    """Return once ``count`` sessions queue behind ``holder``'s lock.

    PostgreSQL tells no other session that a backend started to wait for a lock (no event, no
    NOTIFY: the waiter is blocked, and the holder learns nothing until it lets go), so the lock
    manager's view is the only witness of the very condition, and it is re-read until the writers
    show in it. The pause between reads only paces that re-reading; how long the writers take to
    get there is not guessed anywhere.
    """
    holder_pid = holder.execute(text("SELECT pg_backend_pid()")).scalar()
    engine = create_engine(url, isolation_level="AUTOCOMMIT")  # each read sees the activity of now
    deadline = time.monotonic() + 60
    try:
        with engine.connect() as connection:
            while connection.execute(QUEUED_BEHIND, {"holder": holder_pid}).scalar() != count:
                if time.monotonic() > deadline:
                    raise AssertionError(f"expected {count} writers waiting on the game row")
                time.sleep(0.02)
    finally:
        engine.dispose()


async def test_two_processes_never_both_append_the_same_position(store: Store, store_url: str, backend: str) -> None:
    game_id = await _game(store)
    workers = {name: _worker(store_url, game_id, name) for name in ("left", "right")}
    try:
        for w in workers.values():
            assert w.stdout is not None
            assert w.stdout.readline().strip() == "ready"
        winners = {}
        for seq in range(1, 9):
            held = _hold_game_row(store_url, game_id) if backend == "postgres" and seq % 2 else None
            for w in workers.values():
                assert w.stdin is not None
                w.stdin.write(f"go {seq}\n")
                w.stdin.flush()
            if held is not None:
                # Both writers are now blocked on the same row; let them race for it.
                engine, connection, transaction = held
                await asyncio.to_thread(_waiting_on_locks, store_url, connection, 2)
                transaction.commit()
                connection.close()
                engine.dispose()
            answers = {name: w.stdout.readline().split() for name, w in workers.items() if w.stdout is not None}
            assert sorted(a[0] for a in answers.values()) == ["lost", "won"], answers
            assert all(int(a[1]) == seq for a in answers.values())
            winners[seq] = next(name for name, a in answers.items() if a[0] == "won")
    finally:
        for w in workers.values():
            if w.stdin is not None:
                w.stdin.write("\n")
                w.stdin.close()
        for w in workers.values():
            w.wait(timeout=30)
            if w.stdout is not None:
                w.stdout.close()
    assert all(w.returncode == 0 for w in workers.values())
    log = await store.load_log(game_id)
    assert [c.seq for c in log] == list(range(1, 9))
    assert {c.seq: c.command["writer"] for c in log} == winners
    assert (await store.get_game(game_id)).last_seq == 8


async def test_a_lost_database_is_a_store_error(store: Store) -> None:
    game_id = await _game(store)

    def fail(*_args: object) -> None:
        raise OperationalError("INSERT", {}, ConnectionError("server closed the connection"))

    event.listen(store.engine, "before_cursor_execute", fail)
    try:
        with pytest.raises(StoreUnavailableError, match="server closed"):
            await store.append(game_id, 1, _timeout(1), [], actor_id=None, at=T0)
    finally:
        event.remove(store.engine, "before_cursor_execute", fail)
    await store.append(game_id, 1, _timeout(1), [], actor_id=None, at=T0)  # nothing half-written
    await store.close()
    with pytest.raises(StoreError, match="closed"):
        await store.load_log(game_id)
