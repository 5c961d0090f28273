"""The host's voice at the table: cues and spoken announcements in the table's voice channel.

Voice is an extra. ``VoiceCues`` runs in its own task per table: it connects when the game starts,
plays the cue of each public event (a new cue stops a stale one; never two at once), and leaves at
the end. Anything missing or failing (libopus, PyNaCl, davey, the permissions, the connection)
turns the cues off for that table and tells the judge once, privately if the judge takes DMs; the
game itself never waits for voice, and the table's lock is never held across a voice call.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes.util
import io
import logging
import shutil
from collections.abc import Awaitable, Callable, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol

import discord

from engine import Event
from mafiabot.core.clock import within
from mafiabot.host.audio import Cue, WavError, cues_for, duration, pcm, silence, wav_to_pcm
from mafiabot.host.i18n import t

if TYPE_CHECKING:
    from mafiabot.core.clock import TableClock
    from mafiabot.core.runtime import Table
    from mafiabot.host.ports import ChannelLookup, Client

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 20.0
"""Seconds to reach the voice channel at full time scale; a shortened game waits proportionally less."""
MIN_CONNECT_TIMEOUT = 0.5
STOP_TIMEOUT = 2.0
"""How long a stopped cue may take to let go of the connection before the next one starts anyway."""
DISCONNECT_TIMEOUT = 10.0
SPEECH_TIMEOUT = 10.0
GAP = 0.15
"""Silence between a cue's tone and its spoken announcement, in seconds."""

ESPEAK = "espeak-ng"
ESPEAK_VOICES = {"en": "en", "ru": "ru", "ka": "ka"}

REASONS = ("opus", "nacl", "davey", "channel", "permissions", "busy", "timeout", "error", "lost")
"""Why the cues went off; each is ``voice.reason.<code>`` in the catalogs."""


class VoiceUnavailableError(Exception):
    """Voice cannot work for this table; ``reason`` is one of ``REASONS``."""

    def __init__(self, reason: str, detail: str = "") -> None:
        self.reason = reason
        self.detail = detail
        super().__init__(f"{reason}: {detail}" if detail else reason)


class VoiceClientLike(Protocol):
    """What the cues need of a connected ``discord.VoiceClient`` (tests pass a fake)."""

    def play(self, source: discord.AudioSource, *, after: Callable[[Exception | None], Any] | None = None) -> None:
        """Start playing ``source``; ``after`` is called (from any thread) when it ends or is stopped."""

    def stop(self) -> None:
        """Stop what plays now."""

    def is_playing(self) -> bool:
        """Whether a source is playing."""

    async def disconnect(self, *, force: bool = False) -> None:
        """Leave the voice channel."""


Connector = Callable[[float], Awaitable[VoiceClientLike]]
"""Connect to the table's voice channel within the given seconds."""
Notifier = Callable[[str], Awaitable[None]]
"""Tell the judge, once, why the cues are off (the reason code)."""


def opus_problem() -> str | None:
    """Load libopus if it is not loaded yet; None when it works, else what went wrong."""
    if discord.opus.is_loaded():
        return None
    found = ctypes.util.find_library("opus")
    if found is None:
        return "libopus not found"
    try:
        discord.opus.load_opus(found)
    except OSError as exc:
        return f"{found} does not load: {exc}"
    return None


def missing_library() -> VoiceUnavailableError | None:
    """The first library voice needs that is missing: libopus, PyNaCl or davey (DAVE encryption)."""
    from discord.voice_client import has_nacl
    from discord.voice_state import has_dave

    problem = opus_problem()
    if problem is not None:
        return VoiceUnavailableError("opus", problem)
    if not has_nacl:
        return VoiceUnavailableError("nacl", "PyNaCl is not installed")
    if not has_dave:
        return VoiceUnavailableError("davey", "davey is not installed")
    return None


class CueSource(discord.PCMAudio):
    """Raw PCM of one or more cues, labelled with what it holds (logs and tests read ``cues``)."""

    def __init__(self, data: bytes, cues: tuple[Cue, ...]) -> None:
        super().__init__(io.BytesIO(data))
        self.data = data
        self.cues = cues


