"""The table on stream: every tier of a whole game in a real browser, filtered by the server.

Chromium (Debian's package) driven by Playwright. Without a browser these tests skip, except where
``MAFIABOT_REQUIRE_BROWSER=1`` (CI) makes them fail. The game runs on a scripted clock, and the
stream's delay on a clock of its own that the test moves along with the game's: nothing waits on
the machine's time, so what the broadcast tier shows at each moment is decided by the script.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from playwright.async_api import async_playwright

from engine import Phase, Role
from engine.commands import GiveFoul
from mafiabot.core.clock import ManualClock
from mafiabot.core.runtime import Table
from mafiabot.host import i18n
from mafiabot.host.web import feed as feed_module
from mafiabot.host.web import frames as frames_module
from mafiabot.host.web.feed import WAKE_SLICE
from mafiabot.host.web.server import HEARTBEAT_SECONDS, StreamServer
from mafiabot.testing import Driver, Harness, ScriptedClock, Strategy, harness, open_table
from tests.harness import FAST_GLOBAL, skip_night_zero

CHROMIUM = "/usr/bin/chromium"
IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images" / "overlay"  # apart from the drawn samples
HOSTILE = ("<img src=x onerror=alert(1)>", "\u202eevil\u202c \u200fname", "Z" + "\u0301" * 31)
"""Names a player may choose: markup, right-to-left marks, and 32 characters of which 31 combine."""
LINK = re.compile(r"<(http://[^>]+)>")

HAVE_CHROMIUM = Path(CHROMIUM).exists()


@contextlib.asynccontextmanager
async def chromium() -> AsyncIterator[Any]:
    """A headless Chromium; skipped without one, failed without one in CI."""
    if not HAVE_CHROMIUM:
        if os.environ.get("MAFIABOT_REQUIRE_BROWSER") == "1":
            pytest.fail(f"{CHROMIUM} is missing and MAFIABOT_REQUIRE_BROWSER=1: apt-get install -y chromium")
        pytest.skip(f"{CHROMIUM} is missing (apt-get install -y chromium)")
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            yield browser
        finally:
            await browser.close()


@dataclass
class Recorder:
    """A raw client of one tier's event stream: every byte it got, and each frame with the stream clock's time."""

    url: str
    clock: ManualClock
    raw: bytearray = field(default_factory=bytearray)
    frames: list[tuple[int, float, dict[str, Any]]] = field(default_factory=list)
    status: int | None = None

    async def run(self) -> None:
        async with aiohttp.ClientSession() as session, session.get(self.url + "/events") as response:
            self.status = response.status
            pending = b""
            async for chunk in response.content.iter_any():
                self.raw.extend(chunk)
                pending += chunk
                while b"\n\n" in pending:
                    block, pending = pending.split(b"\n\n", 1)
                    fields = dict(line.split(": ", 1) for line in block.decode().split("\n") if ": " in line)
                    if "data" in fields and "id" in fields:
                        self.frames.append((int(fields["id"]), self.clock.time(), json.loads(fields["data"])["frame"]))


def links(content: str) -> dict[str, str]:
    """The judge's answer's links: ``public``, ``broadcast``, ``judge`` (circle), and each ``_strip``."""
    found = LINK.findall(content)
    assert len(found) == 6, content
    names = ["public", "public_strip", "broadcast", "broadcast_strip", "judge", "judge_strip"]
    return dict(zip(names, found, strict=True))


def on_stream(clock: ScriptedClock) -> AbstractAsyncContextManager[Harness]:
    """A ten-seat harness with the web server on, every table's timers on ``clock``."""
    return harness(10, time_scale=1.0, emulator_config=FAST_GLOBAL, clock=lambda: clock,
                   config={"web": {"enabled": True, "port": 0}})


def stream_of(h: Harness) -> StreamServer:
    assert h.bot.stream is not None
    return h.bot.stream


async def seen(page: Any, script: str, arg: Any = None) -> None:
    """Wait until ``script`` holds in the page (the frame it checks has arrived)."""
    await page.wait_for_function(script, arg=arg, timeout=30_000)


