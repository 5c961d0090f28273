"""A small JSON control API under ``/_emulator`` for driving an emulator in another process.

Benchmarks and the demo use it to build a guild, act as scripted users, inject faults and read
counts, with plain HTTP. Ids travel as strings, as in Discord's JSON.
"""

from __future__ import annotations

import collections
import json
import re
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Protocol

from aiohttp import web

from .config import Address, EmulatorConfig, FaultRule
from .errors import ApiError
from .gateway import Gateway
from .spec import SpecValidator
from .state import (
    BOT_PERMISSIONS,
    DEFAULT_EVERYONE,
    JSON,
    Application,
    Channel,
    ChannelType,
    Guild,
    Member,
    Message,
    Overwrite,
    Role,
    User,
)
from .users import Host, ScriptedUser


class Controlled(Host, Protocol):
    """The emulator as the control API drives it: its factories, settings and gateway."""

    @property
    def config(self) -> EmulatorConfig:
        """Live settings (latency)."""

    @property
    def spec(self) -> SpecValidator:
        """The OpenAPI check."""

    @property
    def gateway(self) -> Gateway:
        """The gateway's sessions."""

    @property
    def address(self) -> Address:
        """Where the emulator listens."""

    def create_user(self, name: str, *, bot: bool = False) -> User:
        """Make a user account."""

    def create_application(self, name: str = "mafiabot", *, privileged_intents: int = 0) -> Application:
        """Make a bot application."""

    def create_guild(self, name: str = "Mafia Club", *, owner: User | None = None) -> Guild:
        """Make a guild."""

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

    def add_member(self, guild: Guild, user: User, roles: Iterable[Role] = ()) -> Member:
        """Make the user a member of the guild."""

    def add_bot(self, guild: Guild, app: Application, permissions: int = int(DEFAULT_EVERYONE)) -> Member:
        """Invite a bot application."""

    def require_mfa(self, guild: Guild, required: bool = True) -> None:  # noqa: FBT001, FBT002
        """Turn the guild's server-wide 2FA on or off."""

    def inject_fault(self, rule: FaultRule) -> FaultRule:
        """Arm a REST fault."""

    def route_counts(self, app: Application | None = None) -> collections.Counter[str]:
        """Requests per route."""

    def refuse_nicknames(self, pattern: str, *, code: str = ..., message: str = ...) -> object:
        """Refuse nicknames matching ``pattern`` with 400/50035."""

    def allow_nicknames(self) -> None:
        """Take back every nickname refusal."""


def _ok(data: Any, status: int = 200) -> web.Response:
    response = web.Response(status=status, text=json.dumps(data))
    response.headers["Content-Type"] = "application/json"
    return response


