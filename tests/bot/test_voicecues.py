"""The host's voice at a table: which cue plays when, one at a time, and a game that never waits for voice.

A fake voice client stands in for discord.py's: it records every source it is given and fails the
test if a second one starts while the first still plays. The emulator ignores the voice gateway, so
against it a real connection always fails: the game must go on and the judge hear about it once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import discord
import pytest

from engine import Cause, FloorKind, VoteKind
from engine import events as ev
from mafiabot.core.clock import ManualClock
from mafiabot.emulator.testing import assert_no_spec_violations
from mafiabot.host import voicecues
from mafiabot.host.audio import FRAME_BYTES, Cue, cues_for, pcm, silence
from mafiabot.host.voicecues import CueSource, Speaker, VoiceCues, VoiceUnavailableError
from mafiabot.testing import Driver, Strategy, harness, open_table
from tests.harness import FAST_GLOBAL as FAST


class FakeVoiceClient:
    """Plays nothing; a source "plays" until it is stopped or the test calls ``finish()``."""

    def __init__(self, *, fail_play: bool = False, auto_finish: bool = False, stuck: bool = False) -> None:
        self.auto_finish = auto_finish
        self.stuck = stuck
        """A stopped source lets go of the connection but never reports its end (a player thread that hangs)."""
        self.stopped = asyncio.Event()
        self.log: list[tuple[str, Any]] = []
        self.sources: list[CueSource] = []
        self.fail_play = fail_play
        self.disconnected = False
        self._after: Callable[[Exception | None], Any] | None = None
        self._new = asyncio.Event()

    def play(self, source: discord.AudioSource, *, after: Callable[[Exception | None], Any] | None = None) -> None:
        assert self._after is None, "a cue started while another one was playing"
        assert not self.disconnected
        if self.fail_play:
            raise discord.ClientException("Not connected to voice.")
        assert isinstance(source, CueSource)
        self.sources.append(source)
        self.log.append(("play", source.cues))
        self._after = after
        self._new.set()
        if self.auto_finish:
            asyncio.get_running_loop().call_soon(self.finish)

    def stop(self) -> None:
        self.log.append(("stop", None))
        self.stopped.set()
        if self.stuck:
            self._after = None
        else:
            self._end()

    def finish(self) -> None:
        """The source played to its end."""
        self._end()

    def _end(self) -> None:
        after, self._after = self._after, None
        if after is not None:
            after(None)

    def is_playing(self) -> bool:
        return self._after is not None

    async def disconnect(self, *, force: bool = False) -> None:
        if self.is_playing():
            self.stop()
        self.disconnected = True
        self.log.append(("disconnect", None))

    async def played(self, count: int) -> list[tuple[Cue, ...]]:
        """Wait until ``count`` sources have started; their cues."""
        while len(self.sources) < count:
            self._new.clear()
            await self._new.wait()
        return [s.cues for s in self.sources]


class Judge:
    def __init__(self) -> None:
        self.told: list[str] = []
        self.heard = asyncio.Event()

    async def __call__(self, reason: str) -> None:
        self.told.append(reason)
        self.heard.set()


def make_cues(
    client: FakeVoiceClient | None = None, *, judge: Judge | None = None, connect: Any = None,
    speaker: Speaker | None = None, libraries: Any = lambda: None, clock: ManualClock | None = None,
) -> VoiceCues:
    async def connector(seconds: float) -> FakeVoiceClient:
        assert seconds == 20.0
        assert client is not None
        return client

    return VoiceCues(
        language="en", clock=clock or ManualClock(), connector=connect or connector, notify=judge or Judge(),
        speaker=speaker, libraries=libraries,
    )


EVENTS: list[tuple[list[ev.Event], tuple[Cue, ...]]] = [
    ([ev.NightFell(night=0)], (Cue.NIGHT,)),
    ([ev.NightResolved(night=1, mafia_target=3, maniac_target=None, healed=None, killed=(3,)),
      ev.DayStarted(day=2, opener=4, vote_cancelled=False)], (Cue.DAY, Cue.LEAVES)),
    ([ev.FloorEnded(seat=4, reason="timeout"), ev.FloorGiven(turn=ev.Turn(5, FloorKind.SPEECH, 60))],
     (Cue.TIME_UP,)),
    ([ev.VotingStarted(kind=VoteKind.MAIN, candidates=(2, 6))], (Cue.VOTE,)),
    ([ev.LiftVoteStarted(seats=(2, 6))], (Cue.VOTE,)),
    ([ev.PlayersVotedOut(seats=(6,), cause=Cause.VOTED_OUT), ev.NightFell(night=2)], (Cue.LEAVES, Cue.NIGHT)),
    ([ev.PlayerRemoved(seat=7, cause=Cause.FOULS, cancels="none")], (Cue.LEAVES,)),
]


async def test_each_event_plays_its_cue_one_at_a_time_and_a_new_one_stops_the_stale_one() -> None:
    client = FakeVoiceClient()
    cues = make_cues(client)
    cues.start()
    for index, (events, expected) in enumerate(EVENTS, 1):
        cues.on_events(events)
        played = await client.played(index)
        assert played[-1] == expected
        assert client.sources[-1].data == b"".join(pcm(c) for c in expected)
    cues.warning()
    assert (await client.played(len(EVENTS) + 1))[-1] == (Cue.TEN_SECONDS,)
    # Every cue after the first found the one before still playing: stopped first, then the new one.
    kinds = [kind for kind, _ in client.log]
    assert kinds == ["play"] + ["stop", "play"] * len(EVENTS)
    client.finish()
    await cues.close()
    assert client.disconnected
    assert cues.failure is None


async def test_events_without_a_public_sound_play_nothing() -> None:
    client = FakeVoiceClient()
    cues = make_cues(client)
    cues.start()
    cues.on_events([ev.ShotFired(seat=1, target=3), ev.Healed(seat=2, target=3)])
    cues.on_events([ev.FloorEnded(seat=1, reason="thanks")])
    cues.on_events([ev.NightFell(night=1)])
    assert await client.played(1) == [(Cue.NIGHT,)]
    client.finish()
    await cues.close()
    assert [kind for kind, _ in client.log] == ["play", "disconnect"]


async def test_stale_cues_waiting_behind_a_newer_one_are_dropped() -> None:
    client = FakeVoiceClient()
    cues = make_cues(client)
    # Queued before the player task runs at all: only the newest is still worth playing.
    cues.on_events([ev.NightFell(night=0)])
    cues.on_events([ev.DayStarted(day=1, opener=1, vote_cancelled=False)])
    cues.warning()
    cues.start()
    assert await client.played(1) == [(Cue.TEN_SECONDS,)]
    client.finish()
    await cues.close()
    assert [s.cues for s in client.sources] == [(Cue.TEN_SECONDS,)]


async def test_the_last_cue_is_heard_to_its_end_before_the_bot_leaves() -> None:
    client = FakeVoiceClient()
    cues = make_cues(client)
    cues.start()
    cues.on_events([ev.PlayersVotedOut(seats=(3,), cause=Cause.VOTED_OUT)])
    await client.played(1)
    closing = asyncio.create_task(cues.close())
    client.finish()
    await closing
    # Nothing was cut short: the cue ended by itself, then the bot left.
    assert [kind for kind, _ in client.log] == ["play", "disconnect"]


class CannedSpeaker(Speaker):
    """A synthesizer that says every text as 0.5 s of silence, and counts what it was asked."""

    def __init__(self) -> None:
        super().__init__("canned")
        self.asked: list[tuple[str, str]] = []

    async def _synthesize(self, executable: str, language: str, text: str) -> bytes | None:
        self.asked.append((language, text))
        return silence(0.5)


async def test_spoken_announcements_follow_their_tone_and_are_synthesized_once() -> None:
    client = FakeVoiceClient()
    speaker = CannedSpeaker()
    cues = make_cues(client, speaker=speaker)
    cues.start()
    cues.on_events([ev.NightFell(night=0)])
    await client.played(1)
    cues.on_events([ev.NightFell(night=1)])
    await client.played(2)
    expected = pcm(Cue.NIGHT) + silence(voicecues.GAP) + silence(0.5)
    assert client.sources[0].data == client.sources[1].data == expected
    assert len(expected) % FRAME_BYTES == 0
    assert sorted(speaker.asked) == sorted(("en", voicecues.spoken_text("en", c)) for c in Cue)
    client.finish()
    await cues.close()


@pytest.mark.parametrize("reason", ["opus", "davey", "nacl"])
async def test_a_missing_library_turns_the_cues_off_and_tells_the_judge_once(reason: str) -> None:
    judge = Judge()
    connected: list[float] = []

    async def connect(seconds: float) -> FakeVoiceClient:
        connected.append(seconds)
        return FakeVoiceClient()

    cues = make_cues(judge=judge, connect=connect, libraries=lambda: VoiceUnavailableError(reason, "missing"))
    cues.start()
    cues.on_events([ev.NightFell(night=0)])
    await cues.close()
    cues.on_events([ev.NightFell(night=1)])
    cues.warning()
    assert judge.told == [reason]
    assert connected == []
    assert cues.failure is not None
    assert cues.failure.reason == reason
    assert not cues.active


@pytest.mark.parametrize(
    ("error", "reason"),
    [(TimeoutError(), "timeout"), (discord.ClientException("Already connected"), "error"),
     (RuntimeError("davey library needed"), "error"), (VoiceUnavailableError("busy"), "busy")],
)
async def test_a_failed_connection_turns_the_cues_off_and_tells_the_judge_once(error: Exception, reason: str) -> None:
    judge = Judge()

    async def connect(seconds: float) -> FakeVoiceClient:
        raise error

    cues = make_cues(judge=judge, connect=connect)
    cues.start()
    cues.on_events([ev.NightFell(night=0)])
    await cues.close()
    assert judge.told == [reason]


async def test_a_connection_lost_mid_game_tells_the_judge_once_and_stays_silent() -> None:
    judge = Judge()
    client = FakeVoiceClient(fail_play=True)
    cues = make_cues(client, judge=judge)
    cues.start()
    cues.on_events([ev.NightFell(night=0)])
    cues.on_events([ev.NightFell(night=1)])
    await cues.close()
    assert judge.told == ["lost"]
    assert client.disconnected


async def test_a_judge_who_cannot_be_told_does_not_stop_anything() -> None:
    async def unreachable(reason: str) -> None:
        raise RuntimeError("no way to reach the judge")

    async def connect(seconds: float) -> FakeVoiceClient:
        raise TimeoutError

    cues = VoiceCues(language="en", clock=ManualClock(), connector=connect, notify=unreachable, libraries=lambda: None)
    cues.start()
    await cues.close()
    assert cues.failure is not None


def test_every_reason_has_words_in_every_language() -> None:
    for language in ("en", "ru", "ka"):
        texts = {voicecues.reason_text(language, reason) for reason in voicecues.REASONS}
        assert len(texts) == len(voicecues.REASONS)


# -- whole games against the emulator -----------------------------------------------------------------


def notices(messages: list[Any]) -> list[str]:
    return [m.content for m in messages if m.content.startswith("🔇")]


async def test_a_failing_voice_connection_does_not_disturb_a_whole_game() -> None:
    async with harness(10, emulator_config=FAST, config={"voice": {"cues": True}}) as h:
        table = await open_table(h, "classic", 10)
        assert isinstance(table.cues, VoiceCues)
        # The emulator never answers the voice gateway: the connection gives up after its real-time
        # timeout and the judge hears once. Waited for first: on the scripted clock the whole game
        # could end before that timeout, and the end stops the cues without a failure.
        told = await h.wait(lambda: notices(h.judge.dm_messages(h.env.app)))
        assert table.cues.failure is not None
        await Driver(h, table, Strategy(3)).play()
        await table.done.wait()
        assert table.game.outcome() is not None
        stored = await h.store.get_game(table.id)
        assert stored.status == "finished"
        told = notices(h.judge.dm_messages(h.env.app))
        assert len(told) == 1
        assert "Voice cues are off for this game" in told[0]
        assert table.cues.judge_told == 1
        assert notices(h.emu.messages(h.env.text)) == []
        assert h.bot.voice_clients == []
        assert_no_spec_violations(h.emu)


async def test_a_judge_with_closed_dms_is_told_in_the_tables_channel() -> None:
    async with harness(10, emulator_config=FAST, config={"voice": {"cues": True}}) as h:
        h.judge.close_dms()
        table = await open_table(h, "classic", 10)
        said = await h.wait(lambda: [m for m in h.emu.messages(h.env.text) if "Voice cues are off" in m.content])
        assert said[0].content.startswith(f"<@{h.judge.id}>, a note for the judge: 🔇")
        await h.judge.run_command(h.env.text, "mafia cancel")
        await table.done.wait()
        assert len([m for m in h.emu.messages(h.env.text) if "Voice cues are off" in m.content]) == 1
        assert h.judge.dm_messages(h.env.app) == []


async def test_cues_stay_off_when_the_server_turned_them_off() -> None:
    async with harness(10, emulator_config=FAST, config={"voice": {"cues": True}}) as h:
        settings = await h.store.get_settings(h.env.guild.id)
        await h.store.save_settings(replace(settings, voice_cues=False))
        table = await open_table(h, "classic", 10)
        assert table.cues is None


async def test_a_whole_game_with_a_working_connection_plays_its_cues(monkeypatch: pytest.MonkeyPatch) -> None:
    clients: list[FakeVoiceClient] = []

    def connector(client: Any, table: Any) -> Any:
        async def connect(seconds: float) -> FakeVoiceClient:
            clients.append(FakeVoiceClient(auto_finish=True))
            return clients[-1]

        return connect

    scheduled: list[tuple[Cue, ...]] = []
    on_events, warning = VoiceCues.on_events, VoiceCues.warning

    def record_events(self: VoiceCues, events: Any) -> None:
        if cues_for(events):
            scheduled.append(cues_for(events))
        on_events(self, events)

    def record_warning(self: VoiceCues) -> None:
        scheduled.append((Cue.TEN_SECONDS,))
        warning(self)

    monkeypatch.setattr(voicecues, "voice_connector", connector)
    monkeypatch.setattr(voicecues, "missing_library", lambda: None)
    monkeypatch.setattr(VoiceCues, "on_events", record_events)
    monkeypatch.setattr(VoiceCues, "warning", record_warning)
    async with harness(10, emulator_config=FAST, config={"voice": {"cues": True}}) as h:
        table = await open_table(h, "classic", 10)
        cues = table.cues
        assert isinstance(cues, VoiceCues)
        await Driver(h, table, Strategy(3)).play()
        await table.done.wait()
        client = clients[0]
        assert len(clients) == 1
        assert client.disconnected
        played = [s.cues for s in client.sources]
        assert played
        # Everything played was scheduled, in order (a stale cue may be skipped, never reordered).
        it = iter(scheduled)
        assert all(any(p == s for s in it) for p in played)
        flat = {c for batch in scheduled for c in batch}
        assert {Cue.DAY, Cue.VOTE, Cue.LEAVES} <= flat
        assert cues.failure is None
        assert h.judge.dm_messages(h.env.app) == []


def test_mafiabot_check_reports_the_voice_libraries_and_speech(monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from mafiabot.tools.check import Report, check_voice_libraries

    report = Report()
    check_voice_libraries(report, cues=True)
    found = {f.topic: f for f in report.findings}
    assert found["PyNaCl"].ok
    assert found["davey"].ok
    assert found["espeak-ng"].ok == (shutil.which("espeak-ng") is not None)
    assert report.ok
    # Without a synthesizer: a note, never a reason to refuse (the cues are tones only).
    monkeypatch.setattr(shutil, "which", lambda name: None)
    report = Report()
    check_voice_libraries(report, cues=True)
    speech = next(f for f in report.findings if f.topic == "espeak-ng")
    assert not speech.ok
    assert not speech.required
    assert report.ok


async def test_a_stopped_cue_that_never_ends_holds_the_next_one_for_the_stop_timeout_of_the_tables_clock() -> None:
    clock = ManualClock()
    client = FakeVoiceClient(stuck=True)
    cues = make_cues(client, clock=clock)
    cues.start()
    cues.on_events([ev.NightFell(night=0)])
    await client.played(1)
    cues.on_events([ev.DayStarted(day=1, opener=1, vote_cancelled=False)])
    await client.stopped.wait()
    clock.advance(voicecues.STOP_TIMEOUT)
    assert await client.played(2) == [(Cue.NIGHT,), (Cue.DAY,)]
    assert cues.failure is None
    client.finish()
    await cues.close()
    assert client.disconnected


async def test_a_connection_that_outlasts_its_timeout_on_the_tables_clock_turns_the_cues_off() -> None:
    judge, clock = Judge(), ManualClock()
    asked = asyncio.Event()
    never: asyncio.Future[FakeVoiceClient] = asyncio.get_running_loop().create_future()

    async def connect(seconds: float) -> FakeVoiceClient:  # a connector that ignores its own timeout
        asked.set()
        return await never

    cues = make_cues(judge=judge, connect=connect, clock=clock)
    cues.start()
    await asked.wait()
    clock.advance(voicecues.CONNECT_TIMEOUT + 5)
    await judge.heard.wait()
    assert judge.told == ["timeout"]
    assert never.cancelled()
    assert cues.failure is not None
    await cues.close()


async def test_a_game_that_ends_while_voice_still_connects_tells_nobody() -> None:
    judge = Judge()
    asked = asyncio.Event()
    never: asyncio.Future[FakeVoiceClient] = asyncio.get_running_loop().create_future()

    async def connect(seconds: float) -> FakeVoiceClient:
        asked.set()
        return await never

    cues = make_cues(judge=judge, connect=connect)
    cues.start()
    await asked.wait()
    await cues.close()
    assert judge.told == []
    assert never.cancelled()
