"""Gateway event dispatch: who receives which event, in the shape their session gets it.

A guild event goes to the sessions whose bot is a member, on the guild's shard, with the intent,
and (for channel events) able to see the channel, as on Discord. REST handlers, scripted users and
the `Emulator`'s factories all announce their changes through one `Events`.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Iterable

from .config import EmulatorConfig
from .gateway import Gateway, GatewaySession
from .state import JSON, Application, Channel, Guild, Intent, Interaction, Message, Role, World, emoji_json

Payload = JSON | Callable[[GatewaySession], JSON | None]

GATEWAY_ONLY_GUILD_FIELDS = ("members", "channels", "threads", "voice_states", "presences", "joined_at", "large")
"""GUILD_CREATE's lists that the guild object of REST and GUILD_UPDATE leaves out."""


@dataclasses.dataclass(frozen=True)
class Audience:
    """Who an event is for; ``None`` everywhere means every session on shard 0."""

    guild_id: int | None = None
    intent: int | None = None
    channel: Channel | None = None
    users: frozenset[int] | None = None
    app: Application | None = None


def interaction_payload(world: World, interaction: Interaction) -> JSON:
    """The INTERACTION_CREATE payload discord.py parses into an ``Interaction``."""
    app = world.applications[interaction.application_id]
    channel = world.channels[interaction.channel_id]
    user = world.users[interaction.user_id]
    data: JSON = {
        "id": str(interaction.id),
        "application_id": str(app.id),
        "type": interaction.type,
        "data": interaction.data,
        "channel_id": str(channel.id),
        "channel": channel.to_json(world, app.user.id),
        "token": interaction.token,
        "version": 1,
        "locale": user.locale,
        "app_permissions": str(world.permissions(app.user.id, channel)),
        "entitlements": [],
        "authorizing_integration_owners": {"0": str(interaction.guild_id or 0)},
        "context": 0 if interaction.guild_id else 1,
        "attachment_size_limit": 10 * 1024 * 1024,
    }
    if interaction.guild_id is not None:
        guild = world.guilds[interaction.guild_id]
        data["guild_id"] = str(guild.id)
        data["guild_locale"] = "en-US"
        data["guild"] = {"id": str(guild.id), "locale": "en-US", "features": []}
        data["member"] = {
            **world.member_json(guild, user.id),
            "permissions": str(world.permissions(user.id, channel)),
        }
    else:
        data["user"] = user.to_json()
    if interaction.message_id is not None:
        data["message"] = world.messages[interaction.message_id].to_json(world)
    return data


def guild_object(world: World, guild: Guild, viewer: int) -> JSON:
    """The guild object REST answers and GUILD_UPDATE carries: GUILD_CREATE without its lists."""
    data = world.guild_create_json(guild, viewer, with_all_members=False)
    for key in GATEWAY_ONLY_GUILD_FIELDS:
        data.pop(key, None)
    return data


