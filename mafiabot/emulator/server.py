"""The `Emulator`: one aiohttp server with REST, the gateway, the control API and the model.

It also owns event dispatch (who receives which gateway event), the factories tests use to build
a guild, the inspection helpers, and `wait_for`, which wakes on every state change instead of
polling.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import yarl
from aiohttp import web

from .attachments import Attachments, add_attachment_routes
from .gateway import Gateway, GatewaySession
from .ratelimit import Clock, RateLimitConfig, RateLimiter, RealClock
from .spec import SpecValidator, Violation
from .state import (
    DEFAULT_EVERYONE,
    JSON,
    MFA_ELEVATED,
    Application,
    Channel,
    ChannelType,
    Guild,
    Intent,
    Interaction,
    Member,
    Message,
    Overwrite,
    Role,
    User,
    VoiceState,
    World,
)

if TYPE_CHECKING:
    from .users import ScriptedUser

_log = logging.getLogger(__name__)
T = TypeVar("T")
Payload = JSON | Callable[[GatewaySession], JSON | None]


@dataclasses.dataclass
class EmulatorConfig:
    """Knobs of one emulator instance.

    Attributes:
        latency_ms: Added round trip: REST answers wait this long, gateway frames half of it.
        heartbeat_interval_ms: What HELLO asks clients for.
        rate_limits: Bucket sizes and windows.
        spec_path: OpenAPI file; ``None`` means the env var or the default location.
        resume_buffer: Events kept per session for RESUME.
        interaction_ack_seconds: How long an interaction may wait for its first answer.
        interaction_token_seconds: How long follow-ups stay possible.
    """

    latency_ms: float = 0.0
    heartbeat_interval_ms: int = 41_250
    rate_limits: RateLimitConfig = dataclasses.field(default_factory=RateLimitConfig)
    spec_path: Path | None = None
    resume_buffer: int = 5000
    interaction_ack_seconds: float = 3.0
    interaction_token_seconds: float = 900.0


@dataclasses.dataclass(frozen=True)
class RequestRecord:
    """One REST request as the emulator saw it."""

    method: str
    path: str
    route: str | None
    status: int
    app_id: int | None
    body: Any


@dataclasses.dataclass
class FaultRule:
    """A failure to inject into matching REST requests.

    Attributes:
        method: HTTP method to match, or ``None`` for any.
        route: Route template (``/channels/{channel_id}/messages``) or ``None`` for any.
        status: Status to answer with, when neither hang nor disconnect nor headers is set.
        code: Discord's JSON error code in that answer (60003, 50013, ...; 0 for a server error).
        message: The error's message; a generic one when empty.
        hang: Seconds to stall before answering normally (a client-side timeout).
        disconnect: Drop the TCP connection without answering.
        headers: Serve the request normally but overwrite these answer headers: rate-limit
            headers that lie (a wrong ``X-RateLimit-Bucket``, a wrong ``X-RateLimit-Remaining``),
            as Discord has been seen to send. The real limits still apply.
        times: How many requests it hits before it is used up.
    """

    method: str | None = None
    route: str | None = None
    status: int = 500
    code: int = 0
    message: str = ""
    hang: float | None = None
    disconnect: bool = False
    headers: dict[str, str] | None = None
    times: int = 1

    def matches(self, method: str, route: str | None) -> bool:
        """Whether this rule applies to the request."""
        return self.times > 0 and self.method in (None, method) and self.route in (None, route)


class ApiError(Exception):
    """A Discord JSON error answer."""

    def __init__(self, status: int, code: int, message: str, *, errors: JSON | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.errors = errors

    def to_json(self) -> JSON:
        """The error body Discord sends."""
        data: JSON = {"message": self.message, "code": self.code}
        if self.errors is not None:
            data["errors"] = self.errors
        return data


class Emulator:
    """A local Discord: REST under ``/api/v10``, the gateway at ``/``, control under ``/_emulator``."""

    def __init__(self, config: EmulatorConfig | None = None, *, clock: Clock | None = None) -> None:
        from .rest import Rest

        self.config = config or EmulatorConfig()
        self.clock: Clock = clock or RealClock()
        self.world = World(self.clock.wall)
        self.spec = SpecValidator(self.config.spec_path)
        self.limiter = RateLimiter(self.config.rate_limits, self.clock)
        self.gateway = Gateway(self)
        self.rest = Rest(self)
        self.faults: list[FaultRule] = []
        self.requests: list[RequestRecord] = []
        self.uploads: list[tuple[str, bytes]] = []
        """Every file sent with a message, as (file name, bytes), in the order received."""
        self.attachments = Attachments(self)
        """Files users attached to command options, and their CDN."""
        self._changed = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self._host = "127.0.0.1"
        self._port = 0

    # -- lifecycle ----------------------------------------------------------------------------

    def make_app(self) -> web.Application:
        """Build the aiohttp application (also usable under another runner)."""
        from .control import add_control_routes

        app = web.Application(client_max_size=32 * 1024 * 1024)
        app.router.add_get("/", self.gateway.handle)
        app.router.add_route("*", "/api/v10/{tail:.*}", self.rest.handle)
        add_control_routes(self, app)
        add_attachment_routes(self, app)
        return app

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> None:
        """Serve on ``host:port`` (port 0 picks a free one)."""
        self._runner = web.AppRunner(self.make_app(), access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        await site.start()
        sockets = getattr(site._server, "sockets", None) or []
        self._host, self._port = host, sockets[0].getsockname()[1] if sockets else port

    async def close(self) -> None:
        """Close every connection and stop serving."""
        await self.gateway.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> Emulator:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def url(self) -> str:
        """Base HTTP URL, e.g. ``http://127.0.0.1:PORT``."""
        return f"http://{self._host}:{self._port}"

    @property
    def api_url(self) -> str:
        """What discord.py's ``Route.BASE`` must be."""
        return f"{self.url}/api/v10"

    @property
    def gateway_url(self) -> str:
        """The websocket URL, also sent as ``resume_gateway_url``."""
        return f"ws://{self._host}:{self._port}/"

    # -- change notification ------------------------------------------------------------------

    def changed(self) -> None:
        """Wake every `wait_for`; called after each state change."""
        self._changed.set()
        self._changed = asyncio.Event()

    async def wait_for(self, predicate: Callable[[], T | None], timeout: float = 5.0) -> T:  # noqa: ASYNC109
        """Wait until ``predicate()`` is truthy, re-checking on each state change.

        Returns:
            The predicate's truthy value.

        Raises:
            TimeoutError: The condition did not come true in time.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            result = predicate()
            if result:
                return result
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TimeoutError(f"condition not met within {timeout} s")
            event = self._changed
            try:
                await asyncio.wait_for(event.wait(), remaining)
            except TimeoutError:
                continue

    # -- dispatch -----------------------------------------------------------------------------

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

        A guild event goes to sessions whose bot is a member, on the guild's shard, with the
        intent, and (for channel events) able to see the channel. ``users`` limits DM events to
        the recipients; ``app`` limits interactions to their application.
        """
        world = self.world
        ready_at = asyncio.get_running_loop().time() + self.config.latency_ms / 2000
        targets = None if users is None else set(users)
        for session in self.gateway.live_sessions():
            uid = session.app.user.id
            if app is not None and session.app is not app:
                continue
            if guild_id is not None:
                guild = world.guilds.get(guild_id)
                if guild is None or uid not in guild.members or not session.handles_guild(guild_id):
                    continue
            elif session.shard_id != 0:
                continue
            if targets is not None and uid not in targets:
                continue
            if intent is not None and not session.intents & intent:
                continue
            if channel is not None and not world.can_view(uid, channel):
                continue
            data = payload(session) if callable(payload) else payload
            if data is not None:
                session.push(event, data, ready_at)
        self.changed()

    def emit_message(self, event: str, message: Message) -> None:
        """Dispatch MESSAGE_CREATE/UPDATE, stripping content for sessions without MESSAGE_CONTENT."""
        if message.ephemeral_for is not None:
            self.changed()
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
                data.update(content="", embeds=[], components=[])
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
        from .state import emoji_json

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

    def emit_guild_update(self, guild: Guild) -> None:
        """Dispatch GUILD_UPDATE: the guild object without the gateway-only lists."""

        def build(session: GatewaySession) -> JSON:
            data = self.world.guild_create_json(guild, session.app.user.id, with_all_members=False)
            for key in ("members", "channels", "threads", "voice_states", "presences", "joined_at", "large"):
                data.pop(key, None)
            return data

        self.dispatch("GUILD_UPDATE", build, guild_id=guild.id, intent=Intent.GUILDS)

    def emit_interaction(self, interaction: Interaction) -> None:
        """Dispatch INTERACTION_CREATE to the application the interaction is for."""
        from .users import interaction_payload

        app = self.world.applications[interaction.application_id]
        self.dispatch(
            "INTERACTION_CREATE",
            interaction_payload(self, interaction),
            guild_id=interaction.guild_id,
            app=app,
            users=None if interaction.guild_id is not None else [app.user.id],
        )

    # -- factories ----------------------------------------------------------------------------

    def create_user(self, name: str, *, bot: bool = False) -> User:
        """Make a user account."""
        user = User(id=self.world.ids.next(), name=name, bot=bot)
        self.world.users[user.id] = user
        return user

    def create_application(self, name: str = "mafiabot", *, privileged_intents: int = 0) -> Application:
        """Make a bot application with its bot user and token (any number may exist)."""
        owner = self.create_user(f"{name}-owner")
        bot_user = self.create_user(name, bot=True)
        app = Application(
            id=self.world.ids.next(),
            name=name,
            user=bot_user,
            token=f"{bot_user.id}.{self.world.new_token()}",
            owner_id=owner.id,
            privileged_intents=privileged_intents,
        )
        self.world.applications[app.id] = app
        return app

    def create_guild(self, name: str = "Mafia Club", *, owner: User | None = None) -> Guild:
        """Make a guild with its @everyone role; the owner (made up if absent) becomes a member."""
        owner = owner or self.create_user(f"{name} owner")
        guild_id = self.world.ids.next(fresh_ms=True)
        guild = Guild(id=guild_id, name=name, owner_id=owner.id, created_at=self.clock.wall())
        guild.roles[guild_id] = Role(id=guild_id, name="@everyone", permissions=int(DEFAULT_EVERYONE))
        self.world.guilds[guild_id] = guild
        self.add_member(guild, owner)
        return guild

    def create_role(self, guild: Guild, name: str, permissions: int = 0, *, managed: bool = False) -> Role:
        """Add a role above the existing ones."""
        role = Role(
            id=self.world.ids.next(),
            name=name,
            permissions=int(permissions),
            position=len(guild.roles),
            managed=managed,
        )
        guild.roles[role.id] = role
        return role

    def create_channel(
        self,
        guild: Guild,
        name: str,
        type: ChannelType = ChannelType.GUILD_TEXT,
        *,
        overwrites: Iterable[Overwrite] = (),
        parent: Channel | None = None,
    ) -> Channel:
        """Add a text, voice or category channel."""
        channel = Channel(
            id=self.world.ids.next(),
            type=type,
            name=name,
            guild_id=guild.id,
            position=len(guild.channels),
            parent_id=None if parent is None else parent.id,
            overwrites={o.id: o for o in overwrites},
            created_at=self.clock.wall(),
        )
        self.world.channels[channel.id] = channel
        guild.channels.append(channel.id)
        self.emit_channel("CHANNEL_CREATE", channel)
        return channel

    def add_member(self, guild: Guild, user: User, roles: Iterable[Role] = ()) -> Member:
        """Make the user a member of the guild."""
        member = Member(user_id=user.id, roles=[r.id for r in roles], joined_at=self.clock.wall())
        guild.members[user.id] = member
        data = {**self.world.member_json(guild, user.id), "guild_id": str(guild.id)}
        self.dispatch("GUILD_MEMBER_ADD", data, guild_id=guild.id, intent=Intent.GUILD_MEMBERS)
        return member

    def add_bot(self, guild: Guild, app: Application, permissions: int = int(DEFAULT_EVERYONE)) -> Member:
        """Invite a bot application: its managed role carries ``permissions``; live sessions get GUILD_CREATE."""
        role = self.create_role(guild, app.name, permissions, managed=True)
        member = self.add_member(guild, app.user, [role])
        for session in self.gateway.live_sessions():
            if session.app is app and session.handles_guild(guild.id):
                with_members = bool(session.intents & Intent.GUILD_MEMBERS)
                data = self.world.guild_create_json(guild, app.user.id, with_all_members=with_members)
                session.push("GUILD_CREATE", data, asyncio.get_running_loop().time())
        self.changed()
        return member

    def scripted(self, user: User) -> ScriptedUser:
        """Wrap a user so a test can act as them."""
        from .users import ScriptedUser

        return ScriptedUser(self, user)

    def create_scripted_user(self, name: str, guild: Guild | None = None, roles: Iterable[Role] = ()) -> ScriptedUser:
        """Make a user, optionally a member of ``guild``, and return it scripted."""
        user = self.create_user(name)
        if guild is not None:
            self.add_member(guild, user, roles)
        return self.scripted(user)

    # -- inspection ---------------------------------------------------------------------------

    @property
    def violations(self) -> list[Violation]:
        """Requests the OpenAPI spec rejected."""
        return self.spec.violations

    def route_counts(self, app: Application | None = None) -> collections.Counter[str]:
        """Requests per ``"METHOD /route/{template}"``, optionally for one application."""
        return collections.Counter(
            f"{r.method} {r.route or r.path}" for r in self.requests if app is None or r.app_id == app.id
        )

    def messages(self, channel: Channel) -> list[Message]:
        """Every live message of a channel, ephemeral ones included, oldest first."""
        return self.world.channel_messages_of(channel.id)

    def visible_messages(self, user: User, channel: Channel) -> list[Message]:
        """What ``user`` sees in ``channel``: nothing if hidden; others' ephemeral answers never."""
        return [m for m in self.messages(channel) if self.world.can_see_message(user.id, m)]

    def visible_channels(self, user: User, guild: Guild) -> list[Channel]:
        """Channels and threads of a guild the user can see."""
        return [c for cid in guild.channels if self.world.can_view(user.id, c := self.world.channels[cid])]

    def voice_state(self, guild: Guild, user: User) -> VoiceState | None:
        """The user's voice state in the guild, if in voice."""
        return guild.voice_states.get(user.id)

    def member(self, guild: Guild, user: User) -> Member:
        """The user's guild member (``mute``/``deaf`` are the server flags)."""
        return guild.members[user.id]

    def thread_members(self, thread: Channel) -> set[int]:
        """Ids of the thread's members."""
        return set(thread.thread_members)

    def threads(self, parent: Channel) -> list[Channel]:
        """Threads under a channel."""
        return [c for c in self.world.channels.values() if c.is_thread and c.parent_id == parent.id]

    def last_message(self, channel: Channel) -> Message | None:
        """The newest live message of a channel."""
        messages = self.messages(channel)
        return messages[-1] if messages else None

    def require_mfa(self, guild: Guild, required: bool = True) -> None:  # noqa: FBT001, FBT002 - reads as prose
        """Turn the guild's server-wide 2FA requirement (``mfa_level``) on or off, as its owner would.

        While on, an account without 2FA (a bot whose application has ``owner_mfa = False``, a
        person whose user has ``mfa_enabled = False``) cannot use the elevated permissions
        (`state.ELEVATED_PERMISSIONS`): Discord answers 403 with code 60003.
        """
        guild.mfa_level = MFA_ELEVATED if required else 0
        self.emit_guild_update(guild)

    def auto_archive(self, thread: Channel) -> None:
        """Archive a thread as Discord does after ``auto_archive_duration`` minutes without activity."""
        if not thread.is_thread:
            raise ValueError(f"{thread.name!r} is not a thread")
        thread.archived = True
        thread.archive_timestamp = self.clock.wall()
        self.emit_channel("THREAD_UPDATE", thread)

    def inject_fault(self, rule: FaultRule) -> FaultRule:
        """Arm a REST fault; it is used up after ``rule.times`` matching requests."""
        self.faults.append(rule)
        return rule

    async def drop_gateway(self, app: Application | None = None, *, resumable: bool = True) -> int:
        """Cut gateway connections; see `Gateway.drop`."""
        return await self.gateway.drop(app, resumable=resumable)


_saved_discord_py: dict[str, Any] = {}


def connect_discord_py(url: str) -> None:
    """Point the discord.py library (process-wide) at an emulator at ``url``.

    Sets ``Route.BASE`` and ``DiscordWebSocket.DEFAULT_GATEWAY``; `disconnect_discord_py` undoes it.
    """
    import discord.gateway
    import discord.http

    _saved_discord_py.setdefault("base", discord.http.Route.BASE)
    _saved_discord_py.setdefault("gateway", discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY)
    parsed = yarl.URL(url)
    discord.http.Route.BASE = str(parsed.with_path("/api/v10"))
    scheme = "wss" if parsed.scheme == "https" else "ws"
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = parsed.with_scheme(scheme).with_path("/")


def disconnect_discord_py() -> None:
    """Restore discord.py's real Discord URLs."""
    import discord.gateway
    import discord.http

    if _saved_discord_py:
        discord.http.Route.BASE = _saved_discord_py.pop("base")
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = _saved_discord_py.pop("gateway")
