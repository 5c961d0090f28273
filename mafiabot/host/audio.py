"""The host's voice, as sound: cues synthesized in code and speech converted to Discord's PCM.

Everything here is pure (no I/O, no clock): a cue is a few notes, chords and sweeps rendered as
16-bit 48 kHz stereo PCM, the format ``discord.PCMAudio`` plays, always a whole number of 20 ms
frames (3,840 bytes each) so no frame is dropped at the end. ``cues_for`` says which cues one
command's events call for; only public events have a cue, so the sound never tells a secret.
"""

from __future__ import annotations

import enum
import math
import struct
import sys
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import assert_never

from engine import Event
from engine import events as ev

SAMPLE_RATE = 48_000
CHANNELS = 2
SAMPLE_WIDTH = 2
FRAME_MS = 20
FRAME_SAMPLES = SAMPLE_RATE * FRAME_MS // 1000
FRAME_BYTES = FRAME_SAMPLES * CHANNELS * SAMPLE_WIDTH
"""3,840: one 20 ms frame of 16-bit stereo, what ``discord.PCMAudio`` reads at a time."""

PEAK = 0.5
"""Loudest sample as a share of full scale: cues sit under the players' voices, not over them."""


class Cue(enum.Enum):
    """A sound the host plays at the table."""

    NIGHT = "night"
    DAY = "day"
    TEN_SECONDS = "ten_seconds"
    TIME_UP = "time_up"
    VOTE = "vote"
    LEAVES = "leaves"


@dataclass(frozen=True, slots=True)
class Note:
    """A chord (one or more pitches) from ``start`` for ``length`` seconds, optionally sliding to ``to``."""

    start: float
    length: float
    pitches: tuple[float, ...]
    gain: float = 1.0
    to: tuple[float, ...] | None = None
    """End pitches of a sweep, one per pitch; None holds the pitches."""
    decay: float = 0.0
    """Exponential decay rate per second (a bell or a pluck); 0 holds the level."""


def _hz(name: str) -> float:
    """The frequency of a note name in equal temperament (A4 = 440 Hz).

    >>> round(_hz("A4")), round(_hz("C5"), 2)
    (440, 523.25)
    """
    steps = {"C": -9, "D": -7, "E": -5, "F": -4, "G": -2, "A": 0, "B": 2}[name[0]]
    rest = name[1:]
    if rest.startswith("#"):
        steps, rest = steps + 1, rest[1:]
    elif rest.startswith("b"):
        steps, rest = steps - 1, rest[1:]
    return 440.0 * 2 ** ((steps + 12 * (int(rest) - 4)) / 12)


def _chord(*names: str) -> tuple[float, ...]:
    return tuple(_hz(n) for n in names)


SCORES: dict[Cue, tuple[Note, ...]] = {
    # Night falls: a minor arpeggio walking down, then a low minor chord that fades.
    Cue.NIGHT: (
        Note(0.00, 0.30, _chord("E5"), 0.8, decay=2.0),
        Note(0.22, 0.30, _chord("C5"), 0.8, decay=2.0),
        Note(0.44, 0.30, _chord("A4"), 0.8, decay=2.0),
        Note(0.66, 1.10, _chord("A3", "C4", "E4"), 0.7, decay=1.6),
    ),
    # Day breaks: a major arpeggio climbing, then a bright chord.
    Cue.DAY: (
        Note(0.00, 0.25, _chord("C5"), 0.8, decay=2.0),
        Note(0.18, 0.25, _chord("E5"), 0.8, decay=2.0),
        Note(0.36, 0.25, _chord("G5"), 0.8, decay=2.0),
        Note(0.54, 0.90, _chord("C5", "E5", "G5", "C6"), 0.6, decay=1.8),
    ),
    # Ten seconds left: two short high beeps.
    Cue.TEN_SECONDS: (
        Note(0.00, 0.12, _chord("A5"), 0.7),
        Note(0.25, 0.12, _chord("A5"), 0.7),
    ),
    # Time is up: three quick beeps and a longer low one.
    Cue.TIME_UP: (
        Note(0.00, 0.10, _chord("E5"), 0.7),
        Note(0.16, 0.10, _chord("E5"), 0.7),
        Note(0.32, 0.10, _chord("E5"), 0.7),
        Note(0.48, 0.55, _chord("A4", "E5"), 0.7, decay=1.5),
    ),
    # The vote opens: a rising sweep and a bell.
    Cue.VOTE: (
        Note(0.00, 0.35, _chord("A4"), 0.6, to=_chord("A5")),
        Note(0.35, 0.70, _chord("A5", "E6"), 0.6, decay=3.0),
    ),
    # A player leaves the table: a slow falling sweep.
    Cue.LEAVES: (
        Note(0.00, 0.90, _chord("E5", "G5"), 0.6, to=_chord("E4", "G4")),
        Note(0.90, 0.40, _chord("E4", "G4"), 0.6, decay=4.0),
    ),
}