def add_control_routes(emu: Controlled, app: web.Application) -> None:
    """Mount the control API on ``app``."""
    world = emu.world

    def guarded(handler: Callable[[web.Request], Awaitable[Any]]) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def wrapper(request: web.Request) -> web.Response:
            try:
                return _ok(await handler(request))
            except ApiError as exc:
                return _ok({"message": exc.message, "code": exc.code}, exc.status)
            except (LookupError, ValueError, TypeError) as exc:
                return _ok({"message": str(exc), "code": 0}, 400)

        return wrapper

    async def setup(request: web.Request) -> JSON:
        body = await request.json()
        guild = emu.create_guild(body.get("guild", "Mafia Club"))
        text = emu.create_channel(guild, body.get("text", "table"))
        voice = emu.create_channel(guild, body.get("voice", "Table voice"), ChannelType.GUILD_VOICE)
        users = [emu.create_user(f"player{i + 1}") for i in range(int(body.get("members", 10)))]
        for user in users:
            emu.add_member(guild, user)
        apps = []
        for spec in body.get("bots", [{"name": "mafiabot"}]):
            app = emu.create_application(spec.get("name", "mafiabot"))
            emu.add_bot(guild, app, int(spec.get("permissions", BOT_PERMISSIONS)))
            apps.append({"id": str(app.id), "user_id": str(app.user.id), "token": app.token, "name": app.name})
        return {
            "guild_id": str(guild.id),
            "text_channel_id": str(text.id),
            "voice_channel_id": str(voice.id),
            "user_ids": [str(u.id) for u in users],
            "applications": apps,
        }

    def message_of(body: JSON) -> Message:
        message = world.messages.get(int(body["message_id"]))
        if message is None:
            raise LookupError("unknown message")
        return message

    async def act(request: web.Request) -> JSON:
        body = await request.json()
        user = ScriptedUser(emu, world.users[int(request.match_info["user_id"])])
        action = body["action"]
        channel = world.channels.get(int(body.get("channel_id", 0)))
        guild = world.guilds.get(int(body.get("guild_id", 0)))
        if action == "join_voice" and channel is not None:
            user.join_voice(channel, self_mute=bool(body.get("self_mute", False)))
        elif action == "leave_voice" and guild is not None:
            user.leave_voice(guild)
        elif action == "self_mute" and guild is not None:
            user.set_self_mute(guild, bool(body.get("muted", True)))
        elif action == "send" and channel is not None:
            return {"message_id": str(user.send(channel, body["content"]).id)}
        elif action == "react":
            user.react(message_of(body), body["emoji"])
        elif action == "unreact":
            user.unreact(message_of(body), body["emoji"])
        elif action == "close_dms":
            user.close_dms()
        elif action in ("command", "click", "select"):
            if action == "command" and channel is not None:
                reply = user.command(channel, body["name"], **body.get("options", {}))
            elif action == "click":
                reply = user.click(message_of(body), body["custom_id"])
            else:
                reply = user.select(message_of(body), body["custom_id"], list(body["values"]))
            if body.get("wait", True):
                await emu.wait_for(lambda: reply.acknowledged, float(body.get("timeout", 5)))
            message = reply.message
            return {
                "interaction_id": str(reply.interaction.id),
                "response_type": reply.response_type,
                "message": None if message is None else message.to_json(world, user.id),
            }
        else:
            raise ValueError(f"unknown or incomplete action {action!r}")
        return {}

    async def messages(request: web.Request) -> list[JSON]:
        channel = world.channels[int(request.match_info["channel_id"])]
        viewer = request.query.get("as_user")
        if viewer is None:
            return [m.to_json(world) for m in world.channel_messages_of(channel.id)]
        shown = world.visible_messages(int(viewer), channel)
        return [m.to_json(world) for m in shown]

    async def voice(request: web.Request) -> JSON:
        guild = world.guilds[int(request.match_info["guild_id"])]
        return {
            str(uid): {
                "channel_id": str(state.channel_id),
                "mute": guild.members[uid].mute,
                "self_mute": state.self_mute,
            }
            for uid, state in guild.voice_states.items()
        }

    async def server_mute(request: web.Request) -> JSON:
        """Set a member's server mute as a moderator (or a bot's earlier run) left it."""
        guild = world.guilds[int(request.match_info["guild_id"])]
        user_id = int(request.match_info["user_id"])
        mute = bool((await request.json()).get("mute", True))
        if guild.members[user_id].mute != mute:
            guild.members[user_id].mute = mute
            if user_id in guild.voice_states:
                emu.events.emit_voice_state(guild, user_id)
        return {"mute": mute}

    async def counts(request: web.Request) -> JSON:
        return dict(emu.route_counts())

    async def reset_counts(request: web.Request) -> JSON:
        emu.rest.requests.clear()
        return {}

    async def violations(request: web.Request) -> JSON:
        return {
            "checked": emu.spec.available,
            "skip_reason": emu.spec.skip_reason,
            "violations": [v.__dict__ for v in emu.spec.violations],
        }

    async def faults(request: web.Request) -> JSON:
        body = await request.json()
        fields = ("method", "route", "status", "code", "message", "hang", "disconnect", "headers", "times")
        emu.inject_fault(FaultRule(**{k: body[k] for k in fields if k in body}))
        return {}

    async def refuse_nicknames(request: web.Request) -> JSON:
        """Refuse nicknames matching ``{"pattern": ...}`` (and ``code``, ``message``); ``{"clear": true}`` undoes it."""
        body = await request.json()
        if body.get("clear"):
            emu.allow_nicknames()
            return {}
        try:
            emu.refuse_nicknames(str(body["pattern"]), **{k: str(body[k]) for k in ("code", "message") if k in body})
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from exc
        return {}

    async def mfa(request: web.Request) -> JSON:
        """Turn a guild's server-wide 2FA on or off (``{"required": true}``)."""
        guild = world.guilds[int(request.match_info["guild_id"])]
        emu.require_mfa(guild, bool((await request.json()).get("required", True)))
        return {"mfa_level": guild.mfa_level}

    async def owner_mfa(request: web.Request) -> JSON:
        """Say whether an application's owner has 2FA (``{"enabled": false}``)."""
        app = world.applications[int(request.match_info["application_id"])]
        app.owner_mfa = bool((await request.json()).get("enabled", True))
        return {"owner_mfa": app.owner_mfa}

    async def drop(request: web.Request) -> JSON:
        body = await request.json() if request.can_read_body else {}
        return {"dropped": await emu.gateway.drop(resumable=bool(body.get("resumable", True)))}

    async def config(request: web.Request) -> JSON:
        body = await request.json()
        if "latency_ms" in body:
            emu.config.latency_ms = float(body["latency_ms"])
        return {"latency_ms": emu.config.latency_ms}

    async def health(request: web.Request) -> JSON:
        return {"url": emu.address.url, "sessions": len(emu.gateway.connected())}

    router = app.router
    router.add_get("/_emulator/health", guarded(health))
    router.add_post("/_emulator/setup", guarded(setup))
    router.add_post("/_emulator/users/{user_id}/act", guarded(act))
    router.add_get("/_emulator/channels/{channel_id}/messages", guarded(messages))
    router.add_get("/_emulator/guilds/{guild_id}/voice", guarded(voice))
    router.add_post("/_emulator/guilds/{guild_id}/members/{user_id}/mute", guarded(server_mute))
    router.add_post("/_emulator/nicknames/refuse", guarded(refuse_nicknames))
    router.add_get("/_emulator/requests/counts", guarded(counts))
    router.add_post("/_emulator/requests/reset", guarded(reset_counts))
    router.add_get("/_emulator/violations", guarded(violations))
    router.add_post("/_emulator/faults", guarded(faults))
    router.add_post("/_emulator/guilds/{guild_id}/mfa", guarded(mfa))
    router.add_post("/_emulator/applications/{application_id}/owner_mfa", guarded(owner_mfa))
    router.add_post("/_emulator/gateway/drop", guarded(drop))
    router.add_post("/_emulator/config", guarded(config))