class Speaker:
    """Spoken announcements through ``espeak-ng``, when it is installed; each text synthesized once."""

    def __init__(self, executable: str | None) -> None:
        self.executable = executable
        self._cache: dict[tuple[str, str], bytes | None] = {}

    @property
    def available(self) -> bool:
        """Whether a synthesizer was found."""
        return self.executable is not None

    async def say(self, language: str, text: str) -> bytes | None:
        """``text`` spoken in ``language`` as 48 kHz stereo PCM; None without a synthesizer or when it fails."""
        if self.executable is None:
            return None
        key = (language, text)
        if key not in self._cache:
            # Two tables asking at once may both synthesize; the second result simply replaces the first.
            self._cache[key] = await self._synthesize(self.executable, language, text)
        return self._cache[key]

    async def _synthesize(self, executable: str, language: str, text: str) -> bytes | None:
        voice = ESPEAK_VOICES.get(language, "en")
        try:
            process = await asyncio.create_subprocess_exec(
                executable, "-v", voice, "--stdout", text,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            )
        except OSError as exc:
            log.warning("speech synthesizer %s did not start: %s", executable, exc)
            return None
        try:
            # The synthesizer serves every table, so this guard is on the loop's time, not a table's clock.
            out, err = await asyncio.wait_for(process.communicate(), timeout=SPEECH_TIMEOUT)
        except TimeoutError:
            process.kill()
            await process.wait()
            log.warning("speech synthesizer %s timed out on %r", executable, text)
            return None
        if process.returncode != 0:
            log.warning("speech synthesizer %s failed (%s): %s", executable, process.returncode, err.decode()[:200])
            return None
        try:
            return wav_to_pcm(out)
        except WavError as exc:
            log.warning("speech synthesizer %s wrote no usable WAV: %s", executable, exc)
            return None


@cache
def shared_speaker() -> Speaker:
    """One speaker (and one speech cache) for every table of the process: ``espeak-ng`` if installed."""
    return Speaker(shutil.which(ESPEAK))


def spoken_text(language: str, cue: Cue) -> str:
    """What the host says with a cue, in the table's language."""
    key = {
        Cue.NIGHT: "voice.say.night",
        Cue.DAY: "voice.say.day",
        Cue.TEN_SECONDS: "voice.say.ten_seconds",
        Cue.TIME_UP: "voice.say.time_up",
        Cue.VOTE: "voice.say.vote",
        Cue.LEAVES: "voice.say.leaves",
    }[cue]
    return t(language, key)


def reason_text(language: str, reason: str) -> str:
    """Why the cues are off, in words for the judge."""
    key = {
        "opus": "voice.reason.opus",
        "nacl": "voice.reason.nacl",
        "davey": "voice.reason.davey",
        "channel": "voice.reason.channel",
        "permissions": "voice.reason.permissions",
        "busy": "voice.reason.busy",
        "timeout": "voice.reason.timeout",
        "error": "voice.reason.error",
        "lost": "voice.reason.lost",
    }[reason if reason in REASONS else "error"]
    return t(language, key)


_CLOSE = object()