ATTACK = 0.008
RELEASE = 0.030
"""Fade in and out of every note, in seconds, so no note starts or ends with a click."""


def frames_for(seconds: float) -> int:
    """How many whole 20 ms frames hold ``seconds`` of sound (rounded up).

    >>> frames_for(1.0), frames_for(0.001), frames_for(0)
    (50, 1, 0)
    """
    return math.ceil(round(seconds * 1000 / FRAME_MS, 6))


def duration(pcm: bytes) -> float:
    """The length of 48 kHz stereo PCM in seconds.

    >>> duration(bytes(FRAME_BYTES * 50))
    1.0
    """
    return len(pcm) / (SAMPLE_RATE * CHANNELS * SAMPLE_WIDTH)


def silence(seconds: float) -> bytes:
    """Whole frames of silence covering ``seconds``."""
    return bytes(frames_for(seconds) * FRAME_BYTES)


def _render_note(buffer: list[float], note: Note) -> None:
    first = round(note.start * SAMPLE_RATE)
    count = round(note.length * SAMPLE_RATE)
    attack = max(1, round(ATTACK * SAMPLE_RATE))
    release = max(1, round(RELEASE * SAMPLE_RATE))
    targets = note.to or note.pitches
    phases = [0.0] * len(note.pitches)
    level = note.gain / len(note.pitches)
    tau = 2 * math.pi / SAMPLE_RATE
    for i in range(count):
        share = i / count
        envelope = min(1.0, i / attack, (count - i) / release)
        if note.decay:
            envelope *= math.exp(-note.decay * i / SAMPLE_RATE)
        value = 0.0
        for k, (start, end) in enumerate(zip(note.pitches, targets, strict=True)):
            phases[k] += tau * (start + (end - start) * share)
            value += math.sin(phases[k])
        buffer[first + i] += value * level * envelope


def render(notes: Sequence[Note]) -> bytes:
    """Mix ``notes`` into 16-bit 48 kHz stereo PCM, whole frames, peaking at ``PEAK`` of full scale."""
    end = max((n.start + n.length for n in notes), default=0.0)
    samples = frames_for(end) * FRAME_SAMPLES
    buffer = [0.0] * samples
    for note in notes:
        _render_note(buffer, note)
    loudest = max((abs(v) for v in buffer), default=0.0)
    scale = PEAK * 32767 / loudest if loudest else 0.0
    return _stereo(round(v * scale) for v in buffer)


def _stereo(mono: Iterable[int]) -> bytes:
    out = array("h")
    for value in mono:
        sample = max(-32768, min(32767, value))
        out.append(sample)
        out.append(sample)
    if sys.byteorder != "little":
        out.byteswap()
    return out.tobytes()


@cache
def pcm(cue: Cue) -> bytes:
    """The cue's sound as ``discord.PCMAudio`` plays it; rendered once per process."""
    return render(SCORES[cue])


def pad_to_frames(data: bytes) -> bytes:
    """``data`` (16-bit stereo PCM) with silence added up to a whole number of frames."""
    return data + bytes(-len(data) % FRAME_BYTES)


class WavError(ValueError):
    """Not a WAV file this module can read (16-bit PCM, mono or stereo)."""