async def check_public(page: Any, table: Table) -> None:
    """The public overlay at this moment: the table's phase and floor, every name as text, no role."""
    state = table.game.state
    floor = state.floor.seat if state.floor is not None else None
    await seen(page, "([p, f]) => document.body.dataset.phase === p && "
               "(f === null ? !document.querySelector('.seat[data-floor=true]') : "
               "document.querySelector('.seat[data-floor=true]')?.dataset.seat === String(f))",
               [state.phase.value, floor])
    names = await page.eval_on_selector_all(".seat .name", "nodes => nodes.map(n => n.textContent)")
    assert names == table.names
    if floor is not None:  # the floor holder's countdown, in whole seconds of their speech
        left = await page.text_content(".seat[data-floor=true] .countdown")
        assert left is not None
        assert 0 <= int(left) <= state.floor.seconds  # type: ignore[union-attr]
    if state.vote is not None:  # the vote panel lists the ballot, the current candidate marked
        await seen(page, "() => !document.getElementById('vote').hidden")
        listed = await page.eval_on_selector_all("#vote .tally[data-candidate]",
                                                 "n => n.map(x => +x.dataset.candidate)")
        assert listed == (list(state.vote.candidates) if state.vote.kind is not None else [state.vote.candidates[0]])
    else:
        assert await page.locator("#vote").is_hidden()
    if state.outcome is None:
        assert await page.locator(".role").count() == 0
    assert await page.locator("#nights").is_hidden()
    assert await page.locator("img").count() == 0


async def check_judge(page: Any, table: Table) -> None:
    """The judge's overlay: live, with every role, and the night's shots and checks once there was a night."""
    state = table.game.state
    await seen(page, "p => document.body.dataset.phase === p", state.phase.value)
    roles = await page.eval_on_selector_all(".seat .role", "nodes => nodes.map(n => n.dataset.role)")
    assert roles == [table.role_at(seat).value for seat in range(1, len(table.seats) + 1)]
    if state.night >= 1 and state.phase is not Phase.NIGHT:
        assert await page.locator("#nights").is_visible()


def secrets_in(table: Table) -> list[bytes]:
    """What the public tier must never carry before the result: roles by id and by name, night records."""
    words = {role.value for role in Role} | {i18n.role_name(table.language, table.ruleset, role) for role in Role}
    words |= {'"nights"', '"shots"', '"checks"', '"heals"', '"role"', '"team"'}
    return [word.encode() for word in words]


