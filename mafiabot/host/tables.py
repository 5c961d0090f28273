"""The table manager: lobbies being formed, running tables, and recovery after a restart.

Everything here is about Discord-independent bookkeeping plus the few Discord facts a refusal
needs (is the player in the table's voice channel, may the bot act in these channels).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import discord

from engine import Abandon, Game, Phase, RulesError, Ruleset, command_from_data, from_mapping
from mafiabot.core.errors import ChannelTakenError
from mafiabot.core.meta import TableMeta
from mafiabot.core.runtime import Lobby, Table, TableError, deal_seats, new_seed, start_command
from mafiabot.host.i18n import t

if TYPE_CHECKING:
    from mafiabot.core.records import StoredGame
    from mafiabot.host.bot import MafiaBot

log = logging.getLogger(__name__)

TEXT_PERMISSIONS = (
    "send_messages", "read_message_history", "add_reactions", "manage_messages",
    "create_private_threads", "send_messages_in_threads", "manage_threads",
)
VOICE_PERMISSIONS = ("connect", "mute_members")
READS_MAFIA_ROOM = ("owner", "administrator", "manage_threads")
"""Powers that show a private thread to its holder: the server's owner, Administrator, Manage Threads."""
LIFTS_OWN_MUTE = "mute_members"
POWERS = (*READS_MAFIA_ROOM, LIFTS_OWN_MUTE)
"""Every power ``table_powers`` can name (each has a ``power.<name>`` message)."""


def ruleset_from_stored(data: dict[str, Any]) -> Ruleset:
    """Read back ``Ruleset.to_dict()`` as the store keeps it."""
    return from_mapping(data)


@dataclass(frozen=True, slots=True)
class Seated:
    """A player joining a lobby, as the cog saw them."""

    user_id: int
    name: str
    voice_channel_id: int | None
    powers: tuple[str, ...] = field(default=())
    """What the member could do against the table's secrecy: see ``table_powers``."""


def table_powers(member: discord.abc.User, text: discord.Permissions | None, voice: object) -> tuple[str, ...]:
    """The member's powers that defeat a table's secrecy: reading the mafia's room, or lifting their own mute.

    ``text`` is the member's permissions in the table's text channel (as Discord computed them for
    the click) and ``voice`` the table's voice channel. Discord shows a private thread to the
    server's owner and to whoever has Administrator or Manage Threads in its channel, and Mute
    Members in the voice channel lets a player lift their own server mute.
    """
    if not isinstance(member, discord.Member):
        return ()
    if member.guild.owner_id == member.id:
        return ("owner",)
    found: list[str] = []
    if text is not None:
        if text.administrator:
            return ("administrator",)
        if text.manage_threads:
            found.append("manage_threads")
    if isinstance(voice, discord.abc.GuildChannel) and voice.permissions_for(member).mute_members:
        found.append(LIFTS_OWN_MUTE)
    return tuple(found)


def may_judge(actor: int, *, judge_id: int, staff: bool, seated: bool) -> bool:
    """The one rule of judge powers: the table's judge or staff (Manage Server, the judge role), never a seated player.

    A seated player holds no judge power during their game, whatever their roles: an admin at the
    table could otherwise pause, skip or remove players while playing.
    """
    return not seated and (actor == judge_id or staff)


def check_place(channel: object, voice: object) -> None:
    """Where a table may live: a plain text channel, with a voice (not stage) channel.

    Discord creates private threads (the mafia's room) only in plain text channels, so a thread,
    an announcement channel or a voice channel's own chat cannot hold a table.

    Raises:
        TableError: ``lobby.not_text_channel`` or ``lobby.stage_voice``.
    """
    if getattr(channel, "type", None) is not discord.ChannelType.text:
        raise TableError("lobby.not_text_channel")
    if isinstance(voice, discord.StageChannel):
        raise TableError("lobby.stage_voice")


