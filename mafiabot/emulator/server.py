"""The `Emulator`: one aiohttp server with REST, the gateway, the control API and the model.

This module is the composition root: it builds the model, the gateway, event dispatch, REST and
the attachment CDN, hands each the parts it uses, and mounts their routes. It also keeps the
factories tests use to build a guild, the inspection helpers, and `wait_for`, which wakes on
every state change instead of polling.
"""

from __future__ import annotations

import asyncio
import collections
import re
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import yarl
from aiohttp import web

from .attachments import Attachments, add_attachment_routes
from .config import Address, EmulatorConfig, FaultRule, RequestRecord
from .control import add_control_routes
from .errors import ApiError
from .events import Events, Payload
from .gateway import Gateway
from .ratelimit import Clock, RateLimiter, RealClock
from .rest import NickRefusal, Rest
from .spec import SpecValidator, Violation
from .state import (
    DEFAULT_EVERYONE,
    MFA_ELEVATED,
    Application,
    Channel,
    ChannelType,
    Guild,
    Interaction,
    Member,
    Message,
    Overwrite,
    Role,
    User,
    VoiceState,
    World,
)
from .users import ScriptedUser

__all__ = [
    "ApiError",
    "Emulator",
    "EmulatorConfig",
    "FaultRule",
    "RequestRecord",
    "connect_discord_py",
    "disconnect_discord_py",
]

T = TypeVar("T")


LATE_WAITS: list[str] = []
"""Waits (of any emulator in this process) whose condition held only once their timeout ran out:
nothing woke them when it came true, so they slept the whole timeout. A test suite can fail on one,
as on a spec violation: such a wait is a sleep standing in for synchronization."""