class VoiceCues:
    """One table's cues: a connection, a queue and a single player task; its waits are bounded on the table's clock."""

    def __init__(
        self, *, language: str, clock: TableClock, connector: Connector, notify: Notifier,
        connect_timeout: float = CONNECT_TIMEOUT,
        speaker: Speaker | None = None, libraries: Callable[[], VoiceUnavailableError | None] = missing_library,
        name: str = "voice-cues",
    ) -> None:
        self.language = language
        self._clock = clock
        self._connector = connector
        self._notify = notify
        self._connect_timeout = connect_timeout
        self._speaker = speaker
        self._libraries = libraries
        self._name = name
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._playing: asyncio.Event | None = None
        """Set when the current source has ended; None before the first one."""
        self._playing_seconds = 0.0
        self.client: VoiceClientLike | None = None
        self.failure: VoiceUnavailableError | None = None
        """Why the cues went off for this table, once they did."""
        self.judge_told = 0
        self._connecting = False

    @property
    def active(self) -> bool:
        """Whether cues may still play (nothing has failed and the table has not ended)."""
        return self.failure is None and not (self._task is not None and self._task.done())

    # -- the table's side (synchronous, never blocks) --------------------------------------------

    def start(self) -> None:
        """Connect and wait for cues, in a task of its own."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name=self._name)

    def on_events(self, events: Sequence[Event]) -> None:
        """Queue the cues of one command's events."""
        cues = cues_for(events)
        if cues and self.active:
            self._queue.put_nowait(cues)

    def warning(self) -> None:
        """The floor holder has ten seconds left."""
        if self.active:
            self._queue.put_nowait((Cue.TEN_SECONDS,))

    async def close(self) -> None:
        """The game is over: let the last cue finish, leave the channel, and end the task."""
        if self._task is None:
            return
        if self._connecting:
            # Still on the way in: the game needs no cue any more, and the judge no notice.
            self._task.cancel()
        self._queue.put_nowait(_CLOSE)
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    def abort(self) -> None:
        """The process is shutting down: stop at once (discord.py drops the connection itself)."""
        if self._task is not None and not self._task.done():
            self._task.cancel()

    # -- the player task -------------------------------------------------------------------------

    async def _run(self) -> None:
        self._connecting = True
        try:
            self.client = await self._connect()
        except VoiceUnavailableError as exc:
            await self._fail(exc)
            return
        finally:
            self._connecting = False
        try:
            await self._warm_up()
            await self._play_loop(self.client)
        except VoiceUnavailableError as exc:
            await self._fail(exc)
        except Exception as exc:
            log.exception("%s: playing a cue failed", self._name)
            await self._fail(VoiceUnavailableError("lost", repr(exc)))
        finally:
            await self._leave()

    async def _connect(self) -> VoiceClientLike:
        missing = self._libraries()
        if missing is not None:
            raise missing
        try:
            # The connector has the timeout; this one only guards against a connector that ignores it.
            return await within(self._clock, self._connect_timeout + 5, self._connector(self._connect_timeout))
        except TimeoutError:
            raise VoiceUnavailableError("timeout", f"no voice connection within {self._connect_timeout:g} s") from None
        except (discord.DiscordException, OSError, RuntimeError) as exc:
            raise VoiceUnavailableError("error", repr(exc)) from exc

    async def _warm_up(self) -> None:
        """Synthesize every announcement of the table's language now, so no cue waits for it later."""
        if self._speaker is not None and self._speaker.available:
            for cue in Cue:
                await self._speaker.say(self.language, spoken_text(self.language, cue))

    async def _play_loop(self, client: VoiceClientLike) -> None:
        closing = False
        while not closing:
            item = await self._queue.get()
            # Only the newest cue matters: older ones still waiting are stale.
            while not self._queue.empty():
                newer = self._queue.get_nowait()
                if newer is _CLOSE:
                    closing = True
                else:
                    item = newer
            if item is _CLOSE:
                closing = True
            else:
                data = await self._render(item)
                await self._stop_current(client)
                self._start(client, CueSource(data, item))
        if self._playing is not None:
            await self._finish_current()

    async def _render(self, cues: tuple[Cue, ...]) -> bytes:
        parts: list[bytes] = []
        for cue in cues:
            parts.append(pcm(cue))
            if self._speaker is not None:
                speech = await self._speaker.say(self.language, spoken_text(self.language, cue))
                if speech:
                    parts += [silence(GAP), speech]
        return b"".join(parts)

    async def _stop_current(self, client: VoiceClientLike) -> None:
        """Stop a stale cue and wait until its player has let go, so two never overlap."""
        ended = self._playing
        if ended is None or ended.is_set():
            return
        client.stop()
        try:
            await within(self._clock, STOP_TIMEOUT, ended.wait())
        except TimeoutError:
            log.warning("%s: a stopped cue did not end within %s s", self._name, STOP_TIMEOUT)

    def _start(self, client: VoiceClientLike, source: CueSource) -> None:
        loop = asyncio.get_running_loop()
        ended = asyncio.Event()
        self._playing, self._playing_seconds = ended, duration(source.data)

        def after(error: Exception | None) -> None:
            if error is not None:
                log.warning("%s: a cue stopped with %r", self._name, error)
            loop.call_soon_threadsafe(ended.set)

        try:
            client.play(source, after=after)
        except discord.ClientException as exc:
            raise VoiceUnavailableError("lost", str(exc)) from exc

    async def _finish_current(self) -> None:
        """At the end: let the cue that plays now be heard to its end (bounded by its own length)."""
        ended = self._playing
        if ended is None or ended.is_set():
            return
        try:
            await within(self._clock, self._playing_seconds + STOP_TIMEOUT, ended.wait())
        except TimeoutError:
            log.info("%s: the last cue did not end in time; leaving anyway", self._name)

    async def _leave(self) -> None:
        client, self.client = self.client, None
        if client is None:
            return
        try:
            await within(self._clock, DISCONNECT_TIMEOUT, client.disconnect(force=True))
        except Exception:
            log.warning("%s: leaving the voice channel failed", self._name, exc_info=True)

    async def _fail(self, exc: VoiceUnavailableError) -> None:
        if self.failure is not None:
            return
        self.failure = exc
        while not self._queue.empty():
            self._queue.get_nowait()
        log.warning("%s: voice cues off: %s", self._name, exc)
        self.judge_told += 1
        try:
            await self._notify(exc.reason)
        except Exception:
            log.warning("%s: could not tell the judge that the cues are off", self._name, exc_info=True)