class Events:
    """Sends gateway events to the sessions that would get them on Discord."""

    def __init__(
        self, world: World, config: EmulatorConfig, gateway: Gateway, changed: Callable[[], None]
    ) -> None:
        self.world = world
        self.config = config
        self.gateway = gateway
        self._changed = changed
        """Wakes the emulator's waiters; called after every dispatch."""

    def dispatch(
        self,
        event: str,
        payload: Payload,
        *,
        guild_id: int | None = None,
        intent: int | None = None,
        channel: Channel | None = None,
        users: Iterable[int] | None = None,
        app: Application | None = None,
    ) -> None:
        """Send a gateway event to every session that would get it on Discord.

        ``users`` limits DM events to the recipients; ``app`` limits interactions to their application.
        """
        audience = Audience(guild_id, intent, channel, None if users is None else frozenset(users), app)
        ready_at = asyncio.get_running_loop().time() + self.config.frame_delay()
        for session in self.gateway.live_sessions():
            if not self._receives(session, audience):
                continue
            data = payload(session) if callable(payload) else payload
            if data is not None:
                session.push(event, data, ready_at)
        self._changed()

    def _receives(self, session: GatewaySession, audience: Audience) -> bool:
        uid = session.app.user.id
        if audience.app is not None and session.app is not audience.app:
            return False
        if not self._on_shard(session, audience.guild_id):
            return False
        if audience.users is not None and uid not in audience.users:
            return False
        if audience.intent is not None and not session.intents & audience.intent:
            return False
        return audience.channel is None or self.world.can_view(uid, audience.channel)

    def _on_shard(self, session: GatewaySession, guild_id: int | None) -> bool:
        """A guild event needs the bot in the guild and the guild on its shard; others go to shard 0."""
        if guild_id is None:
            return session.shard_id == 0
        guild = self.world.guilds.get(guild_id)
        return guild is not None and session.app.user.id in guild.members and session.handles_guild(guild_id)

    def emit_message(self, event: str, message: Message) -> None:
        """Dispatch MESSAGE_CREATE/UPDATE, stripping content for sessions without MESSAGE_CONTENT."""
        if message.ephemeral_for is not None:
            self._changed()
            return
        world = self.world
        channel = world.channels[message.channel_id]
        guild = world.guild_of(channel)

        def build(session: GatewaySession) -> JSON:
            uid = session.app.user.id
            data = message.to_json(world, uid)
            if guild is not None and message.author_id in guild.members:
                data["member"] = world.member_json(guild, message.author_id, with_user=False)
            if (
                guild is not None
                and not session.intents & Intent.MESSAGE_CONTENT
                and uid != message.author_id
                and f"<@{uid}>" not in message.content
            ):
                data.update(content="", embeds=[], components=[], attachments=[])
            return data

        if guild is None:
            self.dispatch(event, build, users=channel.recipients, intent=Intent.DIRECT_MESSAGES)
        else:
            self.dispatch(event, build, guild_id=guild.id, intent=Intent.GUILD_MESSAGES, channel=channel)

    def emit_message_delete(self, message: Message) -> None:
        """Dispatch MESSAGE_DELETE."""
        channel = self.world.channels[message.channel_id]
        data: JSON = {"id": str(message.id), "channel_id": str(channel.id)}
        if channel.guild_id is None:
            self.dispatch("MESSAGE_DELETE", data, users=channel.recipients, intent=Intent.DIRECT_MESSAGES)
        else:
            data["guild_id"] = str(channel.guild_id)
            self.dispatch(
                "MESSAGE_DELETE", data, guild_id=channel.guild_id, intent=Intent.GUILD_MESSAGES, channel=channel
            )

    def emit_reaction(self, message: Message, user_id: int, key: str, *, added: bool) -> None:
        """Dispatch MESSAGE_REACTION_ADD/REMOVE."""
        channel = self.world.channels[message.channel_id]
        data: JSON = {
            "user_id": str(user_id),
            "channel_id": str(channel.id),
            "message_id": str(message.id),
            "emoji": emoji_json(key),
            "burst": False,
            "type": 0,
        }
        event = "MESSAGE_REACTION_ADD" if added else "MESSAGE_REACTION_REMOVE"
        if channel.guild_id is None:
            self.dispatch(event, data, users=channel.recipients, intent=Intent.DIRECT_MESSAGE_REACTIONS)
            return
        guild = self.world.guilds[channel.guild_id]
        data["guild_id"] = str(guild.id)
        if added:
            data["message_author_id"] = str(message.author_id)
            data["burst_colors"] = []
            if user_id in guild.members:
                data["member"] = self.world.member_json(guild, user_id)
        self.dispatch(event, data, guild_id=guild.id, intent=Intent.GUILD_MESSAGE_REACTIONS, channel=channel)

    def emit_voice_state(self, guild: Guild, user_id: int) -> None:
        """Dispatch VOICE_STATE_UPDATE for a member."""
        self.dispatch(
            "VOICE_STATE_UPDATE",
            self.world.voice_state_json(guild, user_id),
            guild_id=guild.id,
            intent=Intent.GUILD_VOICE_STATES,
        )

    def emit_member_add(self, guild: Guild, user_id: int) -> None:
        """Dispatch GUILD_MEMBER_ADD (GUILD_MEMBERS intent)."""
        data = {**self.world.member_json(guild, user_id), "guild_id": str(guild.id)}
        self.dispatch("GUILD_MEMBER_ADD", data, guild_id=guild.id, intent=Intent.GUILD_MEMBERS)

    def emit_member_update(self, guild: Guild, user_id: int) -> None:
        """Dispatch GUILD_MEMBER_UPDATE (GUILD_MEMBERS intent, or the session's own member)."""
        data = {**self.world.member_json(guild, user_id), "guild_id": str(guild.id)}

        def build(session: GatewaySession) -> JSON | None:
            if session.intents & Intent.GUILD_MEMBERS or session.app.user.id == user_id:
                return data
            return None

        self.dispatch("GUILD_MEMBER_UPDATE", build, guild_id=guild.id)

    def emit_channel(self, event: str, channel: Channel) -> None:
        """Dispatch CHANNEL_CREATE/UPDATE/DELETE or THREAD_CREATE/UPDATE/DELETE."""
        world = self.world
        if channel.is_thread:

            def build(session: GatewaySession) -> JSON:
                data = channel.to_json(world, session.app.user.id)
                if event == "THREAD_CREATE":
                    data["newly_created"] = True
                return data

            self.dispatch(event, build, guild_id=channel.guild_id, intent=Intent.GUILDS, channel=channel)
        else:
            self.dispatch(event, channel.to_json(world), guild_id=channel.guild_id, intent=Intent.GUILDS)

    def emit_thread_members(self, thread: Channel, added: list[int], removed: list[int]) -> None:
        """Dispatch THREAD_MEMBERS_UPDATE; others' changes need GUILD_MEMBERS, as on Discord."""
        world = self.world
        guild = world.guilds[thread.guild_id or 0]

        def build(session: GatewaySession) -> JSON | None:
            uid = session.app.user.id
            if not session.intents & Intent.GUILD_MEMBERS and uid not in added and uid not in removed:
                return None
            members = []
            for user_id in added:
                member = thread.member_json(user_id)
                if user_id in guild.members:
                    member["member"] = world.member_json(guild, user_id)
                members.append(member)
            return {
                "id": str(thread.id),
                "guild_id": str(guild.id),
                "member_count": min(len(thread.thread_members), 50),
                "added_members": members,
                "removed_member_ids": [str(u) for u in removed],
            }

        self.dispatch("THREAD_MEMBERS_UPDATE", build, guild_id=guild.id, intent=Intent.GUILDS)

    def emit_role(self, event: str, guild: Guild, role: Role) -> None:
        """Dispatch GUILD_ROLE_CREATE or GUILD_ROLE_UPDATE (GUILDS intent)."""
        data = {"guild_id": str(guild.id), "role": role.to_json()}
        self.dispatch(event, data, guild_id=guild.id, intent=Intent.GUILDS)

    def emit_guild_update(self, guild: Guild) -> None:
        """Dispatch GUILD_UPDATE: the guild object without the gateway-only lists."""

        def build(session: GatewaySession) -> JSON:
            return guild_object(self.world, guild, session.app.user.id)

        self.dispatch("GUILD_UPDATE", build, guild_id=guild.id, intent=Intent.GUILDS)

    def emit_guild_create(self, guild: Guild, app: Application) -> None:
        """Send GUILD_CREATE to the application's live sessions on the guild's shard (a bot just joined)."""
        for session in self.gateway.live_sessions():
            if session.app is app and session.handles_guild(guild.id):
                with_members = bool(session.intents & Intent.GUILD_MEMBERS)
                data = self.world.guild_create_json(guild, app.user.id, with_all_members=with_members)
                session.push("GUILD_CREATE", data, asyncio.get_running_loop().time())
        self._changed()

    def emit_interaction(self, interaction: Interaction) -> None:
        """Dispatch INTERACTION_CREATE to the application the interaction is for."""
        app = self.world.applications[interaction.application_id]
        self.dispatch(
            "INTERACTION_CREATE",
            interaction_payload(self.world, interaction),
            guild_id=interaction.guild_id,
            app=app,
            users=None if interaction.guild_id is not None else [app.user.id],
        )