class TableManager:
    """Owns every lobby and running table of this bot process."""

    def __init__(self, bot: MafiaBot) -> None:
        self.bot = bot
        self.lobbies: dict[int, Lobby] = {}
        self.tables: dict[int, Table] = {}
        self._starting: set[int] = set()
        """Games between ``/mafia start`` and their first stored command: not leftovers to clean."""
        self._recovered = False
        self.recovered = asyncio.Event()
        """Set once ``recover`` has rebuilt the open games and closed what a failed start left."""
        self._idle: dict[int, asyncio.TimerHandle] = {}

    # -- lookups ---------------------------------------------------------------------------------

    def lobby_in(self, channel_id: int) -> Lobby | None:
        """The lobby being formed in a text channel."""
        return next((lb for lb in self.lobbies.values() if lb.channel_id == channel_id), None)

    def table_in(self, channel_id: int) -> Table | None:
        """The running table of a text channel."""
        return next((tb for tb in self.tables.values() if tb.channel_id == channel_id), None)

    def table_in_voice(self, voice_channel_id: int) -> Table | None:
        """The running table that uses a voice channel."""
        return next((tb for tb in self.tables.values() if tb.voice_channel_id == voice_channel_id), None)

    def tables_of_user(self, guild_id: int, user_id: int) -> list[Table]:
        """Running tables in a guild where ``user_id`` is seated."""
        return [tb for tb in self.tables.values() if tb.guild_id == guild_id and user_id in tb.seats]

    def _busy(self, guild_id: int, user_id: int) -> bool:
        in_table = any(not tb.over for tb in self.tables_of_user(guild_id, user_id))
        in_lobby = any(lb.guild_id == guild_id and lb.has(user_id) for lb in self.lobbies.values())
        return in_table or in_lobby

    # -- the lobby -------------------------------------------------------------------------------

    async def open_lobby(
        self, *, guild: discord.Guild, channel_id: int, voice_channel_id: int | None, judge: Seated,
        ruleset_name: str | None, seats: int | None, manage_channels: bool = False, tournament: bool = False,
    ) -> Lobby:
        """Create a lobby in a text channel bound to a voice channel.

        The creator must sit in that voice channel, unless they may manage it (``manage_channels``):
        otherwise anyone could bind a table to any voice channel and have everyone in it muted.

        Raises:
            TableError: the channel is busy, the creator is elsewhere, the ruleset or seat count is
                wrong, or the bot lacks permissions.
        """
        if self.lobby_in(channel_id) or self.table_in(channel_id):
            raise TableError("lobby.channel_busy")
        voice_id = voice_channel_id or judge.voice_channel_id
        if voice_id is None:
            raise TableError("lobby.no_voice")
        check_place(guild.get_channel_or_thread(channel_id), guild.get_channel(voice_id))
        if judge.voice_channel_id != voice_id and not manage_channels:
            raise TableError("lobby.creator_not_in_voice", voice=voice_id)
        if self.table_in_voice(voice_id) or any(lb.voice_channel_id == voice_id for lb in self.lobbies.values()):
            raise TableError("lobby.voice_busy", voice=voice_id)
        settings = await self.bot.guild_settings(guild.id)
        name = ruleset_name or settings.default_ruleset or self.bot.config.game.default_ruleset
        named = await self.bot.rulesets.find(guild.id, name)
        if named is None:
            known = ", ".join(r.key for r in await self.bot.rulesets.available(guild.id))
            raise TableError("lobby.unknown_ruleset", ruleset=name, known=known)
        ruleset = named.ruleset
        overrides: dict[str, Any] = dict(settings.timers)
        if settings.vote_window is not None:
            overrides["vote_window_seconds"] = settings.vote_window
        if overrides:
            ruleset = ruleset.replace(**overrides)
        count = seats or ruleset.default_players
        if count not in ruleset.setups:
            raise TableError("lobby.bad_seats", seats=count, supported=", ".join(map(str, ruleset.player_counts)))
        missing = self.missing_permissions(guild, channel_id, voice_id)
        if missing:
            raise TableError("lobby.missing_permissions", permissions=", ".join(missing))
        language = settings.language
        try:
            lobby_id = await self.bot.store.open_lobby(
                guild_id=guild.id, channel_id=channel_id, voice_channel_id=voice_id, judge_id=judge.user_id,
                ruleset=ruleset, language=language,
            )
        except ChannelTakenError as exc:
            raise (TableError("lobby.voice_busy", voice=voice_id) if exc.which == "voice"
                   else TableError("lobby.channel_busy")) from None
        lobby = Lobby(
            id=lobby_id, guild_id=guild.id, channel_id=channel_id, voice_channel_id=voice_id,
            judge_id=judge.user_id, ruleset=ruleset, language=language, seats=count,
            strict=settings.strict_tables or tournament, tournament=tournament,
        )
        self.lobbies[lobby.id] = lobby
        self._touch(lobby)
        return lobby

    # -- idle lobbies ----------------------------------------------------------------------------

    def _touch(self, lobby: Lobby) -> None:
        """Someone used the lobby: its idle time starts again."""
        lobby.token += 1
        old = self._idle.pop(lobby.id, None)
        if old is not None:
            old.cancel()
        seconds = self.bot.config.game.lobby_idle_minutes * 60
        loop = asyncio.get_running_loop()
        token = lobby.token
        self._idle[lobby.id] = loop.call_later(
            seconds, lambda: loop.create_task(self._expire(lobby.id, token))
        )

    def _untrack(self, lobby: Lobby) -> None:
        self.lobbies.pop(lobby.id, None)
        handle = self._idle.pop(lobby.id, None)
        if handle is not None:
            handle.cancel()

    async def _expire(self, lobby_id: int, token: int) -> None:
        """Close a lobby nobody used for ``[game] lobby_idle_minutes``, and say so on its message."""
        lobby = self.lobbies.get(lobby_id)
        if lobby is None or lobby.token != token or lobby.starting:
            return
        self._untrack(lobby)
        try:
            await self.bot.store.drop_lobby(lobby.id)
        except Exception:
            log.exception("could not drop the idle lobby %s", lobby.id)
        log.info("lobby %s in channel %s expired", lobby.id, lobby.channel_id)
        if lobby.message_id is None:
            return
        minutes = max(1, round(self.bot.config.game.lobby_idle_minutes))
        message = self.bot.get_partial_messageable(lobby.channel_id).get_partial_message(lobby.message_id)
        try:
            await message.edit(content=t(lobby.language, "lobby.expired", count=minutes), view=None)
        except discord.HTTPException:
            log.info("could not mark the expired lobby %s", lobby.id)

    def missing_permissions(self, guild: discord.Guild, channel_id: int, voice_id: int) -> list[str]:
        """The permissions the bot lacks in the table's channels, by Discord's names."""
        me = guild.me
        text = guild.get_channel(channel_id)
        voice = guild.get_channel(voice_id)
        missing: list[str] = []
        if me is None:
            return missing
        if text is not None:
            perms = text.permissions_for(me)
            missing += [p for p in TEXT_PERMISSIONS if not getattr(perms, p)]
        if voice is not None:
            perms = voice.permissions_for(me)
            missing += [p for p in VOICE_PERMISSIONS if not getattr(perms, p)]
        return missing

    def lobby(self, lobby_id: int) -> Lobby:
        """A lobby by id.

        Raises:
            TableError: the lobby is gone (started, cancelled, or lost in a restart).
        """
        lobby = self.lobbies.get(lobby_id)
        if lobby is None:
            raise TableError("lobby.gone")
        return lobby

    def join(self, lobby_id: int, player: Seated) -> Lobby:
        """Take a seat in a lobby.

        Raises:
            TableError: the judge, not in the table's voice channel, already in, busy elsewhere,
                the table is full, or (at a strict table) a player who could read the mafia's room
                or lift their own mute.
        """
        lobby = self.lobby(lobby_id)
        if lobby.starting:
            raise TableError("lobby.starting")
        if player.user_id == lobby.judge_id:
            raise TableError("lobby.judge_cannot_play")
        if lobby.has(player.user_id):
            raise TableError("lobby.already_joined")
        if player.voice_channel_id != lobby.voice_channel_id:
            raise TableError("lobby.not_in_voice", voice=lobby.voice_channel_id)
        if self._busy(lobby.guild_id, player.user_id):
            raise TableError("lobby.in_other_game")
        if len(lobby.players) >= lobby.seats:
            raise TableError("lobby.full", seats=lobby.seats)
        if player.powers and lobby.strict:
            raise TableError("lobby.strict", powers=", ".join(t(lobby.language, f"power.{p}") for p in player.powers))
        lobby.players.append((player.user_id, player.name))
        if player.powers:
            lobby.powers[player.user_id] = player.powers
        self._touch(lobby)
        return lobby

    def leave(self, lobby_id: int, user_id: int) -> Lobby:
        """Give a lobby seat back.

        Raises:
            TableError: the player had not joined, or the cards are being dealt.
        """
        lobby = self.lobby(lobby_id)
        if lobby.starting:
            raise TableError("lobby.starting")
        if not lobby.has(user_id):
            raise TableError("lobby.not_joined")
        lobby.players = [(u, n) for u, n in lobby.players if u != user_id]
        lobby.powers.pop(user_id, None)
        self._touch(lobby)
        return lobby

    @staticmethod
    def _require_judge(judge_id: int, actor: int, *, admin: bool, seated: bool) -> None:
        if not may_judge(actor, judge_id=judge_id, staff=admin, seated=seated):
            raise TableError("table.seated_judge" if seated and admin else "table.not_judge")

    async def start(self, channel_id: int, actor: int, *, admin: bool = False) -> Table:
        """Seat the lobby's players, deal the cards, and start the game.

        A second start while the first deals is refused (``lobby.starting``), in this process by
        the lobby's flag and in any other by the lobby's row, which only one start turns open.
        If the start fails half-way, the game is closed again, so no seatless game is left behind.

        Raises:
            TableError: no lobby here, not the judge, already starting, or the seat count does not match.
        """
        lobby = self.lobby_in(channel_id)
        if lobby is None:
            raise TableError("lobby.already_started" if self.table_in(channel_id) else "lobby.none_here")
        self._require_judge(lobby.judge_id, actor, admin=admin, seated=lobby.has(actor))
        if lobby.starting:
            raise TableError("lobby.starting")
        if len(lobby.players) != lobby.seats:
            raise TableError("lobby.wrong_count", count=len(lobby.players), seats=lobby.seats)
        lobby.starting = True
        store = self.bot.store
        game_id = lobby.id
        self._starting.add(game_id)
        try:
            if not await store.start_lobby(game_id):
                self._untrack(lobby)
                raise TableError("lobby.gone")
            self._untrack(lobby)
            try:
                table, events = await self._deal(lobby)
            except BaseException:
                self.tables.pop(game_id, None)
                await store.release_channel(lobby.channel_id, unstarted_only=True)
                raise
        finally:
            lobby.starting = False
            self._starting.discard(game_id)
        table.start_effects(events)
        return table

    async def _deal(self, lobby: Lobby) -> tuple[Table, tuple[Any, ...]]:
        """Seat and deal a lobby whose game row was just opened."""
        configured = self.bot.config.game.seed
        seed = configured if configured is not None else new_seed()
        seats = deal_seats(lobby, order=self.bot.config.game.seat_order, seed=seed)
        lobby.players = seats
        settings = await self.bot.guild_settings(lobby.guild_id)
        owed = [m.user_id for m in await self.bot.store.owed_mutes(lobby.guild_id)]
        table = self._make_table(
            lobby.id, lobby, seats, Game(lobby.ruleset), mute_spectators=settings.mute_spectators,
            voice_cues=settings.voice_cues,
        )
        table.voice.recorded_already(owed)
        self.tables[lobby.id] = table
        return table, await table.submit_start(start_command(lobby, seed), seats)

    def _make_table(
        self, game_id: int, lobby: Lobby, seats: list[tuple[int, str]], game: Game, *, mute_spectators: bool,
        voice_cues: bool = True,
    ) -> Table:
        """A table for a game; ``mute_spectators`` is the server's setting, which the config can force on.

        Voice cues play when the host turned them on (``[voice] cues``) and the server has not turned
        them off (``voice_cues``); they run beside the table and never hold it up.
        """
        bot = self.bot

        def spectators() -> list[int]:
            # Bots (music bots, the bot itself) are never muted: they are not the table's people.
            channel = bot.get_channel(lobby.voice_channel_id)
            if not isinstance(channel, discord.VoiceChannel | discord.StageChannel):
                return []
            guild = channel.guild
            people = []
            for uid in channel.voice_states:
                member = guild.get_member(uid)
                if member is None or member.bot or (bot.user is not None and uid == bot.user.id):
                    continue
                people.append(uid)
            return people

        table = Table(
            game_id=game_id, lobby=lobby, seats=seats, game=game, log_store=bot.store, effects=bot.presenter,
            editor=bot.editor, ledger=bot.store, time_scale=bot.config.game.time_scale,
            spectators=spectators, mute_spectators=bot.config.voice.mute_spectators or mute_spectators,
            clock=bot.table_clock(),
        )
        table.done_callback = self._forget
        table.lifted_callback = bot.presenter.mute_lifted
        if bot.config.voice.cues and voice_cues:
            from mafiabot.host.voicecues import cues_for_table

            table.cues = cues_for_table(bot, table)
        log.info("table %s in channel %s: %d seats", game_id, lobby.channel_id, len(seats))
        return table

    def _forget(self, table: Table) -> None:
        self.tables.pop(table.id, None)

    async def cancel(self, channel_id: int, actor: int, *, admin: bool = False) -> str:
        """Cancel the lobby, or abandon the running game, of a text channel.

        Where the bot holds nothing in this channel but the database still does (a start that
        failed, a game that could not be resumed), that is closed, so the channel is free again.

        Raises:
            TableError: nothing to cancel here, not the judge, or the cards are being dealt.
        """
        lobby = self.lobby_in(channel_id)
        if lobby is not None:
            self._require_judge(lobby.judge_id, actor, admin=admin, seated=lobby.has(actor))
            if lobby.starting:
                raise TableError("lobby.starting")
            self._untrack(lobby)
            await self.bot.store.drop_lobby(lobby.id)
            return "lobby"
        table = self.table_in(channel_id)
        if table is None:
            # A game that never started has nobody to protect; one that did needs staff to close.
            if channel_id and await self.bot.store.release_channel(channel_id, unstarted_only=not admin):
                return "stale"
            raise TableError("lobby.none_here")
        self._require_judge(table.judge_id, actor, admin=admin, seated=table.seat_of(actor) is not None)
        await table.submit(Abandon(), actor=actor)
        return "game"

    # -- restart ---------------------------------------------------------------------------------

    async def recover(self) -> None:
        """Rebuild every open game of this process's shards and lift every mute owed elsewhere."""
        if self._recovered:
            return
        self._recovered = True
        store = self.bot.store
        # Lobbies live in their process; an open game with no command is a start that failed.
        await store.drop_lobbies(self.bot.owns_guild, keep=self.lobbies)
        for game_id in await store.abandon_unstarted(self.bot.owns_guild, keep={*self.tables, *self._starting}):
            log.warning("closed game %s: it was opened but never started", game_id)
        for stored in await store.open_games(self.bot.owns_guild):
            if stored.id in self.tables:
                continue  # started in this process before the guilds were ready: nothing to recover
            try:
                await self._resume(stored)
            except Exception:
                log.exception("could not resume game %s", stored.id)
        running = {(tb.guild_id, u) for tb in self.tables.values() for u in tb.seats}
        for mute in await store.owed_mutes():
            if not self.bot.owns_guild(mute.guild_id) or (mute.guild_id, mute.user_id) in running:
                continue
            await self.lift_owed(mute.guild_id, mute.user_id)
        self.recovered.set()

    async def _resume(self, stored: StoredGame) -> None:
        ruleset = ruleset_from_stored(stored.ruleset)
        commands = [command_from_data(c.command) for c in stored.log]
        game = Game.replay(ruleset, commands)
        seats = [(s.user_id, s.display_name) for s in sorted(stored.seats, key=lambda s: s.seat)]
        # A judge handed over with ``/mafia judge`` is kept in the table's meta, not in the game row.
        judge_id = int(stored.discord.get("judge") or stored.judge_id or 0)
        lobby = Lobby(
            id=stored.id, guild_id=stored.guild_id, channel_id=stored.channel_id,
            voice_channel_id=stored.voice_channel_id or 0, judge_id=judge_id,
            ruleset=ruleset, language=stored.language, seats=len(seats), players=seats,
        )
        settings = await self.bot.guild_settings(stored.guild_id)
        table = self._make_table(
            stored.id, lobby, seats, game, mute_spectators=settings.mute_spectators, voice_cues=settings.voice_cues
        )
        table.meta = TableMeta.from_json(stored.discord)
        table.voice.recorded_already(m.user_id for m in await self.bot.store.owed_mutes(stored.guild_id))
        self.tables[stored.id] = table
        remaining = stored.timer_remaining
        if remaining is None and stored.timer_deadline is not None:
            remaining = (stored.timer_deadline - datetime.now(UTC)).total_seconds()
        # Hands raised while the bot was away count while their window is still open: no time runs
        # out before they are (a window whose time ran out meanwhile closes right after).
        table.caught_up.clear()
        try:
            table.start_effects(())
            if stored.timer_id is not None and remaining is not None:
                table.resume_timer(stored.timer_id, remaining)
            if game.state.phase is not Phase.ENDED:
                self.bot.presenter.resumed(table)
            await self.bot.presenter.catch_up_votes(table)
        finally:
            table.caught_up.set()

    async def lift_owed(self, guild_id: int, user_id: int) -> None:
        """Unmute a member the bot muted and no running table needs muted (40032: try again later)."""
        if any(tb.guild_id == guild_id and user_id in tb.seats and not tb.over for tb in self.tables.values()):
            return
        from mafiabot.core.voice import NotInVoiceError

        try:
            await self.bot.editor.set_mute(guild_id, user_id, mute=False)
        except NotInVoiceError:
            return
        except discord.DiscordException:  # HTTPException, or the editor's MemberEditError
            log.exception("could not lift the mute of %s in %s", user_id, guild_id)
            return
        await self.bot.store.clear_mute(guild_id, user_id)
        for table in self.tables.values():
            if table.guild_id == guild_id:
                table.voice.forget(user_id)

    async def shutdown(self) -> None:
        """Stop the tables' clocks and the lobbies' idle timers; their state is already stored."""
        for table in self.tables.values():
            table.stop()
        for handle in self._idle.values():
            handle.cancel()
        self._idle.clear()


__all__ = ["RulesError", "Seated", "TableManager", "check_place", "may_judge", "ruleset_from_stored", "table_powers"]