async def test_each_tier_over_a_whole_game_in_the_browser() -> None:
    clock = ScriptedClock()
    stream_clock = ManualClock()
    async with harness(
        10, time_scale=1.0, rate_scale=0.02, emulator_config=FAST_GLOBAL, seed=7, clock=lambda: clock,
        config={"web": {"enabled": True, "port": 0}},
    ) as h, chromium() as browser:
        stream_of(h).clock = stream_clock
        for person, name in zip(h.players, HOSTILE, strict=False):
            h.env.guild.members[person.id].nick = name
        table = await open_table(h, "classic", 10)
        reply = await h.judge.run_command(h.env.text, "mafia broadcast")
        assert reply.ephemeral, reply.content
        urls = links(reply.content)
        assert "120 s" in reply.content

        public_bytes = Recorder(urls["public"], stream_clock)
        delayed = Recorder(urls["broadcast"], stream_clock)
        recorders = [asyncio.ensure_future(public_bytes.run()), asyncio.ensure_future(delayed.run())]
        dialogs: list[str] = []
        pages = {}
        for tier in ("public", "broadcast", "judge", "public_strip"):
            page = await browser.new_page(viewport={"width": 1920, "height": 1080})
            page.on("dialog", lambda d: dialogs.append(d.message))
            await page.goto(urls[tier])
            pages[tier] = page

        driver = Driver(h, table, Strategy(7), clock=clock)
        await driver.look_at_cards()
        phases: list[Phase] = []
        delay_checked = False
        taken: set[str] = set()
        while not table.done.is_set():
            phase = table.game.state.phase
            if not phases or phases[-1] is not phase:
                phases.append(phase)
                await check_public(pages["public"], table)
                await check_judge(pages["judge"], table)
                if stream_clock.time() < 120:  # nothing the broadcast tier has is old enough yet
                    assert await pages["broadcast"].locator(".role").count() == 0
                    delay_checked = True
                shot = {(Phase.SPEECHES, 1): ("public", "circle"), (Phase.VOTING, 1): ("public_strip", "strip"),
                        (Phase.SPEECHES, 2): ("judge", "judge")}.get((phase, table.game.state.day))
                if shot is not None and shot[1] not in taken and os.environ.get("MAFIABOT_SCREENSHOTS") == "1":
                    taken.add(shot[1])
                    await pages[shot[0]].screenshot(path=str(IMAGES / f"{shot[1]}.png"), omit_background=True)
            await driver.step()
            stream_clock.advance(max(0.0, clock.time() - stream_clock.time()))
        assert {Phase.NIGHT_ZERO, Phase.SPEECHES, Phase.VOTING, Phase.NIGHT} <= set(phases), phases
        assert delay_checked

        await check_public(pages["public"], table)
        await seen(pages["public"], "() => document.querySelectorAll('.role').length === 10")
        stream_clock.advance(120)
        await seen(pages["broadcast"], "() => !document.getElementById('result').hidden")
        broadcast_roles = await pages["broadcast"].eval_on_selector_all(".role", "n => n.map(x => x.dataset.role)")
        assert broadcast_roles == [table.role_at(s).value for s in range(1, 11)]

        # The hostile names are text: the markup is shown, not run, and nothing was injected.
        names = await pages["public"].eval_on_selector_all(".seat .name", "n => n.map(x => x.textContent)")
        assert set(HOSTILE) <= set(names)
        assert dialogs == []
        assert await pages["public"].locator("img").count() == 0

        # The links show the result for an hour on the stream's clock, then close and stop opening.
        token = urls["public"].rsplit("/", 2)[1]
        link = await h.store.streams.stream_link(token)
        assert link is not None
        assert link.expires_at is not None
        assert link.expires_at - timedelta(hours=1) <= stream_clock.wall(stream_clock.time())
        feed = stream_of(h).feeds[table.id]
        async with aiohttp.ClientSession() as session, session.get(urls["public"]) as response:
            assert response.status == 200
        stream_clock.advance(3600)
        await seen(pages["public"], "() => document.body.dataset.state === 'closed'")
        async with aiohttp.ClientSession() as session, session.get(urls["public"]) as response:
            assert response.status == 410
        await asyncio.wait_for(asyncio.gather(*recorders), 30)  # their streams ended with the links

    # Every byte the public tier sent before the result: no role, no night's record.
    assert public_bytes.status == 200
    before = [frame for _, _, frame in public_bytes.frames if frame["result"] is None]
    assert before
    text = b"".join(json.dumps(f, ensure_ascii=False).encode() for f in before)
    raw = bytes(public_bytes.raw)
    raw_until_result = raw[: raw.rfind(b"\nid: ", 0, raw.index(b'"result":{'))]  # up to the result's frame
    assert raw_until_result.count(b"\nid: ") == len(before)
    for secret in secrets_in(table):
        assert secret not in raw_until_result, secret
        assert secret not in text, secret
    # Nor when: a night's shots and checks change nothing public, so they send the public tier nothing.
    bodies = [json.dumps(frame, sort_keys=True) for _, _, frame in public_bytes.frames]
    repeated = [i for i in range(1, len(bodies)) if bodies[i] == bodies[i - 1]]
    assert repeated == [], "a public frame sent again with nothing new in it tells when someone acted at night"
    # The broadcast tier got each frame no sooner than its delay after it was made.
    made = {frame.id: frame.at for frame in feed.frames}
    assert delayed.frames
    for frame_id, got_at, _ in delayed.frames:
        assert got_at >= made[frame_id] + 120


