"""The host's sounds: every cue is Discord's PCM, whole frames, and encodes into valid Opus frames.

libopus is a system library. Where it cannot be loaded the encoding tests skip and say why; CI
installs it and sets ``MAFIABOT_REQUIRE_OPUS=1``, which turns that skip into a failure.
Speech needs ``espeak-ng``; its tests skip with a reason when it is absent (CI does not need it).
"""

from __future__ import annotations

import io
import os
import shutil
import struct
import wave
from array import array

import discord
import pytest

from engine import Cause, Phase, VoteKind
from engine import events as ev
from mafiabot.host import audio
from mafiabot.host.audio import FRAME_BYTES, FRAME_SAMPLES, Cue, cue_for, cues_for
from mafiabot.host.voicecues import Speaker, opus_problem, spoken_text
from tests.engine.helpers import ONE_OF_EACH_EVENT

REQUIRE_OPUS = os.environ.get("MAFIABOT_REQUIRE_OPUS") == "1"


@pytest.fixture(scope="module")
def opus() -> None:
    problem = opus_problem()
    if problem is None:
        return
    message = f"libopus cannot be loaded ({problem}); install it (Debian: apt-get install libopus0)"
    if REQUIRE_OPUS:
        pytest.fail(f"MAFIABOT_REQUIRE_OPUS=1 but {message}")
    pytest.skip(message)


def samples(pcm: bytes) -> array[int]:
    values = array("h")
    values.frombytes(pcm)
    return values


# -- the PCM of each cue ----------------------------------------------------------------------------


@pytest.mark.parametrize("cue", list(Cue))
def test_each_cue_is_whole_frames_of_48khz_stereo(cue: Cue) -> None:
    pcm = audio.pcm(cue)
    assert len(pcm) % FRAME_BYTES == 0
    assert FRAME_BYTES == 3840 == FRAME_SAMPLES * 2 * 2
    frames = len(pcm) // FRAME_BYTES
    assert audio.duration(pcm) == pytest.approx(frames * 0.020)
    # Long enough to hear, short enough never to talk over a speech for long.
    assert 0.3 <= audio.duration(pcm) <= 2.0
    # The score's end rounded up to a whole frame: no dropped tail, no padding beyond one frame.
    end = max(n.start + n.length for n in audio.SCORES[cue])
    assert frames == audio.frames_for(end)


@pytest.mark.parametrize("cue", list(Cue))
def test_each_cue_is_audible_identical_in_both_channels_and_never_clips(cue: Cue) -> None:
    values = samples(audio.pcm(cue))
    left, right = values[0::2], values[1::2]
    assert left == right
    peak = max(abs(v) for v in values)
    assert peak == pytest.approx(audio.PEAK * 32767, abs=1)
    # Starts and ends near silence (an envelope, not a click).
    assert abs(left[0]) < 200
    assert abs(left[-1]) < 200


def test_the_cues_sound_different() -> None:
    sounds = {audio.pcm(cue) for cue in Cue}
    assert len(sounds) == len(Cue)


def test_silence_and_padding_are_whole_frames() -> None:
    assert audio.silence(0.15) == bytes(8 * FRAME_BYTES)
    assert len(audio.pad_to_frames(b"\x01\x00" * 10)) == FRAME_BYTES
    assert audio.pad_to_frames(bytes(FRAME_BYTES)) == bytes(FRAME_BYTES)


# -- libopus ---------------------------------------------------------------------------------------


def toc(packet: bytes) -> tuple[int, bool, int]:
    """The Opus TOC byte (RFC 6716 §3.1): configuration, stereo, frame count code."""
    first = packet[0]
    return first >> 3, bool(first & 0x04), first & 0x03


TWENTY_MS_CONFIGS = {3, 7, 11, 13, 15, 19, 23, 27, 31}
"""Opus configurations whose frames last 20 ms (SILK, hybrid and CELT modes)."""


@pytest.mark.parametrize("cue", list(Cue))
def test_each_cue_encodes_with_libopus_into_valid_20ms_stereo_frames(opus: None, cue: Cue) -> None:
    pcm = audio.pcm(cue)
    encoder = discord.opus.Encoder()
    decoder = discord.opus.Decoder()  # type: ignore[no-untyped-call]  # discord.py leaves its __init__ unannotated
    frames = [pcm[i:i + FRAME_BYTES] for i in range(0, len(pcm), FRAME_BYTES)]
    for frame in frames:
        packet = encoder.encode(frame, FRAME_SAMPLES)
        assert 1 <= len(packet) <= FRAME_BYTES
        config, stereo, code = toc(packet)
        assert config in TWENTY_MS_CONFIGS, config
        assert code == 0  # one frame per packet
        assert stereo or len(packet) <= 3  # a near-silent frame may be coded as mono DTX
        assert discord.opus.Decoder.packet_get_nb_frames(packet) == 1
        assert discord.opus.Decoder.packet_get_samples_per_frame(packet) == FRAME_SAMPLES
        assert len(decoder.decode(packet, fec=False)) == FRAME_BYTES


def test_pcm_audio_reads_a_cue_frame_by_frame(opus: None) -> None:
    pcm = audio.pcm(Cue.TEN_SECONDS)
    source = discord.PCMAudio(io.BytesIO(pcm))
    read = []
    while chunk := source.read():
        read.append(chunk)
    assert b"".join(read) == pcm  # nothing lost at the end: whole frames


# -- which cue for which event ----------------------------------------------------------------------


NIGHT_WITH_DEATH = ev.NightResolved(night=1, mafia_target=4, maniac_target=None, healed=None, killed=(4,))
QUIET_NIGHT = ev.NightResolved(night=1, mafia_target=4, maniac_target=None, healed=4, killed=())


