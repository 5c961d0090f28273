"""The emulated Discord world: ids, guilds, channels, members, messages and the permission maths.

Everything here is plain data plus the payload builders that turn it into Discord's JSON shapes.
Nothing in this module does I/O; the server, gateway and scripted users mutate it and dispatch.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import itertools
import secrets
import urllib.parse
from collections.abc import Callable
from typing import Any

JSON = dict[str, Any]
DISCORD_EPOCH_MS = 1_420_070_400_000


class ChannelType(enum.IntEnum):
    """The channel kinds the emulator models."""

    GUILD_TEXT = 0
    DM = 1
    GUILD_VOICE = 2
    GUILD_CATEGORY = 4
    GUILD_ANNOUNCEMENT = 5
    ANNOUNCEMENT_THREAD = 10
    PUBLIC_THREAD = 11
    PRIVATE_THREAD = 12
    GUILD_STAGE_VOICE = 13
    GUILD_FORUM = 15
    GUILD_MEDIA = 16


THREAD_TYPES = (ChannelType.ANNOUNCEMENT_THREAD, ChannelType.PUBLIC_THREAD, ChannelType.PRIVATE_THREAD)
VOICE_TYPES = (ChannelType.GUILD_VOICE, ChannelType.GUILD_STAGE_VOICE)


class Permission(enum.IntFlag):
    """Discord permission bits the routes check (values from Discord's docs)."""

    CREATE_INSTANT_INVITE = 1 << 0
    KICK_MEMBERS = 1 << 1
    BAN_MEMBERS = 1 << 2
    ADMINISTRATOR = 1 << 3
    MANAGE_CHANNELS = 1 << 4
    MANAGE_GUILD = 1 << 5
    ADD_REACTIONS = 1 << 6
    VIEW_CHANNEL = 1 << 10
    SEND_MESSAGES = 1 << 11
    MANAGE_MESSAGES = 1 << 13
    EMBED_LINKS = 1 << 14
    ATTACH_FILES = 1 << 15
    READ_MESSAGE_HISTORY = 1 << 16
    CONNECT = 1 << 20
    SPEAK = 1 << 21
    MUTE_MEMBERS = 1 << 22
    DEAFEN_MEMBERS = 1 << 23
    MOVE_MEMBERS = 1 << 24
    USE_VAD = 1 << 25
    MANAGE_NICKNAMES = 1 << 27
    MANAGE_ROLES = 1 << 28
    MANAGE_WEBHOOKS = 1 << 29
    MANAGE_GUILD_EXPRESSIONS = 1 << 30
    USE_APPLICATION_COMMANDS = 1 << 31
    REQUEST_TO_SPEAK = 1 << 32
    MANAGE_THREADS = 1 << 34
    CREATE_PUBLIC_THREADS = 1 << 35
    CREATE_PRIVATE_THREADS = 1 << 36
    SEND_MESSAGES_IN_THREADS = 1 << 38
    MODERATE_MEMBERS = 1 << 40
    VIEW_CREATOR_MONETIZATION_ANALYTICS = 1 << 41


ALL_PERMISSIONS = (1 << 51) - 1
ELEVATED_PERMISSIONS = int(
    Permission.KICK_MEMBERS
    | Permission.BAN_MEMBERS
    | Permission.ADMINISTRATOR
    | Permission.MANAGE_CHANNELS
    | Permission.MANAGE_GUILD
    | Permission.MANAGE_MESSAGES
    | Permission.MANAGE_ROLES
    | Permission.MANAGE_WEBHOOKS
    | Permission.MANAGE_GUILD_EXPRESSIONS
    | Permission.MANAGE_THREADS
    | Permission.VIEW_CREATOR_MONETIZATION_ANALYTICS
)
"""The permissions Discord's docs mark with ``*``: in a guild with server-wide 2FA (``mfa_level`` 1)
they only work for accounts with 2FA, and for a bot, only if its owner's account has 2FA."""
MFA_ELEVATED = 1
DEFAULT_EVERYONE = (
    Permission.VIEW_CHANNEL
    | Permission.SEND_MESSAGES
    | Permission.ADD_REACTIONS
    | Permission.READ_MESSAGE_HISTORY
    | Permission.EMBED_LINKS
    | Permission.ATTACH_FILES
    | Permission.CONNECT
    | Permission.SPEAK
    | Permission.USE_VAD
    | Permission.USE_APPLICATION_COMMANDS
    | Permission.REQUEST_TO_SPEAK
    | Permission.CREATE_PUBLIC_THREADS
    | Permission.CREATE_PRIVATE_THREADS
    | Permission.SEND_MESSAGES_IN_THREADS
)

BOT_PERMISSIONS = int(
    DEFAULT_EVERYONE
    | Permission.MUTE_MEMBERS
    | Permission.MOVE_MEMBERS
    | Permission.MANAGE_MESSAGES
    | Permission.MANAGE_THREADS
    | Permission.MANAGE_ROLES
)
"""What the bot's role gets by default: what mafiabot asks for when invited."""


class Intent(enum.IntFlag):
    """Gateway intents (bit positions from Discord's docs)."""

    GUILDS = 1 << 0
    GUILD_MEMBERS = 1 << 1
    GUILD_VOICE_STATES = 1 << 7
    GUILD_MESSAGES = 1 << 9
    GUILD_MESSAGE_REACTIONS = 1 << 10
    DIRECT_MESSAGES = 1 << 12
    DIRECT_MESSAGE_REACTIONS = 1 << 13
    MESSAGE_CONTENT = 1 << 15


class SnowflakeFactory:
    """Timestamp-based 64-bit ids, as Discord makes them.

    Guild ids get a fresh millisecond each so that ``(id >> 22) % shard_count`` spreads consecutive
    guilds over the shards instead of piling them onto one.
    """

    def __init__(self, wall: Callable[[], float]) -> None:
        self._wall = wall
        self._last_ms = 0
        self._increment = itertools.count()

    def next(self, *, fresh_ms: bool = False) -> int:
        """Return a new id; ``fresh_ms`` forces a millisecond no earlier id used."""
        ms = int(self._wall() * 1000) - DISCORD_EPOCH_MS
        if ms < self._last_ms or (fresh_ms and ms == self._last_ms):
            ms = self._last_ms + (1 if fresh_ms else 0)
        self._last_ms = ms
        return (ms << 22) | (1 << 17) | (next(self._increment) & 0xFFF)


def iso(ts: float) -> str:
    """Format a unix time the way Discord does."""
    return datetime.datetime.fromtimestamp(ts, datetime.UTC).isoformat()


@dataclasses.dataclass
class User:
    """A Discord account: a person or a bot user."""

    id: int
    name: str
    bot: bool = False
    dms_open: bool = True
    locale: str = "en-US"
    mfa_enabled: bool = True
    """Whether a person's account has 2FA (a bot's counts its application's ``owner_mfa``)."""

    def to_json(self) -> JSON:
        """Return the user object."""
        return {
            "id": str(self.id),
            "username": self.name,
            "discriminator": "0",
            "global_name": None if self.bot else self.name,
            "avatar": None,
            "bot": self.bot,
            "public_flags": 0,
            "flags": 0,
        }


@dataclasses.dataclass
class Application:
    """A bot application: its bot user, token and registered commands."""

    id: int
    name: str
    user: User
    token: str
    owner_id: int
    privileged_intents: int = 0
    owner_mfa: bool = True
    """Whether the owner's account has 2FA; without it the bot's elevated permissions are void in
    guilds that require 2FA (`Emulator.require_mfa`). Discord reports it as the bot user's own
    ``mfa_enabled`` (READY, ``GET /users/@me``)."""
    global_commands: dict[int, JSON] = dataclasses.field(default_factory=dict)
    guild_commands: dict[int, dict[int, JSON]] = dataclasses.field(default_factory=dict)

    def to_json(self, owner: User) -> JSON:
        """Return the application object ``GET /oauth2/applications/@me`` answers."""
        return {
            "id": str(self.id),
            "name": self.name,
            "icon": None,
            "description": "",
            "bot_public": True,
            "bot_require_code_grant": False,
            "owner": owner.to_json(),
            "verify_key": "0" * 64,
            "flags": 0,
            "team": None,
            "bot": self.user.to_json(),
        }


@dataclasses.dataclass
class Role:
    """A guild role; the @everyone role has the guild's id."""

    id: int
    name: str
    permissions: int
    position: int = 0
    managed: bool = False

    def to_json(self) -> JSON:
        """Return the role object."""
        return {
            "id": str(self.id),
            "name": self.name,
            "color": 0,
            "colors": {"primary_color": 0, "secondary_color": None, "tertiary_color": None},
            "hoist": False,
            "icon": None,
            "unicode_emoji": None,
            "position": self.position,
            "permissions": str(self.permissions),
            "managed": self.managed,
            "mentionable": False,
            "flags": 0,
        }


@dataclasses.dataclass
class Overwrite:
    """A channel permission overwrite for a role (type 0) or a member (type 1)."""

    id: int
    type: int
    allow: int = 0
    deny: int = 0

    def to_json(self) -> JSON:
        """Return the overwrite object."""
        return {"id": str(self.id), "type": self.type, "allow": str(self.allow), "deny": str(self.deny)}


@dataclasses.dataclass
class Channel:
    """A guild channel, a thread or a DM."""

    id: int
    type: ChannelType
    name: str
    guild_id: int | None = None
    position: int = 0
    parent_id: int | None = None
    overwrites: dict[int, Overwrite] = dataclasses.field(default_factory=dict)
    last_message_id: int | None = None
    owner_id: int | None = None
    archived: bool = False
    locked: bool = False
    invitable: bool = True
    auto_archive_duration: int = 1440
    archive_timestamp: float = 0.0
    created_at: float = 0.0
    thread_members: dict[int, float] = dataclasses.field(default_factory=dict)
    message_count: int = 0
    recipients: list[int] = dataclasses.field(default_factory=list)

    @property
    def is_thread(self) -> bool:
        """Whether this channel is a thread."""
        return self.type in THREAD_TYPES

    def to_json(self, world: World, viewer: int | None = None) -> JSON:
        """Return the channel object; a thread carries ``member`` when ``viewer`` has joined it."""
        data: JSON = {"id": str(self.id), "type": int(self.type), "name": self.name, "flags": 0}
        data["last_message_id"] = None if self.last_message_id is None else str(self.last_message_id)
        if self.type == ChannelType.DM:
            data.pop("name")
            data["recipients"] = [world.users[r].to_json() for r in self.recipients if r != viewer]
            return data
        data["guild_id"] = str(self.guild_id)
        data["parent_id"] = None if self.parent_id is None else str(self.parent_id)
        data["rate_limit_per_user"] = 0
        if self.is_thread:
            data["owner_id"] = str(self.owner_id)
            data["message_count"] = self.message_count
            data["total_message_sent"] = self.message_count
            data["member_count"] = min(len(self.thread_members), 50)
            data["thread_metadata"] = {
                "archived": self.archived,
                "locked": self.locked,
                "invitable": self.invitable,
                "auto_archive_duration": self.auto_archive_duration,
                "archive_timestamp": iso(self.archive_timestamp),
                "create_timestamp": iso(self.created_at),
            }
            if viewer is not None and viewer in self.thread_members:
                data["member"] = self.member_json(viewer, with_ids=False)
            return data
        data["position"] = self.position
        data["permission_overwrites"] = [o.to_json() for o in self.overwrites.values()]
        data["nsfw"] = False
        if self.type in VOICE_TYPES:
            data.update(bitrate=64000, user_limit=0, rtc_region=None)
        elif self.type in (ChannelType.GUILD_TEXT, ChannelType.GUILD_ANNOUNCEMENT):
            data["topic"] = None
        elif self.type in (ChannelType.GUILD_FORUM, ChannelType.GUILD_MEDIA):
            data.update(topic=None, available_tags=[], default_reaction_emoji=None, default_forum_layout=0)
        return data

    def member_json(self, user_id: int, *, with_ids: bool = True) -> JSON:
        """Return a thread member object."""
        data: JSON = {"join_timestamp": iso(self.thread_members.get(user_id, 0.0)), "flags": 0}
        if with_ids:
            data.update(id=str(self.id), user_id=str(user_id))
        return data


@dataclasses.dataclass
class VoiceState:
    """Where a member is in voice and how they are muted."""

    user_id: int
    channel_id: int
    session_id: str
    self_mute: bool = False
    self_deaf: bool = False
    self_video: bool = False
    """The member's camera is on."""
    self_stream: bool = False
    """The member shares their screen ("Go Live")."""
    suppress: bool = False
    """On a stage: an audience member, who cannot speak whatever their mute flags say."""
    request_to_speak: float | None = None


@dataclasses.dataclass
class Member:
    """A user's membership in a guild; ``mute``/``deaf`` are the sticky server flags."""

    user_id: int
    roles: list[int]
    joined_at: float
    nick: str | None = None
    mute: bool = False
    deaf: bool = False


@dataclasses.dataclass
class Guild:
    """A guild with its roles, channels, members and voice states."""

    id: int
    name: str
    owner_id: int
    created_at: float
    roles: dict[int, Role] = dataclasses.field(default_factory=dict)
    channels: list[int] = dataclasses.field(default_factory=list)
    members: dict[int, Member] = dataclasses.field(default_factory=dict)
    voice_states: dict[int, VoiceState] = dataclasses.field(default_factory=dict)
    mfa_level: int = 0
    """1 (``ELEVATED``): server-wide 2FA, see `ELEVATED_PERMISSIONS`."""

    @property
    def everyone(self) -> Role:
        """The @everyone role."""
        return self.roles[self.id]


IS_SPOILER = 1 << 3
"""The attachment flag of a file marked as a spoiler (``is_spoiler``, or a ``SPOILER_`` file name)."""


@dataclasses.dataclass
class MessageFile:
    """A file attached to a message: its bytes, kept while the message keeps it."""

    id: int
    channel_id: int
    filename: str
    content_type: str
    data: bytes
    description: str | None = None
    width: int | None = None
    height: int | None = None
    spoiler: bool = False

    @property
    def path(self) -> str:
        """Its CDN path, as Discord's ``/attachments/{channel}/{attachment}/{filename}``."""
        return f"/attachments/{self.channel_id}/{self.id}/{urllib.parse.quote(self.filename)}"

    def to_json(self, world: World) -> JSON:
        """The attachment object, its URL signed now (Discord signs a link each time it hands one out)."""
        url = world.cdn_url(self.path)
        data: JSON = {
            "id": str(self.id), "filename": self.filename, "size": len(self.data), "url": url, "proxy_url": url,
            "content_type": self.content_type,
        }
        if self.description is not None:
            data["description"] = self.description
        if self.width is not None and self.height is not None:
            data["width"], data["height"] = self.width, self.height
        if self.spoiler or self.filename.startswith("SPOILER_"):
            data["flags"] = IS_SPOILER
        return data


@dataclasses.dataclass
class Message:
    """A message; ``ephemeral_for`` makes it visible to that one user only."""

    id: int
    channel_id: int
    author_id: int
    content: str
    created_at: float
    guild_id: int | None = None
    embeds: list[JSON] = dataclasses.field(default_factory=list)
    components: list[JSON] = dataclasses.field(default_factory=list)
    flags: int = 0
    type: int = 0
    edited_at: float | None = None
    reactions: dict[str, list[int]] = dataclasses.field(default_factory=dict)
    webhook_id: int | None = None
    application_id: int | None = None
    interaction_id: int | None = None
    ephemeral_for: int | None = None
    deleted: bool = False
    attachments: list[MessageFile] = dataclasses.field(default_factory=list)

    def to_json(self, world: World, viewer: int | None = None) -> JSON:
        """Return the message object as ``viewer`` sees it (``me`` on reactions)."""
        author = world.users[self.author_id]
        data: JSON = {
            "id": str(self.id),
            "channel_id": str(self.channel_id),
            "author": author.to_json(),
            "content": self.content,
            "timestamp": iso(self.created_at),
            "edited_timestamp": None if self.edited_at is None else iso(self.edited_at),
            "tts": False,
            "mention_everyone": False,
            "mentions": [],
            "mention_roles": [],
            "attachments": [a.to_json(world) for a in self.attachments],
            "embeds": self.embeds,
            "components": self.components,
            "pinned": False,
            "type": self.type,
            "flags": self.flags,
        }
        if self.reactions:
            data["reactions"] = [
                {
                    "emoji": emoji_json(key),
                    "count": len(users),
                    "count_details": {"burst": 0, "normal": len(users)},
                    "me": viewer in users,
                    "me_burst": False,
                    "burst_colors": [],
                }
                for key, users in self.reactions.items()
                if users
            ]
        if self.guild_id is not None:
            data["guild_id"] = str(self.guild_id)
        if self.webhook_id is not None:
            data["webhook_id"] = str(self.webhook_id)
        if self.application_id is not None:
            data["application_id"] = str(self.application_id)
        if self.interaction_id is not None:
            data["interaction_metadata"] = {
                "id": str(self.interaction_id),
                "type": 2,
                "user": world.users[world.interactions[self.interaction_id].user_id].to_json(),
                "authorizing_integration_owners": {},
            }
        return data


@dataclasses.dataclass
class Interaction:
    """An interaction a user started, and what the application answered."""

    id: int
    token: str
    application_id: int
    type: int
    user_id: int
    channel_id: int
    guild_id: int | None
    data: JSON
    created_at: float
    """Monotonic clock time, for the 3 s answer window and the 15 min token life."""
    message_id: int | None = None
    response_type: int | None = None
    original_message_id: int | None = None
    followup_ids: list[int] = dataclasses.field(default_factory=list)
    deferred_ephemeral: bool = False
    modal: JSON | None = None
    choices: list[JSON] | None = None
    """The choices an autocomplete interaction was answered with (callback type 8)."""


def emoji_json(key: str) -> JSON:
    """Turn a reaction key (``name`` or ``name:id``) into an emoji object."""
    name, _, emoji_id = key.partition(":")
    return {"id": emoji_id or None, "name": name}


def emoji_key(raw: str) -> str:
    """Normalise the emoji segment of a reaction route (``👍`` or ``name:id``)."""
    name, _, emoji_id = raw.partition(":")
    return f"{name}:{emoji_id}" if emoji_id else name


def _guild_fields(guild: Guild) -> JSON:
    """The guild object's own fields, the same for every viewer."""
    return {
        "id": str(guild.id),
        "name": guild.name,
        "icon": None,
        "splash": None,
        "discovery_splash": None,
        "banner": None,
        "description": None,
        "owner_id": str(guild.owner_id),
        "afk_channel_id": None,
        "afk_timeout": 300,
        "verification_level": 0,
        "default_message_notifications": 0,
        "explicit_content_filter": 0,
        "mfa_level": guild.mfa_level,
        "nsfw_level": 0,
        "premium_tier": 0,
        "premium_subscription_count": 0,
        "premium_progress_bar_enabled": False,
        "system_channel_id": None,
        "system_channel_flags": 0,
        "rules_channel_id": None,
        "public_updates_channel_id": None,
        "safety_alerts_channel_id": None,
        "preferred_locale": "en-US",
        "vanity_url_code": None,
        "max_members": 500000,
        "features": [],
        "roles": [r.to_json() for r in guild.roles.values()],
        "emojis": [],
        "stickers": [],
        "soundboard_sounds": [],
    }


def _overwritten(perms: int, channel: Channel, guild: Guild, member: Member) -> int:
    """Apply a channel's overwrites in Discord's order: @everyone, the member's roles, the member."""
    everyone = channel.overwrites.get(guild.id)
    if everyone is not None:
        perms = (perms & ~everyone.deny) | everyone.allow
    allow = deny = 0
    for role_id in member.roles:
        ow = channel.overwrites.get(role_id)
        if ow is not None and ow.type == 0:
            allow |= ow.allow
            deny |= ow.deny
    perms = (perms & ~deny) | allow
    mine = channel.overwrites.get(member.user_id)
    if mine is not None and mine.type == 1:
        perms = (perms & ~mine.deny) | mine.allow
    return perms


class World:
    """Every object of the emulated Discord, by id."""

    def __init__(self, wall: Callable[[], float]) -> None:
        self.wall = wall
        self.ids = SnowflakeFactory(wall)
        self.users: dict[int, User] = {}
        self.applications: dict[int, Application] = {}
        self.guilds: dict[int, Guild] = {}
        self.channels: dict[int, Channel] = {}
        self.messages: dict[int, Message] = {}
        self.channel_messages: dict[int, list[int]] = {}
        self.interactions: dict[int, Interaction] = {}
        self.interactions_by_token: dict[str, Interaction] = {}
        self.files: dict[int, MessageFile] = {}
        """Every file a live message carries, by attachment id (the CDN serves these)."""
        self.cdn_url: Callable[[str], str] = lambda path: path
        """Turns a CDN path into a signed link; the CDN sets it."""

    # -- lookups ------------------------------------------------------------------------------

    def app_by_token(self, token: str) -> Application | None:
        """Find the application whose bot token this is."""
        return next((a for a in self.applications.values() if a.token == token), None)

    def app_by_user(self, user_id: int) -> Application | None:
        """Find the application whose bot user this is."""
        return next((a for a in self.applications.values() if a.user.id == user_id), None)

    def guild_of(self, channel: Channel) -> Guild | None:
        """Return the channel's guild, if it has one."""
        return None if channel.guild_id is None else self.guilds.get(channel.guild_id)

    def attachment_bytes(self, message_id: int) -> list[tuple[str, bytes]]:
        """A message's files as (file name, bytes), in the message's order: what a test reads back."""
        return [(f.filename, f.data) for f in self.messages[message_id].attachments]

    def set_attachments(self, message: Message, files: list[MessageFile]) -> None:
        """Give ``message`` exactly ``files``; the ones it drops leave the CDN."""
        kept = {f.id for f in files}
        for gone in message.attachments:
            if gone.id not in kept:
                self.files.pop(gone.id, None)
        message.attachments = files
        self.files.update((f.id, f) for f in files)

    def channel_messages_of(self, channel_id: int) -> list[Message]:
        """Every live message of a channel, oldest first."""
        return [m for i in self.channel_messages.get(channel_id, []) if not (m := self.messages[i]).deleted]

    def visible_messages(self, user_id: int, channel: Channel) -> list[Message]:
        """What the user sees in a channel: nothing if hidden; others' ephemeral answers never."""
        return [m for m in self.channel_messages_of(channel.id) if self.can_see_message(user_id, m)]

    def visible_channels(self, user_id: int, guild: Guild) -> list[Channel]:
        """Channels and threads of a guild the user can see."""
        return [c for cid in guild.channels if self.can_view(user_id, c := self.channels[cid])]

    def add_message(
        self,
        channel: Channel,
        author_id: int,
        data: JSON,
        *,
        message_type: int = 0,
        ephemeral_for: int | None = None,
    ) -> Message:
        """Store a new message from a REST or webhook body (no dispatch)."""
        message = Message(
            id=self.ids.next(),
            channel_id=channel.id,
            author_id=author_id,
            content=str(data.get("content") or ""),
            created_at=self.wall(),
            guild_id=channel.guild_id,
            embeds=list(data.get("embeds") or []),
            components=list(data.get("components") or []),
            flags=int(data.get("flags") or 0),
            type=message_type,
            ephemeral_for=ephemeral_for,
        )
        self.messages[message.id] = message
        self.channel_messages.setdefault(channel.id, []).append(message.id)
        if ephemeral_for is None:
            channel.last_message_id = message.id
            if channel.is_thread:
                channel.message_count += 1
        return message

    def dm_channel(self, a: int, b: int) -> Channel:
        """Return (creating it once) the DM channel between two users."""
        for channel in self.channels.values():
            if channel.type == ChannelType.DM and sorted(channel.recipients) == sorted((a, b)):
                return channel
        channel = Channel(id=self.ids.next(), type=ChannelType.DM, name="", recipients=[a, b])
        self.channels[channel.id] = channel
        return channel

    # -- permissions --------------------------------------------------------------------------

    def lacks_mfa(self, guild: Guild, user_id: int) -> bool:
        """Whether the guild requires 2FA and this account (a bot: its owner's) has none."""
        if guild.mfa_level < MFA_ELEVATED or user_id == guild.owner_id:
            return False
        app = self.app_by_user(user_id)
        if app is not None:
            return not app.owner_mfa
        user = self.users.get(user_id)
        return user is not None and not user.mfa_enabled

    def base_permissions(self, guild: Guild, user_id: int, *, mfa: bool = True) -> int:
        """Guild-level permissions: @everyone plus the member's roles; owners and admins get all.

        With ``mfa`` (always, but to tell 50013 from 60003) the elevated permissions of an account
        that `lacks_mfa` are void, ADMINISTRATOR's bypass included.
        """
        if user_id == guild.owner_id:
            return ALL_PERMISSIONS
        member = guild.members.get(user_id)
        if member is None:
            return 0
        perms = guild.everyone.permissions
        for role_id in member.roles:
            role = guild.roles.get(role_id)
            if role is not None:
                perms |= role.permissions
        if mfa and self.lacks_mfa(guild, user_id):
            perms &= ~ELEVATED_PERMISSIONS
        return ALL_PERMISSIONS if perms & Permission.ADMINISTRATOR else perms

    def permissions(self, user_id: int, channel: Channel, *, mfa: bool = True) -> int:
        """Channel permissions as Discord computes them: base, @everyone, roles, then member overwrite."""
        if channel.type == ChannelType.DM:
            return int(DEFAULT_EVERYONE) if user_id in channel.recipients else 0
        guild = self.guild_of(channel)
        if guild is None or user_id not in guild.members:
            return 0
        if channel.is_thread:
            return self._thread_permissions(user_id, channel, mfa=mfa)
        perms = self.base_permissions(guild, user_id, mfa=mfa)
        if perms & Permission.ADMINISTRATOR:
            return ALL_PERMISSIONS
        perms = _overwritten(perms, channel, guild, guild.members[user_id])
        if not perms & Permission.VIEW_CHANNEL:
            return 0
        if mfa and self.lacks_mfa(guild, user_id):
            perms &= ~ELEVATED_PERMISSIONS
        return perms

    def _thread_permissions(self, user_id: int, thread: Channel, *, mfa: bool) -> int:
        """A thread's are its parent's; a private thread hides from those neither in it nor moderating."""
        parent = self.channels[thread.parent_id] if thread.parent_id is not None else thread
        perms = self.permissions(user_id, parent, mfa=mfa)
        if thread.type == ChannelType.PRIVATE_THREAD and not (
            user_id in thread.thread_members or perms & Permission.MANAGE_THREADS
        ):
            perms &= ~Permission.VIEW_CHANNEL
        return perms

    def can_view(self, user_id: int, channel: Channel) -> bool:
        """Whether the user sees the channel at all."""
        return bool(self.permissions(user_id, channel) & Permission.VIEW_CHANNEL)

    def can_see_message(self, user_id: int, message: Message) -> bool:
        """Whether the user sees this message (ephemeral ones only their addressee)."""
        if message.deleted:
            return False
        if message.ephemeral_for is not None:
            return message.ephemeral_for == user_id
        return self.can_view(user_id, self.channels[message.channel_id])

    # -- payloads -----------------------------------------------------------------------------

    def member_json(self, guild: Guild, user_id: int, *, with_user: bool = True) -> JSON:
        """Return the guild member object."""
        member = guild.members[user_id]
        data: JSON = {
            "nick": member.nick,
            "avatar": None,
            "banner": None,
            "roles": [str(r) for r in member.roles],
            "joined_at": iso(member.joined_at),
            "premium_since": None,
            "deaf": member.deaf,
            "mute": member.mute,
            "flags": 0,
            "pending": False,
            "communication_disabled_until": None,
        }
        if with_user:
            data["user"] = self.users[user_id].to_json()
        return data

    def voice_state_json(self, guild: Guild, user_id: int) -> JSON:
        """Return the voice state object (``channel_id`` null once the user left)."""
        state = guild.voice_states.get(user_id)
        member = guild.members[user_id]
        return {
            "guild_id": str(guild.id),
            "channel_id": None if state is None else str(state.channel_id),
            "user_id": str(user_id),
            "member": self.member_json(guild, user_id),
            "session_id": "" if state is None else state.session_id,
            "deaf": member.deaf,
            "mute": member.mute,
            "self_deaf": False if state is None else state.self_deaf,
            "self_mute": False if state is None else state.self_mute,
            "self_video": False if state is None else state.self_video,
            "self_stream": False if state is None else state.self_stream,
            "suppress": False if state is None else state.suppress,
            "request_to_speak_timestamp": None
            if state is None or state.request_to_speak is None
            else iso(state.request_to_speak),
        }

    def guild_create_json(self, guild: Guild, viewer: int, *, with_all_members: bool) -> JSON:
        """Return GUILD_CREATE's payload as the viewer's session gets it.

        Without GUILD_MEMBERS Discord sends only the viewer's own member and those in voice.
        """
        in_voice = set(guild.voice_states)
        member_ids = [uid for uid in guild.members if with_all_members or uid == viewer or uid in in_voice]
        channels = [self.channels[c] for c in guild.channels]
        joined = guild.members[viewer].joined_at if viewer in guild.members else guild.created_at
        return {
            **_guild_fields(guild),
            "joined_at": iso(joined),
            "large": False,
            "unavailable": False,
            "member_count": len(guild.members),
            "members": [self.member_json(guild, uid) for uid in member_ids],
            "voice_states": [
                {k: v for k, v in self.voice_state_json(guild, uid).items() if k not in ("guild_id", "member")}
                for uid in guild.voice_states
            ],
            "channels": [c.to_json(self) for c in channels if not c.is_thread],
            "threads": [c.to_json(self, viewer) for c in channels if self._listed_thread(viewer, c)],
            "presences": [],
            "stage_instances": [],
            "guild_scheduled_events": [],
        }

    def _listed_thread(self, viewer: int, channel: Channel) -> bool:
        """Whether GUILD_CREATE lists this channel among the viewer's threads: active and visible."""
        return channel.is_thread and not channel.archived and self.can_view(viewer, channel)

    def new_token(self) -> str:
        """Return an opaque secret (bot or interaction token)."""
        return secrets.token_urlsafe(32)