async def test_a_revoked_link_closes_its_open_stream_and_opens_no_more() -> None:
    async with harness(
        10, emulator_config=FAST_GLOBAL, config={"web": {"enabled": True, "port": 0}},
    ) as h, chromium() as browser:
        await open_table(h, "classic", 10)
        urls = links((await h.judge.run_command(h.env.text, "mafia broadcast", delay=0)).content)
        page = await browser.new_page()
        await page.goto(urls["public"])
        await seen(page, "() => document.body.dataset.state === 'live'")
        refused = await h.players[0].run_command(h.env.text, "mafia broadcast", revoke=True)
        assert refused.content == i18n.t("en", "error.table.not_judge")
        answer = await h.judge.run_command(h.env.text, "mafia broadcast", revoke=True)
        assert answer.content == "Closed 3 stream links."
        await seen(page, "() => document.body.dataset.state === 'closed'")
        async with aiohttp.ClientSession() as session:
            for url in urls.values():
                async with session.get(url) as response:
                    assert response.status == 410
                async with session.get(url + "/events") as response:
                    assert response.status == 410


async def test_a_stream_resumes_from_its_last_id_without_a_gap_or_a_repeat() -> None:
    async with harness(
        10, emulator_config=FAST_GLOBAL, config={"web": {"enabled": True, "port": 0}},
    ) as h:
        table = await open_table(h, "classic", 10)
        urls = links((await h.judge.run_command(h.env.text, "mafia broadcast", delay=0)).content)
        async with aiohttp.ClientSession() as session:
            async with session.get(urls["public"] + "/events") as response:
                assert response.headers["Content-Security-Policy"].startswith("default-src 'none'")
                first = await _next_event(response)
            # The same id again: nothing until the table moves, then exactly the next frame.
            async with session.get(urls["public"] + "/events", headers={"Last-Event-ID": first[0]}) as response:
                waiting = asyncio.ensure_future(_next_event(response))
                await asyncio.sleep(0)
                assert not waiting.done()
                await h.judge.run_command(h.env.text, "mafia foul", seat=1)
                following = await asyncio.wait_for(waiting, 30)
                assert int(following[0]) > int(first[0])
                assert json.loads(following[1])["frame"]["seats"][0]["fouls"] == 1
            # An older id: the newest frame at once, which holds everything missed.
            async with session.get(urls["public"] + "/events", headers={"Last-Event-ID": first[0]}) as response:
                caught = await _next_event(response)
                assert caught[0] == following[0]
        assert table.game.state.foul_count(1) == 1


class Drawings:
    """How many public frames were drawn: the drawing wrapped where ``modules`` call it."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *modules: Any) -> None:
        self.count = 0
        draw = frames_module.public_frame

        def counted(*args: Any, **kwargs: Any) -> dict[str, Any]:
            self.count += 1
            return draw(*args, **kwargs)

        for module in modules:
            monkeypatch.setattr(module, "public_frame", counted)


async def test_many_viewers_of_a_table_cost_one_drawing_per_frame_and_no_timer_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A frame is drawn once for every viewer and both kinds of tier; a waiting stream arms no timer, and
    the heartbeat's tick leaves the streams just fed alone.

    A timer per wait (its heartbeat) was armed and dropped once per frame and viewer: thousands a second
    with a club's tables on stream, lingering long enough to reach the collector's oldest generation,
    whose full collections then stalled every table's floor changes at once.
    """
    viewers = 20
    drawings = Drawings(monkeypatch, feed_module, frames_module)
    async with harness(
        10, emulator_config=FAST_GLOBAL, config={"web": {"enabled": True, "port": 0}},
    ) as h:
        table = await open_table(h, "classic", 10)
        urls = links((await h.judge.run_command(h.env.text, "mafia broadcast", delay=0)).content)
        feed = stream_of(h).feeds[table.id]
        async with aiohttp.ClientSession() as session:
            streams = [await session.get(urls["public"] + "/events") for _ in range(viewers)]
            first = [await _next_event(stream) for stream in streams]
            loop = asyncio.get_running_loop()
            arm = loop.call_at
            armed = 0

            def call_at(when: float, *args: Any, **kwargs: Any) -> asyncio.TimerHandle:
                nonlocal armed
                armed += HEARTBEAT_SECONDS - 1 <= when - loop.time() <= HEARTBEAT_SECONDS
                return arm(when, *args, **kwargs)

            monkeypatch.setattr(loop, "call_at", call_at)
            drawings.count, made = 0, len(feed.frames)
            await h.judge.run_command(h.env.text, "mafia foul", seat=1)
            following = [await asyncio.wait_for(_next_event(stream), 30) for stream in streams]
            stream_of(h)._heartbeat()  # streams just fed need no comment line: a tick wakes none of them
            assert not any(viewer.wake.is_set() for viewer in feed.viewers)
            monkeypatch.undo()
            for stream in streams:
                stream.close()
        assert all(int(then[0]) > int(before[0]) for before, then in zip(first, following, strict=True))
        assert len(feed.frames) > made
        assert drawings.count == len(feed.frames) - made
        assert armed <= 1, f"{armed} timers armed for {viewers} waiting streams"
        assert table.game.state.foul_count(1) == 1


