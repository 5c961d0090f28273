"""The table manager: lobbies being formed, running tables, and recovery after a restart.

Everything here is about Discord-independent bookkeeping plus the few Discord facts a refusal
needs (is the player in the table's voice channel, may the bot act in these channels).
"""

from __future__ import annotations

import itertools
import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import discord

from engine import Abandon, Game, Phase, RulesError, Ruleset, command_from_data, from_mapping
from mafiabot.runtime import Lobby, Table, TableError, deal_seats, new_seed, start_command

if TYPE_CHECKING:
    from mafiabot.bot import MafiaBot
    from mafiabot.store.records import StoredGame

log = logging.getLogger(__name__)

TEXT_PERMISSIONS = (
    "send_messages", "read_message_history", "add_reactions", "manage_messages",
    "create_private_threads", "send_messages_in_threads", "manage_threads",
)
VOICE_PERMISSIONS = ("connect", "mute_members")


def ruleset_from_stored(data: dict[str, Any]) -> Ruleset:
    """Read back ``Ruleset.to_dict()`` as the store keeps it."""
    return from_mapping(data)


@dataclass(frozen=True, slots=True)
class Seated:
    """A player joining a lobby, as the cog saw them."""

    user_id: int
    name: str
    voice_channel_id: int | None


class TableManager:
    """Owns every lobby and running table of this bot process."""

    def __init__(self, bot: MafiaBot) -> None:
        self.bot = bot
        self.lobbies: dict[int, Lobby] = {}
        self.tables: dict[int, Table] = {}
        self._lobby_ids = itertools.count(int(time.time() * 1000))
        self._recovered = False

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
        ruleset_name: str | None, seats: int | None,
    ) -> Lobby:
        """Create a lobby in a text channel bound to a voice channel.

        Raises:
            TableError: the channel is busy, the ruleset or seat count is wrong, or the bot lacks permissions.
        """
        if self.lobby_in(channel_id) or self.table_in(channel_id):
            raise TableError("lobby.channel_busy")
        voice_id = voice_channel_id or judge.voice_channel_id
        if voice_id is None:
            raise TableError("lobby.no_voice")
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
        lobby = Lobby(
            id=next(self._lobby_ids), guild_id=guild.id, channel_id=channel_id, voice_channel_id=voice_id,
            judge_id=judge.user_id, ruleset=ruleset, language=language, seats=count,
        )
        self.lobbies[lobby.id] = lobby
        return lobby

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
            TableError: not in the table's voice channel, already in, busy elsewhere, or the table is full.
        """
        lobby = self.lobby(lobby_id)
        if lobby.has(player.user_id):
            raise TableError("lobby.already_joined")
        if player.voice_channel_id != lobby.voice_channel_id:
            raise TableError("lobby.not_in_voice", voice=lobby.voice_channel_id)
        if self._busy(lobby.guild_id, player.user_id):
            raise TableError("lobby.in_other_game")
        if len(lobby.players) >= lobby.seats:
            raise TableError("lobby.full", seats=lobby.seats)
        lobby.players.append((player.user_id, player.name))
        return lobby

    def leave(self, lobby_id: int, user_id: int) -> Lobby:
        """Give a lobby seat back.

        Raises:
            TableError: the player had not joined.
        """
        lobby = self.lobby(lobby_id)
        if not lobby.has(user_id):
            raise TableError("lobby.not_joined")
        lobby.players = [(u, n) for u, n in lobby.players if u != user_id]
        return lobby

    def _require_judge(self, judge_id: int, actor: int, *, admin: bool) -> None:
        if actor != judge_id and not admin:
            raise TableError("table.not_judge")

    async def start(self, channel_id: int, actor: int, *, admin: bool = False) -> Table:
        """Seat the lobby's players, deal the cards, and start the game.

        Raises:
            TableError: no lobby here, not the judge, or the seat count does not match.
        """
        lobby = self.lobby_in(channel_id)
        if lobby is None:
            raise TableError("lobby.none_here")
        self._require_judge(lobby.judge_id, actor, admin=admin)
        if len(lobby.players) != lobby.seats:
            raise TableError("lobby.wrong_count", count=len(lobby.players), seats=lobby.seats)
        configured = self.bot.config.game.seed
        seed = configured if configured is not None else new_seed()
        seats = deal_seats(lobby, order=self.bot.config.game.seat_order, seed=seed)
        lobby.players = seats
        store = self.bot.store
        game_id = await store.create_game(
            guild_id=lobby.guild_id, channel_id=lobby.channel_id, voice_channel_id=lobby.voice_channel_id,
            judge_id=lobby.judge_id, ruleset=lobby.ruleset, language=lobby.language,
        )
        del self.lobbies[lobby.id]
        settings = await self.bot.guild_settings(lobby.guild_id)
        table = self._make_table(
            game_id, lobby, seats, Game(lobby.ruleset), mute_spectators=settings.mute_spectators,
            voice_cues=settings.voice_cues,
        )
        self.tables[game_id] = table
        events = await table.submit_start(start_command(lobby, seed), seats)
        table.start_effects(events)
        return table

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
            channel = bot.get_channel(lobby.voice_channel_id)
            if isinstance(channel, discord.VoiceChannel | discord.StageChannel):
                return [uid for uid in channel.voice_states if uid != bot.user.id] if bot.user else []
            return []

        table = Table(
            game_id=game_id, lobby=lobby, seats=seats, game=game, log_store=bot.store, effects=bot.presenter,
            editor=bot.editor, ledger=bot.store, time_scale=bot.config.game.time_scale,
            spectators=spectators, mute_spectators=bot.config.voice.mute_spectators or mute_spectators,
            clock=bot.table_clock(),
        )
        table.done_callback = self._forget
        if bot.config.voice.cues and voice_cues:
            from mafiabot.voicecues import cues_for_table

            table.cues = cues_for_table(bot, table)
        log.info("table %s in channel %s: %d seats", game_id, lobby.channel_id, len(seats))
        return table

    def _forget(self, table: Table) -> None:
        self.tables.pop(table.id, None)

    async def cancel(self, channel_id: int, actor: int, *, admin: bool = False) -> str:
        """Cancel the lobby, or abandon the running game, of a text channel.

        Raises:
            TableError: nothing to cancel here, or not the judge.
        """
        lobby = self.lobby_in(channel_id)
        if lobby is not None:
            self._require_judge(lobby.judge_id, actor, admin=admin)
            del self.lobbies[lobby.id]
            return "lobby"
        table = self.table_in(channel_id)
        if table is None:
            raise TableError("lobby.none_here")
        self._require_judge(table.judge_id, actor, admin=admin)
        await table.submit(Abandon(), actor=actor)
        return "game"

    # -- restart ---------------------------------------------------------------------------------

    async def recover(self) -> None:
        """Rebuild every open game of this process's shards and lift every mute owed elsewhere."""
        if self._recovered:
            return
        self._recovered = True
        store = self.bot.store
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
        table.meta = dict(stored.discord)
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
        from mafiabot.voice import NotInVoiceError

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
        """Stop the tables' clocks; their state is already stored."""
        for table in self.tables.values():
            table.stop()


__all__ = ["RulesError", "Seated", "TableManager", "ruleset_from_stored"]