def voice_connector(channels: ChannelLookup, table: Table) -> Connector:
    """Connect the bot to ``table``'s voice channel (self-deafened: it only speaks)."""

    async def connect(timeout: float) -> VoiceClientLike:  # noqa: ASYNC109
        channel = channels.get_channel(table.voice_channel_id)
        if not isinstance(channel, discord.VoiceChannel | discord.StageChannel):
            raise VoiceUnavailableError("channel", f"voice channel {table.voice_channel_id} not found")
        me = channel.guild.me
        if me is not None:
            perms = channel.permissions_for(me)
            if not (perms.connect and perms.speak):
                raise VoiceUnavailableError("permissions", "Connect and Speak are needed")
        if channel.guild.voice_client is not None:
            # One voice connection per server: another table here has it.
            raise VoiceUnavailableError("busy", f"already connected in guild {channel.guild.id}")
        try:
            return await channel.connect(timeout=timeout, reconnect=True, self_deaf=True)
        except asyncio.CancelledError:
            # discord.py keeps a cancelled connection registered: drop it, or the server stays "busy".
            client = channel.guild.voice_client
            if client is not None:
                with contextlib.suppress(Exception):
                    await client.disconnect(force=True)
            raise

    return connect


def judge_notifier(client: Client, table: Table) -> Notifier:
    """Tell the table's judge (as of now) in a DM; if DMs are closed, in the table's channel, addressed to them."""

    async def notify(reason: str) -> None:
        lang = table.language
        judge = table.judge_id
        notice = t(lang, "voice.off", reason=reason_text(lang, reason))
        try:
            user = client.get_user(judge) or await client.fetch_user(judge)
            await user.send(notice)
            return
        except discord.HTTPException:
            pass
        channel = client.get_channel(table.channel_id)
        target = channel if isinstance(channel, discord.abc.Messageable) else client.get_partial_messageable(
            table.channel_id
        )
        await target.send(
            t(lang, "voice.judge_notice", judge=f"<@{judge}>", notice=notice),
            allowed_mentions=discord.AllowedMentions(everyone=False, roles=False, users=[discord.Object(id=judge)]),
        )

    return notify


def connect_timeout(time_scale: float) -> float:
    """The connection timeout of a table whose clock runs at ``time_scale``.

    >>> connect_timeout(1.0), connect_timeout(0.02)
    (20.0, 0.5)
    """
    return max(MIN_CONNECT_TIMEOUT, CONNECT_TIMEOUT * min(1.0, time_scale))


def cues_for_table(client: Client, table: Table) -> VoiceCues:
    """The voice cues of a table on Discord: ``client`` connects to its voice channel and finds its judge."""
    return VoiceCues(
        language=table.language, clock=table.clock, connector=voice_connector(client, table),
        notify=judge_notifier(client, table), connect_timeout=connect_timeout(table.time_scale),
        speaker=shared_speaker(), libraries=missing_library, name=f"voice-cues-{table.id}",
    )


__all__ = [
    "REASONS", "CueSource", "Speaker", "VoiceClientLike", "VoiceCues", "VoiceUnavailableError", "cues_for_table",
    "missing_library", "opus_problem", "reason_text", "spoken_text",
]
