"""REST v10 routes with Discord's checks, errors, rate limits and the spec check in front.

Each request goes: latency, route match, spec check (recorded, never blocking), injected faults,
authentication, rate limits, handler. Handlers raise `ApiError` for Discord's JSON errors.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import urllib.parse
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from .attachments import FilePart, message_files, read_multipart
from .config import Address, EmulatorConfig, FaultRule, RequestRecord
from .errors import (
    ApiError,
    invalid_form_body,
    missing_access,
    missing_permissions,
    thread_archived,
    two_factor_required,
    wrong_channel_type,
)
from .events import Events, guild_object
from .limits import check_command, check_message, check_modal, invalid, require_reaction_emoji
from .ratelimit import Clock, RateLimiter, retry_after_header
from .spec import SpecValidator
from .state import (
    JSON,
    VOICE_TYPES,
    Application,
    Channel,
    ChannelType,
    Guild,
    Intent,
    Interaction,
    Member,
    Message,
    Overwrite,
    Permission,
    World,
    emoji_key,
)

EPHEMERAL = 1 << 6
LOADING = 1 << 7
MAX_REACTIONS = 20
MAX_GUILD_CHANNELS = 500
"""Discord: "Maximum number of guild channels reached (500)" (30013); threads are not counted."""
MAX_CATEGORY_CHANNELS = 50
"""Discord: "each parent category can contain up to 50 channels" (Channel Object, ``parent_id``); a 51st
is refused 400/50035 with ``CHANNEL_PARENT_MAX_CHANNELS`` under ``parent_id``, no code of its own."""
NONCE_LENGTH = 25
"""Discord: a message nonce is up to 25 characters."""
NONCE_SECONDS = 120.0
"""``enforce_nonce`` deduplicates "in the past few minutes" (Discord gives no number; the short end here)."""


@dataclasses.dataclass
class Ctx:
    """One request as handlers see it."""

    app: Application | None
    params: dict[str, str]
    body: Any
    query: dict[str, str]
    files: list[FilePart] = dataclasses.field(default_factory=list)
    """The ``files[n]`` parts of a multipart body."""

    @property
    def bot(self) -> Application:
        """The authenticated application (routes that need auth only)."""
        if self.app is None:
            raise ApiError(401, 0, "401: Unauthorized")
        return self.app

    def id(self, name: str) -> int:
        """A snowflake path parameter; a non-numeric one is Discord's 404."""
        raw = self.params[name]
        if not raw.isdigit():
            raise ApiError(404, 0, "404: Not Found")
        return int(raw)


Handler = Callable[[Ctx], Awaitable[Any]]


@dataclasses.dataclass(frozen=True)
class _Route:
    method: str
    template: str
    regex: re.Pattern[str]
    literals: int
    handler: Handler
    auth: bool


def _json_response(status: int, data: Any, headers: dict[str, str] | None = None) -> web.Response:
    # Exactly "application/json": with "; charset=utf-8" discord.py leaves the body a string.
    text = "" if data is None else json.dumps(data, separators=(",", ":"))
    response = web.Response(status=status, text=text, headers=headers)
    if data is not None:
        response.headers["Content-Type"] = "application/json"
    return response