@pytest.mark.parametrize(
    ("event", "cue"),
    [
        (ev.NightFell(night=0), Cue.NIGHT),
        (ev.NightFell(night=2), Cue.NIGHT),
        (ev.DayStarted(day=1, opener=1, vote_cancelled=False), Cue.DAY),
        (ev.VotingStarted(kind=VoteKind.MAIN, candidates=(2, 5)), Cue.VOTE),
        (ev.LiftVoteStarted(seats=(2, 5)), Cue.VOTE),
        (ev.PlayersVotedOut(seats=(5,), cause=Cause.VOTED_OUT), Cue.LEAVES),
        (ev.PlayerRemoved(seat=3, cause=Cause.FOULS, cancels="none"), Cue.LEAVES),
        (NIGHT_WITH_DEATH, Cue.LEAVES),
        (QUIET_NIGHT, None),
        (ev.FloorEnded(seat=3, reason="timeout"), Cue.TIME_UP),
        (ev.FloorEnded(seat=3, reason="thanks"), None),
        (ev.FloorEnded(seat=3, reason="removed"), None),
        # Secret events never make a sound: the timing of a sound would tell.
        (ev.ShotFired(seat=1, target=4), None),
        (ev.SheriffChecked(seat=2, target=4, black=True), None),
        (ev.Healed(seat=6, target=4), None),
        (ev.StageStarted(phase=Phase.SPEECHES), None),
    ],
)
def test_each_event_calls_for_its_cue(event: ev.Event, cue: Cue | None) -> None:
    assert cue_for(event) is cue


@pytest.mark.parametrize("event", ONE_OF_EACH_EVENT, ids=lambda e: type(e).__name__)
def test_cue_for_answers_every_event_class(event: ev.Event) -> None:
    assert cue_for(event) in (None, *Cue)


def test_one_commands_cues_come_once_each_with_daybreak_first() -> None:
    morning: list[ev.Event] = [NIGHT_WITH_DEATH, ev.DayStarted(day=2, opener=5, vote_cancelled=False)]
    assert cues_for(morning) == (Cue.DAY, Cue.LEAVES)
    evening: list[ev.Event] = [
        ev.VotingClosed(kind=VoteKind.MAIN, tally=((5, (1, 2)),), silent=()),
        ev.PlayersVotedOut(seats=(5,), cause=Cause.VOTED_OUT),
        ev.NightFell(night=1),
    ]
    assert cues_for(evening) == (Cue.LEAVES, Cue.NIGHT)
    both_out: list[ev.Event] = [ev.PlayersVotedOut(seats=(2,), cause=Cause.VOTED_OUT), ev.PlayerRemoved(
        seat=3, cause=Cause.FOULS, cancels="none")]
    assert cues_for(both_out) == (Cue.LEAVES,)
    assert cues_for([ev.ShotFired(seat=1, target=2)]) == ()


# -- speech ------------------------------------------------------------------------------------------


def wav_bytes(values: list[int], rate: int, channels: int = 1, *, streamed: bool = False) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(channels)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(array("h", values).tobytes())
    data = buffer.getvalue()
    if streamed:  # what espeak-ng --stdout writes: sizes it cannot know yet
        data = data[:4] + struct.pack("<I", 0x7FFFF000) + data[8:40] + struct.pack("<I", 0x7FFFF000) + data[44:]
    return data


@pytest.mark.parametrize("streamed", [False, True])
def test_a_22khz_mono_wav_becomes_48khz_stereo_whole_frames(streamed: bool) -> None:
    values = [(i * 37) % 2000 - 1000 for i in range(22_050)]  # one second
    pcm = audio.wav_to_pcm(wav_bytes(values, 22_050, streamed=streamed))
    assert len(pcm) % FRAME_BYTES == 0
    assert audio.duration(pcm) == pytest.approx(1.0, abs=0.02)
    out = samples(pcm)
    assert out[0::2] == out[1::2]
    assert out[0] == values[0]


def test_a_stereo_wav_is_mixed_down_and_a_bad_file_is_refused() -> None:
    pcm = audio.wav_to_pcm(wav_bytes([100, 300] * 480, 48_000, channels=2))
    assert samples(pcm)[:4].tolist() == [200, 200, 200, 200]
    with pytest.raises(audio.WavError):
        audio.wav_to_pcm(b"not a wav file at all")


ESPEAK = shutil.which("espeak-ng")
needs_espeak = pytest.mark.skipif(ESPEAK is None, reason="espeak-ng is not installed: speech is optional (tones only)")


@needs_espeak
@pytest.mark.parametrize("language", ["en", "ru", "ka"])
async def test_espeak_speaks_every_announcement_in_each_language_once(language: str) -> None:
    speaker = Speaker(ESPEAK)
    for cue in Cue:
        text = spoken_text(language, cue)
        pcm = await speaker.say(language, text)
        assert pcm is not None, (language, cue)
        assert len(pcm) % FRAME_BYTES == 0
        assert 0.3 < audio.duration(pcm) < 6.0
        assert max(abs(v) for v in samples(pcm)) > 1000  # not silence
        assert await speaker.say(language, text) is pcm  # cached: synthesized once


async def test_without_a_synthesizer_there_is_no_speech() -> None:
    speaker = Speaker(None)
    assert not speaker.available
    assert await speaker.say("en", "Night falls.") is None


def test_the_spoken_texts_are_in_the_tables_language() -> None:
    assert spoken_text("ru", Cue.NIGHT) != spoken_text("en", Cue.NIGHT) != spoken_text("ka", Cue.NIGHT)
    assert "ночь" in spoken_text("ru", Cue.NIGHT)