def wav_to_pcm(data: bytes) -> bytes:
    """A 16-bit PCM WAV file (as ``espeak-ng --stdout`` writes it) as 48 kHz stereo PCM, whole frames.

    A streamed WAV states no real data size (``espeak-ng`` writes 0x7FFFF000), so the data chunk runs
    to the end of what was read. Resampling is linear interpolation: plenty for a speaking voice.

    Raises:
        WavError: not RIFF/WAVE, not PCM, or not 16 bits.
    """
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise WavError("not a RIFF/WAVE file")
    offset = 12
    rate = channels = 0
    while offset + 8 <= len(data):
        chunk, size = data[offset:offset + 4], struct.unpack_from("<I", data, offset + 4)[0]
        body = offset + 8
        if chunk == b"fmt ":
            fmt, channels, rate = struct.unpack_from("<HHI", data, body)
            bits = struct.unpack_from("<H", data, body + 14)[0]
            if fmt != 1 or bits != 16 or channels not in (1, 2) or rate <= 0:
                raise WavError(f"unsupported WAV format: format {fmt}, {bits} bits, {channels} channels, {rate} Hz")
        elif chunk == b"data":
            if not rate:
                raise WavError("data before the fmt chunk")
            raw = data[body:body + size]
            raw = raw[:len(raw) - len(raw) % (2 * channels)]
            samples = array("h")
            samples.frombytes(raw)
            if sys.byteorder != "little":
                samples.byteswap()
            mono = samples if channels == 1 else array("h", (
                (samples[i] + samples[i + 1]) // 2 for i in range(0, len(samples), 2)
            ))
            return pad_to_frames(_stereo(resample(mono, rate)))
        offset = body + size + (size & 1)
    raise WavError("no data chunk")


def resample(samples: Sequence[int], rate: int) -> list[int]:
    """Mono samples at ``rate`` Hz as mono samples at 48 kHz (linear interpolation).

    >>> resample([0, 100], 24_000)
    [0, 50, 100, 100]
    """
    if rate == SAMPLE_RATE or not samples:
        return list(samples)
    count = len(samples) * SAMPLE_RATE // rate
    step = rate / SAMPLE_RATE
    last = len(samples) - 1
    out = []
    for i in range(count):
        position = i * step
        j = int(position)
        if j >= last:
            out.append(samples[last])
            continue
        frac = position - j
        out.append(round(samples[j] + (samples[j + 1] - samples[j]) * frac))
    return out


def cue_for(event: Event) -> Cue | None:
    """The cue an engine event calls for, if any (secret events never have one: a sound's timing would tell)."""
    match event:
        case ev.NightFell():
            return Cue.NIGHT
        case ev.DayStarted():
            return Cue.DAY
        case ev.VotingStarted() | ev.LiftVoteStarted():
            return Cue.VOTE
        case ev.PlayersVotedOut() | ev.PlayerRemoved():
            return Cue.LEAVES
        case ev.NightResolved(killed=killed):
            return Cue.LEAVES if killed else None
        case ev.FloorEnded(reason=reason):
            return Cue.TIME_UP if reason == "timeout" else None
        case (
            ev.GameStarted() | ev.ShotFired() | ev.DonChecked() | ev.SheriffChecked() | ev.Healed()
            | ev.ManiacActed() | ev.BestMoveAsked() | ev.BestMoveMade() | ev.CriticalFoulsAnnounced()
            | ev.StageStarted() | ev.FloorGiven() | ev.TurnSkipped() | ev.SpeechPenaltyServed() | ev.Nominated()
            | ev.NomineesRecapped() | ev.VoteCast() | ev.VoteWindowClosed() | ev.VotingClosed() | ev.TieDeclared()
            | ev.LiftVoteCast() | ev.LiftVoteClosed() | ev.NoVoteHeld() | ev.VoteCancelled() | ev.FoulGiven()
            | ev.FoulRevoked() | ev.SpeechLost() | ev.SpeechRestored() | ev.Paused() | ev.Resumed()
            | ev.PointsAwarded() | ev.GameEnded() | ev.ActionTakenBack()
        ):
            return None
        case _:
            assert_never(event)


def cues_for(events: Sequence[Event]) -> tuple[Cue, ...]:
    """The cues of one command's events, each once, in order; daybreak comes before the night's deaths.

    >>> cues_for([ev.NightResolved(night=1, mafia_target=3, maniac_target=None, healed=None, killed=(3,)),
    ...           ev.DayStarted(day=2, opener=2, vote_cancelled=False)])
    (<Cue.DAY: 'day'>, <Cue.LEAVES: 'leaves'>)
    """
    found: list[Cue] = []
    for event in events:
        cue = cue_for(event)
        if cue is not None and cue not in found:
            found.append(cue)
    if Cue.DAY in found:
        found.remove(Cue.DAY)
        found.insert(0, Cue.DAY)
    return tuple(found)


__all__ = [
    "CHANNELS", "FRAME_BYTES", "FRAME_SAMPLES", "SAMPLE_RATE", "SAMPLE_WIDTH", "Cue", "Note", "WavError",
    "cue_for", "cues_for", "duration", "frames_for", "pad_to_frames", "pcm", "render", "resample", "silence",
    "wav_to_pcm",
]