async def test_a_command_returns_before_its_frame_is_drawn_and_moves_before_the_drawing_make_one_frame(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The frame is drawn in the loop's next turn, not inside the table's command.

    Drawn inside it, every command of a streamed table (each floor change) waited for its frame, and
    with fifty tables on stream one table's command waited for the others' frames too.
    """
    drawings = Drawings(monkeypatch, feed_module)
    clock = ScriptedClock()  # no timer of the table runs out while the test looks: only its commands move it
    async with on_stream(clock) as h:
        table = await open_table(h, "classic", 10)
        await h.judge.run_command(h.env.text, "mafia broadcast", delay=0)
        feed = stream_of(h).feeds[table.id]
        feed.draw()  # anything still owed is drawn now
        drawings.count = 0
        await table.submit(GiveFoul(seat=1))
        assert drawings.count == 0, "the frame was drawn inside the command"
        assert feed.frames[-1].id < len(table.game.events) * 1000
        feed.update()  # moves coming before the drawing are drawn once, as one frame
        feed.update()
        await asyncio.sleep(0)  # one turn of the loop: the drawing scheduled before it has run
        assert drawings.count == 1
        assert feed.frames[-1].id == len(table.game.events) * 1000
        assert json.loads(feed.frames[-1].public)["seats"][0]["fouls"] == 1


async def test_a_table_s_many_viewers_are_woken_a_slice_at_a_time() -> None:
    """A frame wakes its viewers a slice per turn of the loop, and so does the heartbeat: whatever came due
    meanwhile runs in between.

    Woken all at once, a table with hundreds of viewers wrote to all of them in one burst, and a
    command of another table due then waited behind every write.
    """
    clock = ScriptedClock()
    async with on_stream(clock) as h:
        table = await open_table(h, "classic", 10)
        await h.judge.run_command(h.env.text, "mafia broadcast", delay=0)
        feed = stream_of(h).feeds[table.id]
        viewers = [feed.join("judge", 0.0, -1) for _ in range(3 * WAKE_SLICE)]
        for viewer in viewers:
            viewer.wake.clear()
        between: list[int] = []
        await table.submit(GiveFoul(seat=1))  # its frame is drawn in the next turn, before this count
        asyncio.get_running_loop().call_soon(lambda: between.append(sum(v.wake.is_set() for v in viewers)))
        for _ in range(len(viewers)):  # turns of the loop, not time: three slices take three
            await asyncio.sleep(0)
            if all(viewer.wake.is_set() for viewer in viewers):
                break
        assert between == [WAKE_SLICE], "every viewer was woken in one turn of the loop"
        assert all(viewer.wake.is_set() for viewer in viewers)

        # The heartbeat's tick, when all these streams have been quiet: the same slices.
        server = stream_of(h)
        server._open["quiet"] = set(viewers)
        for viewer in viewers:
            viewer.wake.clear()
        server._heartbeat()
        assert sum(viewer.wake.is_set() for viewer in viewers) == WAKE_SLICE, "the heartbeat woke every stream at once"
        for _ in range(len(viewers)):
            await asyncio.sleep(0)
            if all(viewer.wake.is_set() for viewer in viewers):
                break
        assert all(viewer.wake.is_set() for viewer in viewers)
        del server._open["quiet"]
        for viewer in viewers:
            feed.leave(viewer)


async def test_an_extend_a_pause_and_a_resume_reach_the_feed_at_once_with_the_new_end() -> None:
    clock = ScriptedClock()
    async with on_stream(clock) as h:
        table = await open_table(h, "classic", 10)
        await skip_night_zero(h, table)
        urls = links((await h.judge.run_command(h.env.text, "mafia broadcast", delay=0)).content)
        async with aiohttp.ClientSession() as session, session.get(urls["public"] + "/events") as response:
            first = json.loads((await _next_event(response))[1])["frame"]
            left = first["left"]
            assert first["floor"] == table.game.state.floor.seat  # type: ignore[union-attr]
            assert left == table.remaining()
            # Nothing else happens at the table: only the extend itself can send the next frame.
            await h.judge.run_command(h.env.text, "mafia clock extend", seconds=30)
            extended = json.loads((await asyncio.wait_for(_next_event(response), 30))[1])["frame"]
            assert extended["left"] == left + 30
            await h.judge.run_command(h.env.text, "mafia clock pause")
            paused = json.loads((await asyncio.wait_for(_next_event(response), 30))[1])["frame"]
            assert (paused["paused"], paused["left"]) == (True, left + 30)
            await h.judge.run_command(h.env.text, "mafia clock resume")
            resumed = json.loads((await asyncio.wait_for(_next_event(response), 30))[1])["frame"]
            assert (resumed["paused"], resumed["left"]) == (False, left + 30)


async def _next_event(response: aiohttp.ClientResponse) -> tuple[str, str]:
    block: dict[str, str] = {}
    async for line in response.content:
        text = line.decode().rstrip("\n")
        if not text:
            if "data" in block:
                return block["id"], block["data"]
            block = {}
            continue
        if ": " in text and not text.startswith(":"):
            key, value = text.split(": ", 1)
            block[key] = value
    raise AssertionError("the stream ended")


async def test_the_overlay_comes_back_by_itself_after_the_bot_restarts() -> None:
    async with harness(
        10, emulator_config=FAST_GLOBAL, config={"web": {"enabled": True, "port": 0}},
    ) as h, chromium() as browser:
        table = await open_table(h, "classic", 10)
        urls = links((await h.judge.run_command(h.env.text, "mafia broadcast", delay=0)).content)
        page = await browser.new_page()
        await page.goto(urls["public"])
        await seen(page, "() => document.body.dataset.state === 'live'")
        old = stream_of(h)
        port = int(urls["public"].split(":")[2].split("/")[0])

        # The process stops: its streams end without a word, its tables stop; a new process recovers them.
        await old.close()
        table.stop()
        await table.voice.close()
        restarted = h.bot.build_tables()
        h.bot.tables = restarted
        await restarted.recover()
        server = StreamServer(h.store.streams, restarted, base_url=old.base_url)
        h.bot.stream = server
        assert await server.start("127.0.0.1", port) == port
        try:
            await h.judge.run_command(h.env.text, "mafia foul", seat=1)
            await seen(page, "() => document.querySelector('.seat[data-seat=\"1\"] .foul[data-on=true]') !== null")
            assert await page.evaluate("document.body.dataset.state") == "live"
        finally:
            await server.close()


async def test_after_a_restart_the_broadcast_tier_goes_on_with_its_delay_and_no_gap() -> None:
    clock, stream_clock = ScriptedClock(), ManualClock()

    def both(seconds: float) -> None:  # the table's time and the stream's run together, as in one process
        clock.advance(seconds)
        stream_clock.advance(seconds)

    async with on_stream(clock) as h:
        old = stream_of(h)
        old.clock = stream_clock
        table = await open_table(h, "classic", 10)
        urls = links((await h.judge.run_command(h.env.text, "mafia broadcast")).content)  # held back 120 s
        await skip_night_zero(h, table)
        for seat in (1, 2, 3):  # a frame every 15 s, all still owed to the broadcast tier at the restart
            both(15)
            await h.judge.run_command(h.env.text, "mafia foul", seat=seat)
        both(15)
        await h.judge.run_command(h.env.text, "mafia clock pause")  # nothing runs out while the test looks
        both(20)  # the restart comes a while after the last command: its frame keeps the command's time
        before = old.feeds[table.id]
        assert before.frame_for("broadcast", 120) is None  # nothing was old enough yet
        port = int(urls["broadcast"].split(":")[2].split("/")[0])

        await old.close()  # the process stops; a new one recovers the table from the store
        table.stop()
        await table.voice.close()
        restarted = h.bot.build_tables()
        h.bot.tables = restarted
        await restarted.recover()
        server = StreamServer(h.store.streams, restarted, base_url=old.base_url, clock=stream_clock)
        h.bot.stream = server
        assert await server.start("127.0.0.1", port) == port
        try:
            both(60)  # the first frames of before the restart come due 120 s after they were made
            async with aiohttp.ClientSession() as session, session.get(urls["broadcast"] + "/events") as response:
                shown = await asyncio.wait_for(_next_event(response), 30)  # at once, not 120 s after the restart
            due = before.frame_for("broadcast", 120)
            assert due is not None
            assert int(shown[0]) == due.id
            assert json.loads(shown[1])["frame"] == json.loads(due.secret)
            feed = server.feeds[table.id]
            for _ in range(6):  # every moment of the delay shows what it would have shown with no restart
                expected, got = before.frame_for("broadcast", 120), feed.frame_for("broadcast", 120)
                assert expected is not None
                assert got is not None
                assert (got.id, json.loads(got.secret)) == (expected.id, json.loads(expected.secret))
                both(10)
        finally:
            await server.close()


async def test_the_overlay_speaks_the_tables_language_and_a_link_holds_only_so_many_streams() -> None:
    async with harness(
        10, emulator_config=FAST_GLOBAL,
        config={"game": {"language": "ka"}, "web": {"enabled": True, "port": 0, "viewers_per_link": 1}},
    ) as h, chromium() as browser:
        await open_table(h, "classic", 10)
        urls = links((await h.judge.run_command(h.env.text, "mafia broadcast")).content)
        page = await browser.new_page()
        await page.goto(urls["judge"])
        await seen(page, "() => document.body.dataset.state === 'live'")
        assert await page.evaluate("document.documentElement.lang") == "ka"
        assert i18n.t("ka", "phase.night_zero") in (await page.text_content("#phase") or "")
        async with aiohttp.ClientSession() as session, session.get(urls["judge"] + "/events") as second:
            assert second.status == 503
            assert second.headers["Retry-After"]
        async with aiohttp.ClientSession() as session, session.get(urls["public"] + "/strings.json") as strings:
            assert (await strings.json())["stream.vote"] == i18n.t("ka", "stream.vote")


async def test_a_flood_over_many_links_stops_at_the_process_s_total() -> None:
    """Each link holds its share, and all links together no more than ``[web] viewers``: one more is told to retry.

    A stream its viewer closed frees its place once the server next writes to it (the heartbeat at
    the latest), so the test does not count on that moment.
    """
    async with harness(
        10, emulator_config=FAST_GLOBAL,
        config={"web": {"enabled": True, "port": 0, "viewers_per_link": 5, "viewers": 2}},
    ) as h, aiohttp.ClientSession() as session:
        await open_table(h, "classic", 10)
        urls = links((await h.judge.run_command(h.env.text, "mafia broadcast")).content)
        async with session.get(urls["public"] + "/events") as first, session.get(urls["judge"] + "/events") as second:
            assert (first.status, second.status) == (200, 200)
            async with session.get(urls["broadcast"] + "/events") as third:
                assert third.status == 503
                assert third.headers["Retry-After"]
            async with session.get(urls["public"] + "/events") as fourth:
                assert fourth.status == 503  # its own link has room: the process has none


async def test_broadcast_says_so_when_the_stream_server_is_off() -> None:
    async with harness(10, emulator_config=FAST_GLOBAL) as h:
        await open_table(h, "classic", 10)
        assert h.bot.stream is None
        answer = await h.judge.run_command(h.env.text, "mafia broadcast")
        assert answer.ephemeral
        assert answer.content == i18n.t("en", "error.broadcast.off")