class Emulator:
    """A local Discord: REST under ``/api/v10``, the gateway at ``/``, control under ``/_emulator``."""

    def __init__(self, config: EmulatorConfig | None = None, *, clock: Clock | None = None) -> None:
        self.config = config or EmulatorConfig()
        self.clock: Clock = clock or RealClock()
        self.address = Address()
        self.world = World(self.clock.wall)
        self.spec = SpecValidator(self.config.spec_path)
        self.limiter = RateLimiter(self.config.rate_limits, self.clock)
        self.gateway = Gateway(self.world, self.config, self.address, self._notify)
        self.events = Events(self.world, self.config, self.gateway, self._notify)
        self.rest = Rest(
            self.world, self.config, self.clock, self.spec, self.limiter, self.events, self.address, self._notify
        )
        self.attachments = Attachments(self.world, self.clock, self.address)
        """Files users attached to command options, and their CDN."""
        self._changed = asyncio.Event()
        self._runner: web.AppRunner | None = None

    @property
    def faults(self) -> list[FaultRule]:
        """Armed REST faults (see `inject_fault`)."""
        return self.rest.faults

    @property
    def requests(self) -> list[RequestRecord]:
        """Every REST request, in the order served."""
        return self.rest.requests

    @property
    def uploads(self) -> list[tuple[str, bytes]]:
        """Every file sent with a message, as (file name, bytes), in the order received."""
        return self.rest.uploads

    # -- lifecycle ----------------------------------------------------------------------------

    def make_app(self) -> web.Application:
        """Build the aiohttp application (also usable under another runner)."""
        app = web.Application(client_max_size=32 * 1024 * 1024)
        app.router.add_get("/", self.gateway.handle)
        app.router.add_route("*", "/api/v10/{tail:.*}", self.rest.handle)
        add_control_routes(self, app)
        add_attachment_routes(self.attachments, app)
        return app

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> None:
        """Serve on ``host:port`` (port 0 picks a free one)."""
        self._runner = web.AppRunner(self.make_app(), access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        await site.start()
        sockets = getattr(site._server, "sockets", None) or []
        self.address.host, self.address.port = host, sockets[0].getsockname()[1] if sockets else port

    async def close(self) -> None:
        """Close every connection and stop serving."""
        await self.gateway.close()
        self.rest.close()
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
        return self.address.url

    @property
    def api_url(self) -> str:
        """What discord.py's ``Route.BASE`` must be."""
        return self.address.api_url

    @property
    def gateway_url(self) -> str:
        """The websocket URL, also sent as ``resume_gateway_url``."""
        return self.address.gateway_url

    # -- change notification ------------------------------------------------------------------

    def changed(self) -> None:
        """Wake every `wait_for`; called after each state change."""
        self._changed.set()
        self._changed = asyncio.Event()

    def _notify(self) -> None:
        # Looked up on each call, not bound once: an observer may replace ``emu.changed`` to see every change.
        self.changed()

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
                result = predicate()
                if result:
                    name = getattr(predicate, "__qualname__", repr(predicate))
                    LATE_WAITS.append(f"{name} held only at its {timeout} s deadline")
                    return result

    # -- dispatch (see `Events`) ---------------------------------------------------------------

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
        """Send a gateway event to every session that would get it on Discord (`Events.dispatch`)."""
        self.events.dispatch(event, payload, guild_id=guild_id, intent=intent, channel=channel, users=users, app=app)

    def emit_message(self, event: str, message: Message) -> None:
        """Dispatch MESSAGE_CREATE/UPDATE."""
        self.events.emit_message(event, message)

    def emit_message_delete(self, message: Message) -> None:
        """Dispatch MESSAGE_DELETE."""
        self.events.emit_message_delete(message)

    def emit_reaction(self, message: Message, user_id: int, key: str, *, added: bool) -> None:
        """Dispatch MESSAGE_REACTION_ADD/REMOVE."""
        self.events.emit_reaction(message, user_id, key, added=added)

    def emit_voice_state(self, guild: Guild, user_id: int) -> None:
        """Dispatch VOICE_STATE_UPDATE for a member."""
        self.events.emit_voice_state(guild, user_id)

    def emit_member_update(self, guild: Guild, user_id: int) -> None:
        """Dispatch GUILD_MEMBER_UPDATE."""
        self.events.emit_member_update(guild, user_id)

    def emit_channel(self, event: str, channel: Channel) -> None:
        """Dispatch CHANNEL_CREATE/UPDATE/DELETE or THREAD_CREATE/UPDATE/DELETE."""
        self.events.emit_channel(event, channel)

    def emit_thread_members(self, thread: Channel, added: list[int], removed: list[int]) -> None:
        """Dispatch THREAD_MEMBERS_UPDATE."""
        self.events.emit_thread_members(thread, added, removed)

    def emit_guild_update(self, guild: Guild) -> None:
        """Dispatch GUILD_UPDATE."""
        self.events.emit_guild_update(guild)

    def emit_interaction(self, interaction: Interaction) -> None:
        """Dispatch INTERACTION_CREATE to the application the interaction is for."""
        self.events.emit_interaction(interaction)

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
        self.events.emit_role("GUILD_ROLE_CREATE", guild, role)
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
        self.events.emit_channel("CHANNEL_CREATE", channel)
        return channel

    def delete_channel(self, channel: Channel) -> None:
        """A member deletes a guild channel in the client: it is gone, and the bot hears CHANNEL_DELETE."""
        self.events.emit_channel("CHANNEL_DELETE", channel)
        guild = self.world.guild_of(channel)
        if guild is not None:
            guild.channels.remove(channel.id)
        del self.world.channels[channel.id]

    def add_member(self, guild: Guild, user: User, roles: Iterable[Role] = ()) -> Member:
        """Make the user a member of the guild."""
        member = Member(user_id=user.id, roles=[r.id for r in roles], joined_at=self.clock.wall())
        guild.members[user.id] = member
        self.events.emit_member_add(guild, user.id)
        return member

    def add_bot(self, guild: Guild, app: Application, permissions: int = int(DEFAULT_EVERYONE)) -> Member:
        """Invite a bot application: its managed role carries ``permissions``; live sessions get GUILD_CREATE."""
        role = self.create_role(guild, app.name, permissions, managed=True)
        member = self.add_member(guild, app.user, [role])
        self.events.emit_guild_create(guild, app)
        return member

    def scripted(self, user: User) -> ScriptedUser:
        """Wrap a user so a test can act as them."""
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
        return self.world.visible_messages(user.id, channel)

    def visible_channels(self, user: User, guild: Guild) -> list[Channel]:
        """Channels and threads of a guild the user can see."""
        return self.world.visible_channels(user.id, guild)

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

    def transfer_ownership(self, guild: Guild, user: User) -> None:
        """Make ``user`` (a member) the guild's owner, as the owner would in the server's settings."""
        if user.id not in guild.members:
            raise ValueError(f"{user.name!r} is not a member of {guild.name!r}")
        guild.owner_id = user.id
        self.events.emit_guild_update(guild)

    def require_mfa(self, guild: Guild, required: bool = True) -> None:  # noqa: FBT001, FBT002 - reads as prose
        """Turn the guild's server-wide 2FA requirement (``mfa_level``) on or off, as its owner would.

        While on, an account without 2FA (a bot whose application has ``owner_mfa = False``, a
        person whose user has ``mfa_enabled = False``) cannot use the elevated permissions
        (`state.ELEVATED_PERMISSIONS`): Discord answers 403 with code 60003.
        """
        guild.mfa_level = MFA_ELEVATED if required else 0
        self.events.emit_guild_update(guild)

    def auto_archive(self, thread: Channel) -> None:
        """Archive a thread as Discord does after ``auto_archive_duration`` minutes without activity."""
        if not thread.is_thread:
            raise ValueError(f"{thread.name!r} is not a thread")
        thread.archived = True
        thread.archive_timestamp = self.clock.wall()
        self.events.emit_channel("THREAD_UPDATE", thread)

    def inject_fault(self, rule: FaultRule) -> FaultRule:
        """Arm a REST fault; it is used up after ``rule.times`` matching requests."""
        self.faults.append(rule)
        return rule

    def refuse_nicknames(
        self, pattern: str, *, code: str = NickRefusal.code, message: str = NickRefusal.message,
    ) -> NickRefusal:
        """Refuse every nickname ``pattern`` (a regular expression) finds, as Discord's unpublished name rules may.

        A member edit carrying one answers 400/50035 naming ``nick`` and changes nothing.
        """
        refusal = NickRefusal(re.compile(pattern), code, message)
        self.rest.refused_nicks.append(refusal)
        return refusal

    def allow_nicknames(self) -> None:
        """Take back every ``refuse_nicknames``."""
        self.rest.refused_nicks.clear()

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