class Rest:
    """The REST router and its handlers."""

    def __init__(
        self,
        world: World,
        config: EmulatorConfig,
        clock: Clock,
        spec: SpecValidator,
        limiter: RateLimiter,
        events: Events,
        address: Address,
        changed: Callable[[], None],
    ) -> None:
        self.world = world
        self.config = config
        self.clock = clock
        self.spec = spec
        self.limiter = limiter
        self.events = events
        self.address = address
        self._changed = changed
        """Wakes the emulator's waiters after each request."""
        self.faults: list[FaultRule] = []
        self._closing = asyncio.Event()
        """Set on close: requests a ``hang`` fault stalls end at once instead of holding the shutdown."""
        self.refused_nicks: list[NickRefusal] = []
        """Nicknames Discord's unpublished name rules refuse, as a test arms them (``refuse_nicknames``)."""
        self.requests: list[RequestRecord] = []
        self.uploads: list[tuple[str, bytes]] = []
        """Every file sent with a message, as (file name, bytes), in the order received."""
        self._routes: list[_Route] = []
        self._nonces: dict[tuple[int, str], tuple[int, float]] = {}
        """(author, nonce) → (message id, when): ``enforce_nonce`` answers with the same message.

        Discord's docs say "by the same author", not in the same channel, so none is assumed."""
        self._register()
        self._routes.sort(key=lambda r: -r.literals)

    # -- plumbing -----------------------------------------------------------------------------

    def add(self, method: str, template: str, handler: Handler, *, auth: bool = True) -> None:
        """Register a route; ``{name}`` segments are parameters."""
        parts = [f"(?P<{seg[1:-1]}>[^/]+)" if seg.startswith("{") else re.escape(seg) for seg in template.split("/")]
        literals = sum(1 for seg in template.split("/") if seg and not seg.startswith("{"))
        self._routes.append(_Route(method, template, re.compile("^" + "/".join(parts) + "$"), literals, handler, auth))

    def _match(self, method: str, path: str) -> tuple[_Route | None, dict[str, str], str | None]:
        template = None
        for route in self._routes:
            found = route.regex.match(path)
            if found is None:
                continue
            template = template or route.template
            if route.method == method:
                return route, {k: urllib.parse.unquote(v) for k, v in found.groupdict().items()}, route.template
        return None, {}, template

    async def handle(self, request: web.Request) -> web.StreamResponse:
        """Serve one REST request."""
        if self.config.latency_ms:
            await asyncio.sleep(self.config.latency_ms / 1000)
        path = "/" + request.match_info["tail"]
        method = request.method
        body, files = await self._read_body(request)
        route, params, template = self._match(method, path)
        self.spec.check(method, path, body, has_body=body is not None)
        auth = request.headers.get("Authorization", "")
        app = self.world.app_by_token(auth.removeprefix("Bot ")) if auth.startswith("Bot ") else None
        status, response = await self._answer(request, route, params, body, app, files)
        self.requests.append(RequestRecord(method, path, template, status, app.id if app else None, body))
        self._changed()
        return response

    async def _read_body(self, request: web.Request) -> tuple[Any, list[FilePart]]:
        """The JSON body (its text if it does not parse), or a multipart body's JSON and files."""
        if request.content_type.startswith("multipart/"):
            body, files = await read_multipart(request)
            self.uploads.extend((f.filename, f.data) for f in files)
            return body, files
        raw = await request.read()
        if raw and request.content_type == "application/json":
            try:
                return json.loads(raw), []
            except ValueError:
                return raw.decode(errors="replace"), []
        return None, []

    async def _answer(
        self,
        request: web.Request,
        route: _Route | None,
        params: dict[str, str],
        body: Any,
        app: Application | None,
        files: list[FilePart],
    ) -> tuple[int, web.StreamResponse]:
        faulted, lies = await self._apply_faults(request, None if route is None else route.template)
        if faulted is not None:
            return faulted
        if route is None:
            return 404, _json_response(404, {"message": "404: Not Found", "code": 0})
        if route.auth and app is None:
            return 401, _json_response(401, {"message": "401: Unauthorized", "code": 0})
        limited, headers = self._rate_limit(request.method, route, params, app, lies)
        if limited is not None:
            return limited
        ctx = Ctx(app=app, params=params, body=body if body is not None else {}, query=dict(request.query), files=files)
        try:
            result = await route.handler(ctx)
        except ApiError as exc:
            return exc.status, _json_response(exc.status, exc.to_json(), headers)
        status: int = 200 if result is not None else 204
        if isinstance(result, tuple):
            status, result = result
        return status, _json_response(status, result, headers)

    def close(self) -> None:
        """Let every stalled request go unanswered, so the server stops without waiting for them."""
        self._closing.set()

    async def _apply_faults(
        self, request: web.Request, template: str | None
    ) -> tuple[tuple[int, web.StreamResponse] | None, dict[str, str]]:
        """Use up the first armed fault that matches: its answer, or the headers it lies with."""
        fault = next((f for f in self.faults if f.matches(request.method, template)), None)
        if fault is None:
            return None, {}
        fault.times -= 1
        if fault.headers is not None:
            return None, fault.headers
        if fault.disconnect:
            if request.transport is not None:
                request.transport.close()
            return (0, web.Response(status=500)), {}
        if fault.hang is not None:
            try:
                await asyncio.wait_for(self._closing.wait(), fault.hang)
            except TimeoutError:
                return None, {}
            # The emulator is closing: a stalled request is never answered, nor applied.
            if request.transport is not None:
                request.transport.close()
            return (0, web.Response(status=500)), {}
        error = {"message": fault.message or f"{fault.status}: Server Error", "code": fault.code}
        return (fault.status, _json_response(fault.status, error)), {}

    def _rate_limit(
        self, method: str, route: _Route, params: dict[str, str], app: Application | None, lies: dict[str, str]
    ) -> tuple[tuple[int, web.StreamResponse] | None, dict[str, str]]:
        """The limiter's verdict: the 429 when over a limit, and the rate-limit headers either way."""
        key = app.token if app is not None else params.get("interaction_token", params.get("webhook_token", ""))
        verdict = self.limiter.check(key, method, route.template, params, exempt_global=not route.auth)
        headers = {**verdict.headers, **lies}
        if verdict.allowed:
            return None, headers
        retry = round(verdict.retry_after, 3)
        headers.update({"Retry-After": retry_after_header(retry), "Via": "1.1 google"})
        # Discord's body for a route's or the global limit: no ``code`` (it names one only for some limits).
        data = {"message": "You are being rate limited.", "retry_after": retry, "global": verdict.is_global}
        return (429, _json_response(429, data, headers)), headers

    # -- lookups with Discord's errors --------------------------------------------------------

    def guild(self, ctx: Ctx) -> Guild:
        """The ``guild_id`` guild, visible to the caller."""
        guild = self.world.guilds.get(ctx.id("guild_id"))
        if guild is None or ctx.bot.user.id not in guild.members:
            raise ApiError(404, 10004, "Unknown Guild")
        return guild

    def channel(self, ctx: Ctx, name: str = "channel_id") -> Channel:
        """A channel the caller can see; hidden ones are 403 Missing Access as on Discord."""
        channel = self.world.channels.get(ctx.id(name))
        if channel is None:
            raise ApiError(404, 10003, "Unknown Channel")
        if not self.world.can_view(ctx.bot.user.id, channel):
            raise missing_access()
        return channel

    def message(self, ctx: Ctx, channel: Channel) -> Message:
        """The ``message_id`` message of ``channel``."""
        message = self.world.messages.get(ctx.id("message_id"))
        if message is None or message.deleted or message.channel_id != channel.id or message.ephemeral_for:
            raise ApiError(404, 10008, "Unknown Message")
        return message

    def denied(self, user_id: int, channel: Channel, perm: Permission) -> ApiError:
        """The refusal for a missing channel permission: 60003 when only the 2FA rule voids it."""
        if self.world.permissions(user_id, channel, mfa=False) & perm:
            return two_factor_required()
        return missing_permissions()

    def require(self, user_id: int, channel: Channel, *perms: Permission) -> None:
        """Raise Discord's 403 unless the user has every permission in the channel."""
        have = self.world.permissions(user_id, channel)
        for perm in perms:
            if not have & perm:
                raise self.denied(user_id, channel, perm)

    def require_guild(self, user_id: int, guild: Guild, perm: Permission) -> None:
        """Raise Discord's 403 unless the user has a guild-level permission."""
        if not self.world.base_permissions(guild, user_id) & perm:
            if self.world.base_permissions(guild, user_id, mfa=False) & perm:
                raise two_factor_required()
            raise missing_permissions()

    # -- routes -------------------------------------------------------------------------------

    def _register(self) -> None:
        a = self.add
        a("GET", "/users/@me", self.get_me)
        a("GET", "/users/{user_id}", self.get_user)
        a("GET", "/oauth2/applications/@me", self.get_application)
        a("GET", "/applications/@me", self.get_application)
        a("GET", "/gateway", self.get_gateway, auth=False)
        a("GET", "/gateway/bot", self.get_gateway_bot)
        for scope in ("/applications/{application_id}", "/applications/{application_id}/guilds/{guild_id}"):
            a("GET", scope + "/commands", self.list_commands)
            a("PUT", scope + "/commands", self.put_commands)
            a("POST", scope + "/commands", self.post_command)
            a("GET", scope + "/commands/{command_id}", self.get_command)
            a("PATCH", scope + "/commands/{command_id}", self.patch_command)
            a("DELETE", scope + "/commands/{command_id}", self.delete_command)
        a("POST", "/interactions/{interaction_id}/{interaction_token}/callback", self.interaction_callback, auth=False)
        wh = "/webhooks/{webhook_id}/{webhook_token}"
        a("POST", wh, self.webhook_execute, auth=False)
        for mid in ("@original", "{message_id}"):
            a("GET", f"{wh}/messages/{mid}", self.webhook_get, auth=False)
            a("PATCH", f"{wh}/messages/{mid}", self.webhook_edit, auth=False)
            a("DELETE", f"{wh}/messages/{mid}", self.webhook_delete, auth=False)
        ch = "/channels/{channel_id}"
        a("GET", ch, self.get_channel)
        a("PATCH", ch, self.patch_channel)
        a("DELETE", ch, self.delete_channel)
        a("GET", ch + "/messages", self.list_messages)
        a("POST", ch + "/messages", self.create_message)
        a("GET", ch + "/messages/{message_id}", self.get_message)
        a("PATCH", ch + "/messages/{message_id}", self.edit_message)
        a("DELETE", ch + "/messages/{message_id}", self.delete_message)
        rx = ch + "/messages/{message_id}/reactions"
        a("PUT", rx + "/{emoji_name}/@me", self.add_reaction)
        a("DELETE", rx + "/{emoji_name}/@me", self.remove_own_reaction)
        a("DELETE", rx + "/{emoji_name}/{user_id}", self.remove_user_reaction)
        a("GET", rx + "/{emoji_name}", self.list_reactions)
        a("DELETE", rx + "/{emoji_name}", self.clear_emoji)
        a("DELETE", rx, self.clear_reactions)
        a("POST", ch + "/threads", self.create_thread)
        a("POST", ch + "/messages/{message_id}/threads", self.create_thread)
        a("GET", ch + "/thread-members", self.list_thread_members)
        a("GET", ch + "/thread-members/{user_id}", self.get_thread_member)
        a("PUT", ch + "/thread-members/@me", self.join_thread)
        a("DELETE", ch + "/thread-members/@me", self.leave_thread)
        a("PUT", ch + "/thread-members/{user_id}", self.add_thread_member)
        a("DELETE", ch + "/thread-members/{user_id}", self.remove_thread_member)
        a("PUT", ch + "/permissions/{overwrite_id}", self.put_overwrite)
        a("DELETE", ch + "/permissions/{overwrite_id}", self.delete_overwrite)
        a("POST", ch + "/typing", self.typing)
        g = "/guilds/{guild_id}"
        a("GET", g, self.get_guild)
        a("GET", g + "/channels", self.get_guild_channels)
        a("POST", g + "/channels", self.create_guild_channel)
        a("GET", g + "/roles", self.get_roles)
        a("GET", g + "/threads/active", self.active_threads)
        a("GET", g + "/members", self.list_members)
        a("GET", g + "/members/{user_id}", self.get_member)
        a("PATCH", g + "/members/{user_id}", self.edit_member)
        a("PUT", g + "/members/{user_id}/roles/{role_id}", self.add_member_role)
        a("DELETE", g + "/members/{user_id}/roles/{role_id}", self.remove_member_role)
        a("GET", g + "/voice-states/{user_id}", self.get_voice_state)
        a("PATCH", g + "/voice-states/@me", self.edit_my_voice_state)
        a("PATCH", g + "/voice-states/{user_id}", self.edit_voice_state)
        a("POST", "/users/@me/channels", self.create_dm)

    # -- users, application, gateway ----------------------------------------------------------

    async def get_me(self, ctx: Ctx) -> JSON:
        """``GET /users/@me``: the bot user, as login needs it."""
        return {**ctx.bot.user.to_json(), "verified": True, "mfa_enabled": ctx.bot.owner_mfa, "locale": "en-US"}

    async def get_user(self, ctx: Ctx) -> JSON:
        """``GET /users/{id}``."""
        user = self.world.users.get(ctx.id("user_id"))
        if user is None:
            raise ApiError(404, 10013, "Unknown User")
        return user.to_json()

    async def get_application(self, ctx: Ctx) -> JSON:
        """``GET /oauth2/applications/@me``."""
        return ctx.bot.to_json(self.world.users[ctx.bot.owner_id])

    async def get_gateway(self, ctx: Ctx) -> JSON:
        """``GET /gateway``."""
        return {"url": self.address.gateway_url.rstrip("/")}

    async def get_gateway_bot(self, ctx: Ctx) -> JSON:
        """``GET /gateway/bot``: the URL and a shard count that fits the bot's guilds."""
        guilds = sum(1 for g in self.world.guilds.values() if ctx.bot.user.id in g.members)
        return {
            "url": self.address.gateway_url.rstrip("/"),
            "shards": max(1, -(-guilds // 2500)),
            "session_start_limit": {"total": 1000, "remaining": 999, "reset_after": 86_400_000,
                                    "max_concurrency": self.config.max_concurrency},
        }

    # -- application commands -----------------------------------------------------------------

    def _commands(self, ctx: Ctx) -> dict[int, JSON]:
        app = ctx.bot
        if ctx.id("application_id") != app.id:
            raise missing_access()
        if "guild_id" in ctx.params:
            guild = self.guild(ctx)
            return app.guild_commands.setdefault(guild.id, {})
        return app.global_commands

    def _command_json(self, ctx: Ctx, data: JSON, existing: JSON | None = None) -> JSON:
        command: JSON = {
            "id": existing["id"] if existing else str(self.world.ids.next()),
            "application_id": str(ctx.bot.id),
            "version": str(self.world.ids.next()),
            "type": 1,
            "description": "",
            "options": [],
            "default_member_permissions": None,
            "nsfw": False,
            "contexts": None,
            "integration_types": [0],
            "name_localizations": None,
            "description_localizations": None,
        }
        command.update({k: v for k, v in data.items() if v is not None})
        command["id"] = existing["id"] if existing else command["id"]
        if "guild_id" in ctx.params:
            command["guild_id"] = ctx.params["guild_id"]
        return command

    async def list_commands(self, ctx: Ctx) -> list[JSON]:
        """List registered commands."""
        return list(self._commands(ctx).values())

    async def put_commands(self, ctx: Ctx) -> list[JSON]:
        """Bulk overwrite: what discord.py's ``tree.sync()`` sends."""
        commands = self._commands(ctx)
        by_name = {(c["name"], c.get("type", 1)): c for c in commands.values()}
        fresh = {}
        body = ctx.body if isinstance(ctx.body, list) else []
        for i, data in enumerate(body):
            check_command(data, f"{i}.")  # all checked first: a refused overwrite changes nothing
        for data in body:
            command = self._command_json(ctx, data, by_name.get((data["name"], data.get("type", 1))))
            fresh[int(command["id"])] = command
        commands.clear()
        commands.update(fresh)
        return list(fresh.values())

    async def post_command(self, ctx: Ctx) -> tuple[int, JSON]:
        """Create (or replace by name) one command."""
        commands = self._commands(ctx)
        check_command(ctx.body)
        existing = next((c for c in commands.values() if c["name"] == ctx.body.get("name")), None)
        command = self._command_json(ctx, ctx.body, existing)
        commands[int(command["id"])] = command
        return (200 if existing else 201), command

    def _command(self, ctx: Ctx) -> tuple[dict[int, JSON], JSON]:
        commands = self._commands(ctx)
        command = commands.get(ctx.id("command_id"))
        if command is None:
            raise ApiError(404, 10063, "Unknown application command")
        return commands, command

    async def get_command(self, ctx: Ctx) -> JSON:
        """Fetch one command."""
        return self._command(ctx)[1]

    async def patch_command(self, ctx: Ctx) -> JSON:
        """Edit one command."""
        commands, command = self._command(ctx)
        check_command({**command, **ctx.body})
        updated = self._command_json(ctx, {**command, **ctx.body}, command)
        commands[int(updated["id"])] = updated
        return updated

    async def delete_command(self, ctx: Ctx) -> None:
        """Delete one command."""
        commands, command = self._command(ctx)
        del commands[int(command["id"])]

    # -- interactions and their webhooks ------------------------------------------------------

    def _interaction_message(
        self, interaction: Interaction, data: JSON, *, message_type: int, files: list[FilePart] | None = None
    ) -> Message:
        """A message an interaction posts (an answer or a follow-up), with its files; refused whole or made whole."""
        self._check_interaction_files(interaction, files or [])
        attached = message_files(self.world, interaction.channel_id, data, files or [])
        flags = int(data.get("flags") or 0)
        app = self.world.applications[interaction.application_id]
        ephemeral = bool(flags & EPHEMERAL) or (interaction.deferred_ephemeral and message_type == 20)
        message = self.world.add_message(
            self.world.channels[interaction.channel_id],
            app.user.id,
            data,
            message_type=message_type,
            ephemeral_for=interaction.user_id if ephemeral else None,
        )
        message.webhook_id = app.id
        message.application_id = app.id
        message.interaction_id = interaction.id
        self.world.set_attachments(message, attached or [])
        if ephemeral:
            message.flags |= EPHEMERAL
        return message

    def _check_interaction_files(self, interaction: Interaction, files: list[FilePart]) -> None:
        """New files in an interaction's answer need ATTACH_FILES as its ``app_permissions`` tell (403/50013).

        Discord counts ATTACH_FILES among the permissions "that can be used in interaction
        responses" (change log, ``app_permissions``): the answer is the app's message in that channel.
        """
        channel = self.world.channels[interaction.channel_id]
        if files and channel.type != ChannelType.DM:
            app = self.world.applications[interaction.application_id]
            if not self.world.permissions(app.user.id, channel) & Permission.ATTACH_FILES:
                raise missing_permissions()

    async def interaction_callback(self, ctx: Ctx) -> Any:
        """``POST /interactions/{id}/{token}/callback``: types 4, 5, 6, 7 and 9, and 8 for autocomplete."""
        interaction = self._open_interaction(ctx)
        kind = int(ctx.body.get("type", 0))
        if kind == AUTOCOMPLETE_RESULT or interaction.type == AUTOCOMPLETE:
            return self._autocomplete_result(ctx, interaction, kind)
        data: JSON = ctx.body.get("data") or {}
        message = self._respond(interaction, kind, data, ctx.files)
        interaction.response_type = kind
        if message is not None:
            interaction.original_message_id = message.id
            if kind in (4, 5):
                self.events.emit_message("MESSAGE_CREATE", message)
        self._changed()
        if not _wants_response(ctx):
            return None
        return _callback_response(self.world, interaction, kind, message)

    def _open_interaction(self, ctx: Ctx) -> Interaction:
        """The interaction a callback is for: known, its token right, unanswered and within the 3 s."""
        interaction = self.world.interactions.get(ctx.id("interaction_id"))
        if interaction is None or interaction.token != ctx.params["interaction_token"]:
            raise ApiError(404, 10062, "Unknown interaction")
        if interaction.response_type is not None:
            raise ApiError(400, 40060, "Interaction has already been acknowledged.")
        if self.clock.monotonic() - interaction.created_at > self.config.interaction_ack_seconds:
            raise ApiError(404, 10062, "Unknown interaction")
        return interaction

    def _respond(self, interaction: Interaction, kind: int, data: JSON, files: list[FilePart]) -> Message | None:
        """Carry out a callback of ``kind``; the message it answers with, if any."""
        if kind == 4:
            check_message(data)
            message_type = 20 if interaction.type == 2 else 19
            return self._interaction_message(interaction, data, message_type=message_type, files=files)
        if kind == 5:
            interaction.deferred_ephemeral = bool(int(data.get("flags") or 0) & EPHEMERAL)
            message = self._interaction_message(interaction, {"flags": LOADING}, message_type=20)
            message.flags |= LOADING
            return message
        if kind in (6, 7):
            return self._update_clicked(interaction, kind, data, files)
        if kind == 9:
            check_modal(data)
            interaction.modal = data
            return None
        if kind != 1:
            raise invalid_form_body()
        return None

    def _update_clicked(self, interaction: Interaction, kind: int, data: JSON, files: list[FilePart]) -> Message:
        """Types 6 and 7: acknowledge a component's message, and (7) edit it, its files too."""
        if kind == 7:
            check_message(data)
        if interaction.message_id is None:
            raise invalid_form_body()
        message = self.world.messages[interaction.message_id]
        if kind == 7:
            self._check_interaction_files(interaction, files)
            self._edit(message, data, files)
        return message

    def _autocomplete_result(self, ctx: Ctx, interaction: Interaction, kind: int) -> JSON | None:
        """Callback type 8: only an autocomplete interaction takes it, and it takes nothing else."""
        if kind != AUTOCOMPLETE_RESULT or interaction.type != AUTOCOMPLETE:
            raise invalid_form_body()
        interaction.choices = autocomplete_choices(ctx.body.get("data") or {})
        interaction.response_type = kind
        self._changed()
        if not _wants_response(ctx):
            return None
        return {"interaction": {"id": str(interaction.id), "type": interaction.type}}

    def _webhook_interaction(self, ctx: Ctx) -> Interaction:
        interaction = self.world.interactions_by_token.get(ctx.params["webhook_token"])
        if interaction is None or str(interaction.application_id) != ctx.params["webhook_id"]:
            raise ApiError(404, 10015, "Unknown Webhook")
        if self.clock.monotonic() - interaction.created_at > self.config.interaction_token_seconds:
            raise ApiError(401, 50027, "Invalid Webhook Token")
        if interaction.response_type is None or interaction.type == AUTOCOMPLETE:
            # An autocomplete result is the whole answer: there is no message to follow up or edit.
            raise ApiError(404, 10015, "Unknown Webhook")
        return interaction

    def _webhook_message(self, ctx: Ctx, interaction: Interaction) -> Message:
        raw = ctx.params.get("message_id", "@original")
        mid = interaction.original_message_id if raw == "@original" else int(raw) if raw.isdigit() else None
        message = None if mid is None else self.world.messages.get(mid)
        if message is None or message.deleted:
            raise ApiError(404, 10008, "Unknown Message")
        return message

    async def webhook_execute(self, ctx: Ctx) -> JSON | None:
        """Follow-up message (``?wait=true`` returns it)."""
        interaction = self._webhook_interaction(ctx)
        if not _has_content(ctx, "poll"):
            raise ApiError(400, 50006, "Cannot send an empty message")
        check_message(ctx.body)
        thinking = self._thinking(interaction)
        if thinking is not None:
            # Discord: straight after a deferral a follow-up "will function as Edit Original Interaction
            # Response": the loading message is edited, and its ephemeral state is the deferral's.
            self._check_interaction_files(interaction, ctx.files)
            body = {**ctx.body, "flags": int(ctx.body.get("flags") or 0) & ~EPHEMERAL}
            self._edit(thinking, body, ctx.files, by_webhook=True)
            return thinking.to_json(self.world) if ctx.query.get("wait") in ("1", "true", "True") else None
        message = self._interaction_message(interaction, ctx.body, message_type=0, files=ctx.files)
        interaction.followup_ids.append(message.id)
        self.events.emit_message("MESSAGE_CREATE", message)
        if ctx.query.get("wait") in ("1", "true", "True"):
            return message.to_json(self.world)
        return None

    def _thinking(self, interaction: Interaction) -> Message | None:
        """A deferred answer's "thinking" message while nothing has taken its place yet."""
        if interaction.response_type != 5 or interaction.original_message_id is None:
            return None
        message = self.world.messages.get(interaction.original_message_id)
        return message if message is not None and not message.deleted and message.flags & LOADING else None

    async def webhook_get(self, ctx: Ctx) -> JSON:
        """Fetch the original answer or a follow-up."""
        interaction = self._webhook_interaction(ctx)
        return self._webhook_message(ctx, interaction).to_json(self.world)

    async def webhook_edit(self, ctx: Ctx) -> JSON:
        """Edit the original answer (ends a deferral's "thinking") or a follow-up."""
        interaction = self._webhook_interaction(ctx)
        message = self._webhook_message(ctx, interaction)
        check_message(ctx.body)
        self._check_interaction_files(interaction, ctx.files)
        self._edit(message, ctx.body, ctx.files, by_webhook=True)
        return message.to_json(self.world)

    def _edit(self, message: Message, body: JSON, files: list[FilePart], *, by_webhook: bool = False) -> None:
        """Apply an edit, its files too (all checked first, so a refusal changes nothing), and announce it.

        Through the interaction's webhook, an edit of a deferral's "thinking" message is its first
        content, not an edit.
        """
        attached = message_files(self.world, message.channel_id, body, files, kept=message.attachments)
        was_loading = bool(message.flags & LOADING)
        _apply_edit(message, body, self.clock.wall())
        if attached is not None:
            self.world.set_attachments(message, attached)
        if by_webhook:
            message.flags &= ~LOADING
            if was_loading:
                message.edited_at = None
        self.events.emit_message("MESSAGE_UPDATE", message)

    async def webhook_delete(self, ctx: Ctx) -> None:
        """Delete the original answer or a follow-up."""
        interaction = self._webhook_interaction(ctx)
        message = self._webhook_message(ctx, interaction)
        message.deleted = True
        self.world.set_attachments(message, [])
        self.events.emit_message_delete(message)

    # -- channels -----------------------------------------------------------------------------

    async def get_channel(self, ctx: Ctx) -> JSON:
        """``GET /channels/{id}``."""
        return self.channel(ctx).to_json(self.world, ctx.bot.user.id)

    async def patch_channel(self, ctx: Ctx) -> JSON:
        """Modify a channel, or a thread's name, archive and lock flags."""
        channel = self.channel(ctx)
        uid = ctx.bot.user.id
        body = ctx.body
        if channel.is_thread:
            self._check_thread_edit(uid, channel, body)
            if "archived" in body and body["archived"] is not None:
                channel.archived = bool(body["archived"])
                channel.archive_timestamp = self.clock.wall()
            for name in ("locked", "invitable", "auto_archive_duration", "name"):
                if body.get(name) is not None:
                    setattr(channel, name, body[name])
            self.events.emit_channel("THREAD_UPDATE", channel)
        else:
            self.require(uid, channel, Permission.MANAGE_CHANNELS)
            for name in ("name", "position"):
                if body.get(name) is not None:
                    setattr(channel, name, body[name])
            if body.get("permission_overwrites") is not None:
                self.require(uid, channel, Permission.MANAGE_ROLES)
                channel.overwrites = {
                    int(o["id"]): Overwrite(
                        int(o["id"]), int(o["type"]), int(o.get("allow") or 0), int(o.get("deny") or 0)
                    )
                    for o in body["permission_overwrites"]
                }
            self.events.emit_channel("CHANNEL_UPDATE", channel)
        return channel.to_json(self.world, uid)

    def _check_thread_edit(self, uid: int, thread: Channel, body: JSON) -> None:
        """Discord's rules for editing a thread (Modify Channel, threads topic).

        An archived thread takes an edit only together with ``archived: false``. ``locked`` and
        ``rate_limit_per_user`` need MANAGE_THREADS, and so does ``invitable`` here; ``name``,
        ``archived`` and ``auto_archive_duration`` need MANAGE_THREADS or being the creator, except
        that a member may unarchive an unlocked thread. Only MANAGE_THREADS unarchives a locked one.
        """
        if thread.archived and body.get("archived") is not False:
            raise thread_archived()
        moderator = bool(self.world.permissions(uid, thread) & Permission.MANAGE_THREADS)
        if moderator:
            return
        unarchive = body.get("archived") is False and not body.get("locked") and not thread.locked
        if unarchive and set(body) <= {"archived", "locked"} and uid in thread.thread_members:
            return
        if any(k in body for k in ("locked", "rate_limit_per_user", "invitable")) or thread.locked:
            raise self.denied(uid, thread, Permission.MANAGE_THREADS)
        if uid != thread.owner_id:
            raise self.denied(uid, thread, Permission.MANAGE_THREADS)

    async def delete_channel(self, ctx: Ctx) -> JSON:
        """Delete a channel or thread."""
        channel = self.channel(ctx)
        perm = Permission.MANAGE_THREADS if channel.is_thread else Permission.MANAGE_CHANNELS
        self.require(ctx.bot.user.id, channel, perm)
        data = channel.to_json(self.world)
        self.events.emit_channel("THREAD_DELETE" if channel.is_thread else "CHANNEL_DELETE", channel)
        guild = self.world.guild_of(channel)
        if guild is not None:
            guild.channels.remove(channel.id)
        del self.world.channels[channel.id]
        return data

    async def put_overwrite(self, ctx: Ctx) -> None:
        """Set a role or member overwrite: needs MANAGE_ROLES in the channel."""
        channel = self.channel(ctx)
        self.require(ctx.bot.user.id, channel, Permission.MANAGE_ROLES)
        target = ctx.id("overwrite_id")
        channel.overwrites[target] = Overwrite(
            target, int(ctx.body.get("type") or 0), int(ctx.body.get("allow") or 0), int(ctx.body.get("deny") or 0)
        )
        self.events.emit_channel("CHANNEL_UPDATE", channel)

    async def delete_overwrite(self, ctx: Ctx) -> None:
        """Remove an overwrite."""
        channel = self.channel(ctx)
        self.require(ctx.bot.user.id, channel, Permission.MANAGE_ROLES)
        channel.overwrites.pop(ctx.id("overwrite_id"), None)
        self.events.emit_channel("CHANNEL_UPDATE", channel)

    async def typing(self, ctx: Ctx) -> None:
        """Typing indicator: accepted and ignored."""
        self.channel(ctx)

    # -- messages -----------------------------------------------------------------------------

    def check_can_post(self, user_id: int, channel: Channel) -> None:
        """Discord's rules for posting: permissions, archived and locked threads, closed DMs."""
        world = self.world
        if channel.type == ChannelType.DM:
            other = next((u for u in channel.recipients if u != user_id), user_id)
            if not world.users[other].dms_open:
                raise ApiError(403, 50007, "Cannot send messages to this user")
            return
        if channel.is_thread:
            self.require(user_id, channel, Permission.SEND_MESSAGES_IN_THREADS)
            if channel.archived:
                raise thread_archived()
            if channel.locked:
                self.require(user_id, channel, Permission.MANAGE_THREADS)
        else:
            self.require(user_id, channel, Permission.SEND_MESSAGES)

    def _check_can_attach(self, ctx: Ctx, channel: Channel) -> None:
        """New files in a server's channel need ATTACH_FILES there (Discord: 403/50013 without it)."""
        if ctx.files and channel.type != ChannelType.DM:
            self.require(ctx.bot.user.id, channel, Permission.ATTACH_FILES)

    async def list_messages(self, ctx: Ctx) -> list[JSON]:
        """Newest first, as Discord pages them."""
        channel = self.channel(ctx)
        self.require(ctx.bot.user.id, channel, Permission.READ_MESSAGE_HISTORY)
        limit = int(ctx.query.get("limit", 50))
        messages = [m for m in self.world.channel_messages_of(channel.id) if m.ephemeral_for is None]
        if "before" in ctx.query:
            messages = [m for m in messages if m.id < int(ctx.query["before"])]
        if "after" in ctx.query:
            messages = [m for m in messages if m.id > int(ctx.query["after"])]
        return [m.to_json(self.world, ctx.bot.user.id) for m in reversed(messages)][:limit]

    async def create_message(self, ctx: Ctx) -> JSON:
        """Post a message."""
        channel = self.channel(ctx)
        self.check_can_post(ctx.bot.user.id, channel)
        self._check_can_attach(ctx, channel)
        if not _has_content(ctx):
            raise ApiError(400, 50006, "Cannot send an empty message")
        check_message(ctx.body)
        attached = message_files(self.world, channel.id, ctx.body, ctx.files)
        nonce = ctx.body.get("nonce")
        key = (ctx.bot.user.id, str(nonce))
        if nonce is not None and ctx.body.get("enforce_nonce"):
            if len(str(nonce)) > NONCE_LENGTH:
                raise invalid_form_body()
            seen = self._nonces.get(key)
            if seen is not None and self.clock.wall() - seen[1] < NONCE_SECONDS:
                earlier = self.world.messages.get(seen[0])
                if earlier is not None and not earlier.deleted:
                    return earlier.to_json(self.world, ctx.bot.user.id)
        message = self.world.add_message(channel, ctx.bot.user.id, ctx.body)
        self.world.set_attachments(message, attached or [])
        if nonce is not None:
            self._nonces[key] = (message.id, self.clock.wall())
        self.events.emit_message("MESSAGE_CREATE", message)
        return message.to_json(self.world, ctx.bot.user.id)

    async def get_message(self, ctx: Ctx) -> JSON:
        """Fetch one message."""
        channel = self.channel(ctx)
        self.require(ctx.bot.user.id, channel, Permission.READ_MESSAGE_HISTORY)
        return self.message(ctx, channel).to_json(self.world, ctx.bot.user.id)

    async def edit_message(self, ctx: Ctx) -> JSON:
        """Edit one's own message."""
        channel = self.channel(ctx)
        message = self.message(ctx, channel)
        if message.author_id != ctx.bot.user.id:
            raise ApiError(403, 50005, "Cannot edit a message authored by another user")
        if channel.is_thread and channel.archived:
            raise thread_archived()
        self._check_can_attach(ctx, channel)
        check_message(ctx.body)
        self._edit(message, ctx.body, ctx.files)
        return message.to_json(self.world, ctx.bot.user.id)

    async def delete_message(self, ctx: Ctx) -> None:
        """Delete a message: others' need MANAGE_MESSAGES."""
        channel = self.channel(ctx)
        message = self.message(ctx, channel)
        if message.author_id != ctx.bot.user.id:
            self.require(ctx.bot.user.id, channel, Permission.MANAGE_MESSAGES)
        message.deleted = True
        self.world.set_attachments(message, [])
        self.events.emit_message_delete(message)

    # -- reactions ----------------------------------------------------------------------------

    def react(self, user_id: int, channel: Channel, message: Message, raw_emoji: str) -> None:
        """Add a reaction as ``user_id``, with Discord's checks; shared with scripted users."""
        require_reaction_emoji(raw_emoji)
        key = emoji_key(raw_emoji)
        self.require(user_id, channel, Permission.READ_MESSAGE_HISTORY)
        if channel.is_thread and channel.archived:
            raise thread_archived()
        users = message.reactions.get(key)
        if not users:
            self.require(user_id, channel, Permission.ADD_REACTIONS)
            if sum(1 for u in message.reactions.values() if u) >= MAX_REACTIONS:
                raise ApiError(400, 30010, "Maximum number of reactions reached (20)")
        users = message.reactions.setdefault(key, [])
        if user_id not in users:
            users.append(user_id)
            self.events.emit_reaction(message, user_id, key, added=True)

    def unreact(self, user_id: int, message: Message, raw_emoji: str) -> None:
        """Remove ``user_id``'s reaction, if any."""
        require_reaction_emoji(raw_emoji)
        key = emoji_key(raw_emoji)
        users = message.reactions.get(key, [])
        if user_id in users:
            users.remove(user_id)
            if not users:
                del message.reactions[key]
            self.events.emit_reaction(message, user_id, key, added=False)

    async def add_reaction(self, ctx: Ctx) -> None:
        """``PUT .../reactions/{emoji}/@me``."""
        channel = self.channel(ctx)
        self.react(ctx.bot.user.id, channel, self.message(ctx, channel), ctx.params["emoji_name"])

    async def remove_own_reaction(self, ctx: Ctx) -> None:
        """``DELETE .../reactions/{emoji}/@me``."""
        channel = self.channel(ctx)
        self.unreact(ctx.bot.user.id, self.message(ctx, channel), ctx.params["emoji_name"])

    async def remove_user_reaction(self, ctx: Ctx) -> None:
        """Remove another user's reaction: needs MANAGE_MESSAGES."""
        channel = self.channel(ctx)
        message = self.message(ctx, channel)
        user_id = ctx.id("user_id")
        if user_id != ctx.bot.user.id:
            self.require(ctx.bot.user.id, channel, Permission.MANAGE_MESSAGES)
        self.unreact(user_id, message, ctx.params["emoji_name"])

    async def list_reactions(self, ctx: Ctx) -> list[JSON]:
        """Users who reacted with an emoji."""
        channel = self.channel(ctx)
        message = self.message(ctx, channel)
        require_reaction_emoji(ctx.params["emoji_name"])
        users = message.reactions.get(emoji_key(ctx.params["emoji_name"]))
        if users is None:
            raise ApiError(404, 10014, "Unknown Emoji")
        limit = int(ctx.query.get("limit", 25))
        after = int(ctx.query.get("after", 0))
        return [self.world.users[u].to_json() for u in sorted(users) if u > after][:limit]

    async def clear_emoji(self, ctx: Ctx) -> None:
        """Remove every reaction of one emoji: needs MANAGE_MESSAGES."""
        channel = self.channel(ctx)
        message = self.message(ctx, channel)
        self.require(ctx.bot.user.id, channel, Permission.MANAGE_MESSAGES)
        require_reaction_emoji(ctx.params["emoji_name"])
        key = emoji_key(ctx.params["emoji_name"])
        for user_id in list(message.reactions.get(key, [])):
            self.unreact(user_id, message, key)

    async def clear_reactions(self, ctx: Ctx) -> None:
        """Remove every reaction: needs MANAGE_MESSAGES."""
        channel = self.channel(ctx)
        message = self.message(ctx, channel)
        self.require(ctx.bot.user.id, channel, Permission.MANAGE_MESSAGES)
        for key, users in list(message.reactions.items()):
            for user_id in list(users):
                self.unreact(user_id, message, key)

    # -- threads ------------------------------------------------------------------------------

    async def create_thread(self, ctx: Ctx) -> tuple[int, JSON]:
        """Start a thread, where Discord allows that kind; the creator joins it.

        Private threads only in text channels (type 0); from a message, a text channel makes a
        public thread and an announcement channel an announcement thread; forum and media channels
        make posts (a public thread with its first message); threads, voice and stage channels
        (their chats), categories and DMs none. Without ``type`` Discord makes a private thread.
        """
        parent = self.channel(ctx)
        uid = ctx.bot.user.id
        body = ctx.body if isinstance(ctx.body, dict) else {}
        from_message = "message_id" in ctx.params
        if from_message:
            self.message(ctx, parent)
            if ctx.id("message_id") in self.world.channels:
                raise ApiError(400, 160004, "A thread has already been created for this message")
        post = parent.type in POST_PARENTS
        kind = _thread_kind(parent.type, body, from_message=from_message)
        if post:
            self.require(uid, parent, Permission.SEND_MESSAGES)
            check_message(body["message"])
        else:
            private = kind == ChannelType.PRIVATE_THREAD
            self.require(
                uid, parent, Permission.CREATE_PRIVATE_THREADS if private else Permission.CREATE_PUBLIC_THREADS
            )
        thread_id = ctx.id("message_id") if from_message else self.world.ids.next()
        thread = self._open_thread(thread_id, kind, parent, uid, body)
        data = thread.to_json(self.world, uid)
        if post:
            first = self.world.add_message(thread, uid, body["message"])
            self.events.emit_message("MESSAGE_CREATE", first)
            data["message"] = first.to_json(self.world, uid)
        return 201, data

    def _open_thread(self, thread_id: int, kind: ChannelType, parent: Channel, owner: int, body: JSON) -> Channel:
        """Make the thread with its creator as its first member, and announce it."""
        now = self.clock.wall()
        thread = Channel(
            id=thread_id,
            type=kind,
            name=str(body.get("name", "thread")),
            guild_id=parent.guild_id,
            parent_id=parent.id,
            owner_id=owner,
            invitable=kind != ChannelType.PRIVATE_THREAD or body.get("invitable") is not False,
            auto_archive_duration=int(body.get("auto_archive_duration") or 1440),
            archive_timestamp=now,
            created_at=now,
            thread_members={owner: now},
        )
        self.world.channels[thread.id] = thread
        guild = self.world.guilds[parent.guild_id or 0]
        guild.channels.append(thread.id)
        self.events.emit_channel("THREAD_CREATE", thread)
        return thread

    def _thread(self, ctx: Ctx) -> Channel:
        thread = self.channel(ctx)
        if not thread.is_thread:
            raise wrong_channel_type()
        return thread

    def add_to_thread(self, thread: Channel, user_id: int) -> None:
        """Add a thread member and tell the gateway (shared with scripted users)."""
        if user_id not in thread.thread_members:
            thread.thread_members[user_id] = self.clock.wall()
            self.events.emit_thread_members(thread, [user_id], [])

    def remove_from_thread(self, thread: Channel, user_id: int) -> None:
        """Remove a thread member and tell the gateway."""
        if user_id in thread.thread_members:
            self.events.emit_thread_members(thread, [], [user_id])
            del thread.thread_members[user_id]

    async def list_thread_members(self, ctx: Ctx) -> list[JSON]:
        """Thread members (member objects need GUILD_MEMBERS on Discord; ids are enough here)."""
        thread = self._thread(ctx)
        return [thread.member_json(u) for u in thread.thread_members]

    async def get_thread_member(self, ctx: Ctx) -> JSON:
        """One thread member."""
        thread = self._thread(ctx)
        user_id = ctx.id("user_id")
        if user_id not in thread.thread_members:
            raise ApiError(404, 10007, "Unknown Member")
        return thread.member_json(user_id)

    async def join_thread(self, ctx: Ctx) -> None:
        """Join a thread oneself."""
        thread = self._thread(ctx)
        if thread.archived:
            raise thread_archived()
        self.add_to_thread(thread, ctx.bot.user.id)

    async def leave_thread(self, ctx: Ctx) -> None:
        """Leave a thread; Discord "also requires the thread is not archived" (400/50083)."""
        thread = self._thread(ctx)
        if thread.archived:
            raise thread_archived()
        self.remove_from_thread(thread, ctx.bot.user.id)

    async def add_thread_member(self, ctx: Ctx) -> None:
        """Add someone: private threads need membership and invitable or MANAGE_THREADS."""
        thread = self._thread(ctx)
        uid = ctx.bot.user.id
        if thread.archived:
            raise thread_archived()
        self.require(uid, thread, Permission.SEND_MESSAGES_IN_THREADS)
        perms = self.world.permissions(uid, thread)
        may_invite = uid in thread.thread_members and (thread.invitable or uid == thread.owner_id)
        if thread.type == ChannelType.PRIVATE_THREAD and not perms & Permission.MANAGE_THREADS and not may_invite:
            raise missing_permissions()
        user_id = ctx.id("user_id")
        guild = self.world.guild_of(thread)
        if guild is None or user_id not in guild.members:
            raise ApiError(404, 10007, "Unknown Member")
        self.add_to_thread(thread, user_id)

    async def remove_thread_member(self, ctx: Ctx) -> None:
        """Remove someone: the thread's owner or MANAGE_THREADS."""
        thread = self._thread(ctx)
        uid = ctx.bot.user.id
        if thread.archived:
            raise thread_archived()
        if uid != thread.owner_id:
            self.require(uid, thread, Permission.MANAGE_THREADS)
        self.remove_from_thread(thread, ctx.id("user_id"))

    # -- guilds and members -------------------------------------------------------------------

    async def get_guild(self, ctx: Ctx) -> JSON:
        """``GET /guilds/{id}``: the GUILD_CREATE shape minus the gateway-only lists."""
        return guild_object(self.world, self.guild(ctx), ctx.bot.user.id)

    async def get_guild_channels(self, ctx: Ctx) -> list[JSON]:
        """The guild's channels (no threads)."""
        guild = self.guild(ctx)
        channels = [self.world.channels[c] for c in guild.channels]
        return [c.to_json(self.world) for c in channels if not c.is_thread]

    async def create_guild_channel(self, ctx: Ctx) -> JSON:
        """Create Guild Channel: MANAGE_CHANNELS (403/50013), at most 500 channels (400/30013).

        Asked of the guild's permissions, never a category's overwrites: no kinder than Discord. A
        ``parent_id`` must be one of the guild's categories holding fewer than 50 channels (400/50035);
        overwrites need MANAGE_ROLES as well. A channel made in a category without overwrites of its
        own (none, or an empty list, which discord.py always sends) takes the category's: it is created
        synced with its parent.
        """
        guild = self.guild(ctx)
        uid = ctx.bot.user.id
        self.require_guild(uid, guild, Permission.MANAGE_CHANNELS)
        body = ctx.body
        kind, parent = self._new_channel_place(guild, body)
        overwrites = body.get("permission_overwrites") or []
        if overwrites:
            self.require_guild(uid, guild, Permission.MANAGE_ROLES)
        if sum(not self.world.channels[c].is_thread for c in guild.channels) >= MAX_GUILD_CHANNELS:
            raise ApiError(400, 30013, f"Maximum number of guild channels reached ({MAX_GUILD_CHANNELS})")
        channel = Channel(
            id=self.world.ids.next(), type=kind, name=str(body["name"]), guild_id=guild.id,
            position=int(body.get("position") or len(guild.channels)),
            parent_id=None if parent is None else parent.id,
            overwrites={int(o["id"]): Overwrite(int(o["id"]), int(o["type"]), int(o.get("allow") or 0),
                                                int(o.get("deny") or 0)) for o in overwrites},
            created_at=self.clock.wall(),
        )
        if not overwrites and parent is not None:
            channel.overwrites = {k: dataclasses.replace(o) for k, o in parent.overwrites.items()}
        self.world.channels[channel.id] = channel
        guild.channels.append(channel.id)
        self.events.emit_channel("CHANNEL_CREATE", channel)
        return channel.to_json(self.world, uid)

    def _new_channel_place(self, guild: Guild, body: JSON) -> tuple[ChannelType, Channel | None]:
        """A new channel's name, type (text, voice, category) and parent category, checked (400/50035)."""
        if not 1 <= len(str(body.get("name") or "")) <= 100:
            raise invalid("name", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.")
        kind = int(body.get("type") or 0)
        if kind not in (ChannelType.GUILD_TEXT, ChannelType.GUILD_VOICE, ChannelType.GUILD_CATEGORY):
            raise invalid("type", "BASE_TYPE_CHOICES", "Value must be one of {0, 2, 4}.")
        if not body.get("parent_id"):
            return ChannelType(kind), None
        parent = self.world.channels.get(int(body["parent_id"]))
        if (parent is None or parent.guild_id != guild.id or parent.type != ChannelType.GUILD_CATEGORY
                or kind == ChannelType.GUILD_CATEGORY):
            raise invalid("parent_id", "CHANNEL_PARENT_INVALID", "Invalid parent channel.")
        held = sum(self.world.channels[c].parent_id == parent.id and not self.world.channels[c].is_thread
                   for c in guild.channels)
        if held >= MAX_CATEGORY_CHANNELS:
            raise invalid("parent_id", "CHANNEL_PARENT_MAX_CHANNELS",
                          f"Maximum number of channels in category reached ({MAX_CATEGORY_CHANNELS})")
        return ChannelType(kind), parent

    async def get_roles(self, ctx: Ctx) -> list[JSON]:
        """The guild's roles."""
        return [r.to_json() for r in self.guild(ctx).roles.values()]

    async def active_threads(self, ctx: Ctx) -> JSON:
        """Active threads the bot can see."""
        guild = self.guild(ctx)
        uid = ctx.bot.user.id
        channels = [self.world.channels[cid] for cid in guild.channels]
        threads = [c for c in channels if c.is_thread and not c.archived and self.world.can_view(uid, c)]
        return {
            "threads": [t.to_json(self.world, uid) for t in threads],
            "members": [t.member_json(uid) for t in threads if uid in t.thread_members],
        }

    async def list_members(self, ctx: Ctx) -> list[JSON]:
        """Members, for an application whose GUILD_MEMBERS privileged intent is enabled (else 403/50001).

        Discord restricts List Guild Members to that intent whether or not the session asked for it.
        """
        guild = self.guild(ctx)
        if not ctx.bot.privileged_intents & Intent.GUILD_MEMBERS:
            raise missing_access()
        limit = int(ctx.query.get("limit", 1))
        after = int(ctx.query.get("after", 0))
        ids = sorted(u for u in guild.members if u > after)[:limit]
        return [self.world.member_json(guild, u) for u in ids]

    def _member_id(self, ctx: Ctx, guild: Guild) -> int:
        user_id = ctx.id("user_id")
        if user_id not in guild.members:
            raise ApiError(404, 10007, "Unknown Member")
        return user_id

    async def get_member(self, ctx: Ctx) -> JSON:
        """One member."""
        guild = self.guild(ctx)
        return self.world.member_json(guild, self._member_id(ctx, guild))

    async def edit_member(self, ctx: Ctx) -> JSON:
        """Mute, deafen, move, rename or re-role a member, with Discord's permission and voice checks."""
        guild = self.guild(ctx)
        user_id = self._member_id(ctx, guild)
        uid = ctx.bot.user.id
        body = ctx.body
        member = guild.members[user_id]
        for field, perm in MEMBER_EDIT_PERMISSIONS.items():
            if field in body:
                self.require_guild(uid, guild, perm)
        if "nick" in body and not _may_rename(guild, uid, user_id):
            raise missing_permissions()
        if "nick" in body:
            self._check_nick(body["nick"])
        voice = guild.voice_states.get(user_id)
        if voice is None and any(body.get(f) is not None for f in ("mute", "deaf", "channel_id")):
            raise ApiError(400, 40032, "Target user is not connected to voice")
        voice_changed = _set_server_flags(member, body)
        if "channel_id" in body:
            voice_changed = self._move_member(uid, guild, user_id, body["channel_id"]) or voice_changed
        _set_nick_and_roles(member, guild, body)
        if voice_changed:
            self.events.emit_voice_state(guild, user_id)
        self.events.emit_member_update(guild, user_id)
        return self.world.member_json(guild, user_id)

    def _check_nick(self, nick: Any) -> None:
        """Refuse a nickname as Discord does, with 400/50035 naming ``nick``.

        Over 32 characters, or one its unpublished name rules refuse (``refused_nicks``): the whole
        edit falls, its mute too.
        """
        if not isinstance(nick, str) or not nick:
            return  # None or "" removes the nickname
        if len(nick) > NICK_MAX:
            raise invalid("nick", "BASE_TYPE_MAX_LENGTH", f"Must be {NICK_MAX} or fewer in length.")
        for refusal in self.refused_nicks:
            if refusal.pattern.search(nick):
                raise invalid("nick", refusal.code, refusal.message)

    def _move_member(self, uid: int, guild: Guild, user_id: int, target: Any) -> bool:
        """Move a member to the ``target`` voice channel, or disconnect them (``None``); whether it moved."""
        voice = guild.voice_states.get(user_id)
        if voice is None:
            return False
        if target is None:
            del guild.voice_states[user_id]
            return True
        channel = self.world.channels.get(int(target))
        if channel is None or channel.guild_id != guild.id or channel.type not in VOICE_TYPES:
            raise invalid_form_body()
        self.require(uid, channel, Permission.CONNECT)
        voice.channel_id = channel.id
        voice.suppress = channel.type == ChannelType.GUILD_STAGE_VOICE
        voice.request_to_speak = None
        return True

    async def add_member_role(self, ctx: Ctx) -> None:
        """Give a member a role."""
        guild = self.guild(ctx)
        user_id = self._member_id(ctx, guild)
        self.require_guild(ctx.bot.user.id, guild, Permission.MANAGE_ROLES)
        role_id = ctx.id("role_id")
        if role_id not in guild.roles:
            raise ApiError(404, 10011, "Unknown Role")
        if role_id not in guild.members[user_id].roles:
            guild.members[user_id].roles.append(role_id)
            self.events.emit_member_update(guild, user_id)

    async def remove_member_role(self, ctx: Ctx) -> None:
        """Take a role from a member."""
        guild = self.guild(ctx)
        user_id = self._member_id(ctx, guild)
        self.require_guild(ctx.bot.user.id, guild, Permission.MANAGE_ROLES)
        role_id = ctx.id("role_id")
        if role_id in guild.members[user_id].roles:
            guild.members[user_id].roles.remove(role_id)
            self.events.emit_member_update(guild, user_id)

    async def get_voice_state(self, ctx: Ctx) -> JSON:
        """A member's voice state; 404 when not in voice."""
        guild = self.guild(ctx)
        user_id = self._member_id(ctx, guild)
        if user_id not in guild.voice_states:
            raise ApiError(404, 10065, "Unknown Voice State")
        return self.world.voice_state_json(guild, user_id)

    def _stage_state(self, ctx: Ctx, guild: Guild, user_id: int) -> Any:
        """The voice state a stage edit is about: in the stage ``channel_id`` names."""
        state = guild.voice_states.get(user_id)
        if state is None:
            raise ApiError(404, 10065, "Unknown Voice State")
        channel = self.world.channels[state.channel_id]
        target = ctx.body.get("channel_id")
        if channel.type != ChannelType.GUILD_STAGE_VOICE or (target is not None and str(target) != str(channel.id)):
            raise invalid_form_body()
        return state, channel

    async def edit_my_voice_state(self, ctx: Ctx) -> None:
        """On a stage: unsuppress oneself (MUTE_MEMBERS), suppress oneself, request to speak."""
        guild = self.guild(ctx)
        uid = ctx.bot.user.id
        state, channel = self._stage_state(ctx, guild, uid)
        body = ctx.body
        if body.get("suppress") is False:
            self.require(uid, channel, Permission.MUTE_MEMBERS)
        if body.get("request_to_speak_timestamp") is not None:
            self.require(uid, channel, Permission.REQUEST_TO_SPEAK)
        if body.get("suppress") is not None:
            state.suppress = bool(body["suppress"])
        if "request_to_speak_timestamp" in body:
            state.request_to_speak = None if body["request_to_speak_timestamp"] is None else self.clock.wall()
        self.events.emit_voice_state(guild, uid)

    async def edit_voice_state(self, ctx: Ctx) -> None:
        """On a stage: (un)suppress another member; needs MUTE_MEMBERS."""
        guild = self.guild(ctx)
        user_id = self._member_id(ctx, guild)
        state, channel = self._stage_state(ctx, guild, user_id)
        self.require(ctx.bot.user.id, channel, Permission.MUTE_MEMBERS)
        if ctx.body.get("suppress") is not None:
            state.suppress = bool(ctx.body["suppress"])
            # Discord: unsuppressing a person stamps a request to speak (not a bot); suppressing clears it.
            person = not self.world.users[user_id].bot
            state.request_to_speak = self.clock.wall() if not state.suppress and person else None
        self.events.emit_voice_state(guild, user_id)

    async def create_dm(self, ctx: Ctx) -> JSON:
        """Open (or find) the DM channel with a user."""
        recipient = int(ctx.body.get("recipient_id", 0))
        if recipient not in self.world.users:
            raise invalid_form_body()
        channel = self.world.dm_channel(ctx.bot.user.id, recipient)
        return channel.to_json(self.world, ctx.bot.user.id)


AUTOCOMPLETE = 4
"""The interaction type of an autocomplete request (APPLICATION_COMMAND_AUTOCOMPLETE)."""
AUTOCOMPLETE_RESULT = 8
"""The callback type that answers it (APPLICATION_COMMAND_AUTOCOMPLETE_RESULT)."""
MAX_CHOICES = 25


def autocomplete_choices(data: JSON) -> list[JSON]:
    """The ``choices`` of an autocomplete result, checked as Discord checks them (at most 25, names 1-100).

    Raises:
        ApiError: 50035 for a malformed list.
    """
    choices = data.get("choices")
    if not isinstance(choices, list) or len(choices) > MAX_CHOICES:
        raise invalid_form_body()
    for choice in choices:
        name = choice.get("name") if isinstance(choice, dict) else None
        value = choice.get("value") if isinstance(choice, dict) else None
        if not isinstance(name, str) or not 1 <= len(name) <= 100:
            raise invalid_form_body()
        if (isinstance(value, str) and len(value) > 100) or not isinstance(value, str | int | float):
            raise invalid_form_body()
    return list(choices)


NICK_MAX = 32
"""Discord's longest nickname (Usernames and Nicknames: 1 to 32 characters)."""


@dataclasses.dataclass(frozen=True)
class NickRefusal:
    """Nicknames matching ``pattern`` are refused with 400/50035 and this inner ``code`` and ``message``.

    Discord says not every name rule is published and that bots must handle every error; the inner
    code of such a refusal is not published either, so a test picks it.
    """

    pattern: re.Pattern[str]
    code: str = "NICKNAME_INVALID"
    message: str = "Nickname is invalid."


MEMBER_EDIT_PERMISSIONS = {
    "mute": Permission.MUTE_MEMBERS,
    "deaf": Permission.DEAFEN_MEMBERS,
    "channel_id": Permission.MOVE_MEMBERS,
    "nick": Permission.MANAGE_NICKNAMES,
    "roles": Permission.MANAGE_ROLES,
    "communication_disabled_until": Permission.MODERATE_MEMBERS,
}
"""What each field of Modify Guild Member needs, checked in this order."""


def _top_position(guild: Guild, user_id: int) -> int:
    """The position of a member's highest role (@everyone's is 0)."""
    return max((guild.roles[r].position for r in guild.members[user_id].roles if r in guild.roles), default=0)


def _may_rename(guild: Guild, actor: int, target: int) -> bool:
    """Discord's Permission Hierarchy for nicknames: nobody renames the owner, and a bot only a member below it.

    Below: the member's highest role is lower than the bot's highest role (an equal one is refused too).
    """
    if target == guild.owner_id:
        return False
    return actor == guild.owner_id or _top_position(guild, target) < _top_position(guild, actor)


def _set_server_flags(member: Member, body: JSON) -> bool:
    """Apply ``mute`` and ``deaf``; whether either changed."""
    changed = False
    for name in ("mute", "deaf"):
        value = body.get(name)
        if value is not None and bool(value) != getattr(member, name):
            setattr(member, name, bool(value))
            changed = True
    return changed


def _set_nick_and_roles(member: Member, guild: Guild, body: JSON) -> None:
    """Apply ``nick`` (empty clears it) and ``roles`` (unknown ids dropped)."""
    if "nick" in body:
        member.nick = body["nick"] or None
    if body.get("roles") is not None:
        member.roles = [int(r) for r in body["roles"] if r is not None and int(r) in guild.roles]


POST_PARENTS = (ChannelType.GUILD_FORUM, ChannelType.GUILD_MEDIA)
"""Channels whose threads are posts: a public thread that starts with its first message."""


def _thread_kind(parent: ChannelType, body: JSON, *, from_message: bool) -> ChannelType:
    """The kind of thread a channel makes for this request, or Discord's refusal."""
    if parent in POST_PARENTS:
        if from_message or int(body.get("type") or 11) != ChannelType.PUBLIC_THREAD:
            raise wrong_channel_type()
        if not isinstance(body.get("message"), dict):
            raise invalid("message", "BASE_TYPE_REQUIRED", "This field is required")
        return ChannelType.PUBLIC_THREAD
    if parent == ChannelType.GUILD_TEXT:
        kind = ChannelType.PUBLIC_THREAD if from_message else ChannelType(int(body.get("type") or 12))
        if kind not in (ChannelType.PUBLIC_THREAD, ChannelType.PRIVATE_THREAD):
            raise wrong_channel_type()
        return kind
    if parent == ChannelType.GUILD_ANNOUNCEMENT:
        if not from_message and int(body.get("type") or 12) != ChannelType.ANNOUNCEMENT_THREAD:
            raise wrong_channel_type()
        return ChannelType.ANNOUNCEMENT_THREAD
    raise wrong_channel_type()


def _has_content(ctx: Ctx, *more: str) -> bool:
    """Whether a new message has something to show: Discord refuses one with none (50006)."""
    keys = ("content", "embeds", "components", "sticker_ids", "attachments", *more)
    return bool(ctx.files) or any(ctx.body.get(k) for k in keys)


def _wants_response(ctx: Ctx) -> bool:
    """Whether a callback asked for the interaction callback response (``?with_response=true``)."""
    return ctx.query.get("with_response") in ("1", "true", "True")


def _callback_response(world: World, interaction: Interaction, kind: int, message: Message | None) -> JSON:
    """The interaction callback response: what the callback made, and its message."""
    result: JSON = {
        "interaction": {
            "id": str(interaction.id),
            "type": interaction.type,
            "response_message_id": None if message is None else str(message.id),
            "response_message_loading": kind == 5,
            "response_message_ephemeral": bool(message is not None and message.ephemeral_for),
        }
    }
    if message is not None:
        result["resource"] = {"type": kind, "message": message.to_json(world)}
    return result


def _apply_edit(message: Message, data: JSON, now: float) -> None:
    for name in ("content", "embeds", "components"):
        if data.get(name) is not None:
            setattr(message, name, data[name])
    if data.get("flags") is not None:
        message.flags = (message.flags & (EPHEMERAL | LOADING)) | int(data["flags"])
    message.edited_at = now
