"""Scripted users: people at the table, acting as a real Discord client would.

A scripted user changes the model directly (joins voice, reacts, posts, runs a slash command,
clicks a button) with the same permission checks REST applies, and the emulator dispatches the
gateway events Discord would send. Answers to interactions can be awaited.
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol, TypeVar

from .attachments import Attachments, FilePart, Upload, message_files
from .errors import ApiError, missing_access, missing_permissions
from .events import Events
from .ratelimit import Clock
from .rest import Rest
from .state import (
    JSON,
    VOICE_TYPES,
    Application,
    Channel,
    ChannelType,
    Guild,
    Interaction,
    Message,
    Permission,
    Role,
    User,
    VoiceState,
    World,
)

T = TypeVar("T")
LOADING = 1 << 7
DEFERRED = 5
"""Callback type DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE: a "thinking" message the answer fills in later."""
_SUBCOMMAND, _GROUP, _USER, _CHANNEL, _ROLE, _MENTIONABLE = 1, 2, 6, 7, 8, 9
_ATTACHMENT = 11
_AUTOCOMPLETE = 4


class Host(Protocol):
    """What a scripted user acts through: the parts of the emulator a Discord client reaches."""

    @property
    def world(self) -> World:
        """The model."""

    @property
    def clock(self) -> Clock:
        """The emulator's clock."""

    @property
    def rest(self) -> Rest:
        """REST, whose checks a person's actions share."""

    @property
    def events(self) -> Events:
        """Gateway dispatch, which announces what a person did."""

    @property
    def attachments(self) -> Attachments:
        """Files picked for attachment options."""

    async def wait_for(self, predicate: Callable[[], T | None], timeout: float = 5.0) -> T:  # noqa: ASYNC109
        """Wait until ``predicate()`` is truthy, re-checking on each state change."""


def _components(rows: Iterable[JSON]) -> Iterator[JSON]:
    for row in rows:
        yield row
        yield from _components(row.get("components") or [])


@dataclasses.dataclass
class Reply:
    """A started interaction and what the bot answered; reads the live model each time."""

    emu: Host
    interaction: Interaction

    @property
    def acknowledged(self) -> bool:
        """Whether the bot answered the callback."""
        return self.interaction.response_type is not None

    @property
    def response_type(self) -> int | None:
        """The callback type the bot used (4, 5, 6, 7, 9…)."""
        return self.interaction.response_type

    @property
    def message(self) -> Message | None:
        """The original answer (the clicked message for types 6 and 7)."""
        mid = self.interaction.original_message_id
        return None if mid is None else self.emu.world.messages[mid]

    @property
    def followups(self) -> list[Message]:
        """Follow-up messages, oldest first."""
        return [self.emu.world.messages[m] for m in self.interaction.followup_ids]

    @property
    def ephemeral(self) -> bool:
        """Whether the original answer is visible only to the invoking user."""
        return self.message is not None and self.message.ephemeral_for is not None

    @property
    def content(self) -> str:
        """Text of the original answer ('' if none)."""
        return "" if self.message is None else self.message.content

    async def wait_final(self, timeout: float = 5.0) -> Message:  # noqa: ASYNC109
        """Wait until a deferred answer has been filled in by the bot."""

        def done() -> Message | None:
            message = self.message
            return message if message is not None and not message.flags & LOADING else None

        return await self.emu.wait_for(done, timeout)

    async def wait_followups(self, count: int = 1, timeout: float = 5.0) -> list[Message]:  # noqa: ASYNC109
        """Wait until at least ``count`` follow-ups exist."""
        await self.emu.wait_for(lambda: len(self.interaction.followup_ids) >= count, timeout)
        return self.followups


class ScriptedUser:
    """A person a test or the demo acts as."""

    def __init__(self, emulator: Host, user: User) -> None:
        self.emu = emulator
        self.user = user

    @property
    def id(self) -> int:
        """The user's id."""
        return self.user.id

    @property
    def name(self) -> str:
        """The user's name."""
        return self.user.name

    def __repr__(self) -> str:
        return f"<ScriptedUser {self.name!r} id={self.id}>"

    # -- voice --------------------------------------------------------------------------------

    def _guild(self, channel: Channel) -> Guild:
        guild = self.emu.world.guild_of(channel)
        if guild is None or self.id not in guild.members:
            raise missing_access()
        return guild

    def join_voice(self, channel: Channel, *, self_mute: bool = False) -> VoiceState:
        """Connect to a voice channel (or move there); a standing server mute follows."""
        guild = self._guild(channel)
        if channel.type not in VOICE_TYPES:
            raise ValueError(f"{channel.name!r} is not a voice or stage channel")
        if not self.emu.world.permissions(self.id, channel) & Permission.CONNECT:
            raise missing_permissions()
        state = guild.voice_states.get(self.id)
        if state is None:
            state = VoiceState(self.id, channel.id, secrets.token_hex(16), self_mute=self_mute)
            guild.voice_states[self.id] = state
        else:
            state.channel_id = channel.id
        # A stage seats everyone in the audience: suppressed, unable to speak until a stage
        # moderator (MUTE_MEMBERS) lets them, whatever their server mute says.
        state.suppress = channel.type == ChannelType.GUILD_STAGE_VOICE
        state.request_to_speak = None
        self.emu.events.emit_voice_state(guild, self.id)
        return state

    def request_to_speak(self, guild: Guild) -> None:
        """Raise one's hand on a stage (needs REQUEST_TO_SPEAK)."""
        state = guild.voice_states.get(self.id)
        channel = None if state is None else self.emu.world.channels[state.channel_id]
        if state is None or channel is None or channel.type != ChannelType.GUILD_STAGE_VOICE:
            raise ValueError(f"{self.name} is not on a stage")
        if not self.emu.world.permissions(self.id, channel) & Permission.REQUEST_TO_SPEAK:
            raise missing_permissions()
        state.request_to_speak = self.emu.clock.wall()
        self.emu.events.emit_voice_state(guild, self.id)

    def can_speak(self, guild: Guild) -> bool:
        """Whether others hear this person: in voice, not server- or self-muted, not suppressed."""
        state = guild.voice_states.get(self.id)
        member = guild.members[self.id]
        return state is not None and not (state.suppress or state.self_mute or member.mute)

    move_voice = join_voice

    def leave_voice(self, guild: Guild) -> None:
        """Disconnect from voice in the guild."""
        if guild.voice_states.pop(self.id, None) is not None:
            self.emu.events.emit_voice_state(guild, self.id)

    def set_self_mute(self, guild: Guild, muted: bool = True) -> None:  # noqa: FBT001, FBT002 - reads as prose
        """Toggle one's own microphone mute."""
        state = guild.voice_states.get(self.id)
        if state is None:
            raise ValueError(f"{self.name} is not in voice")
        state.self_mute = muted
        self.emu.events.emit_voice_state(guild, self.id)

    def _set_own_voice(self, guild: Guild, field: str, value: bool) -> None:  # noqa: FBT001
        state = guild.voice_states.get(self.id)
        if state is None:
            raise ValueError(f"{self.name} is not in voice")
        setattr(state, field, value)
        self.emu.events.emit_voice_state(guild, self.id)

    def set_self_deaf(self, guild: Guild, deaf: bool = True) -> None:  # noqa: FBT001, FBT002 - reads as prose
        """Deafen oneself (hear nobody); Discord's client mutes one's microphone with it."""
        state = guild.voice_states.get(self.id)
        if state is not None and deaf:
            state.self_mute = True
        self._set_own_voice(guild, "self_deaf", deaf)

    def set_camera(self, guild: Guild, on: bool = True) -> None:  # noqa: FBT001, FBT002 - reads as prose
        """Turn one's camera on or off in the voice channel one is in."""
        self._set_own_voice(guild, "self_video", on)

    def set_stream(self, guild: Guild, on: bool = True) -> None:  # noqa: FBT001, FBT002 - reads as prose
        """Start or stop sharing one's screen ("Go Live") in the voice channel one is in."""
        self._set_own_voice(guild, "self_stream", on)

    # -- messages and reactions ---------------------------------------------------------------

    def send(self, channel: Channel, content: str, files: Sequence[tuple[str, bytes]] = ()) -> Message:
        """Post a message, with ``files`` as (name, bytes), under the same checks the bot's posts get."""
        if not self.emu.world.can_view(self.id, channel):
            raise missing_access()
        self.emu.rest.check_can_post(self.id, channel)
        parts = [FilePart(i, name, None, data) for i, (name, data) in enumerate(files)]
        if parts and channel.type != ChannelType.DM:
            self.emu.rest.require(self.id, channel, Permission.ATTACH_FILES)
        attached = message_files(self.emu.world, channel.id, {}, parts)
        message = self.emu.world.add_message(channel, self.id, {"content": content})
        self.emu.world.set_attachments(message, attached or [])
        self.emu.events.emit_message("MESSAGE_CREATE", message)
        return message

    def edit(self, message: Message, content: str) -> None:
        """Edit one's own message."""
        message.content = content
        message.edited_at = self.emu.clock.wall()
        self.emu.events.emit_message("MESSAGE_UPDATE", message)

    def delete(self, message: Message) -> None:
        """Delete one's own message."""
        message.deleted = True
        self.emu.events.emit_message_delete(message)

    def _visible(self, message: Message) -> Channel:
        if not self.emu.world.can_see_message(self.id, message):
            raise ApiError(404, 10008, "Unknown Message")
        return self.emu.world.channels[message.channel_id]

    def react(self, message: Message, emoji: str) -> None:
        """Add a reaction (``"✋"`` or ``"name:id"``)."""
        self.emu.rest.react(self.id, self._visible(message), message, emoji)

    def unreact(self, message: Message, emoji: str) -> None:
        """Remove one's reaction."""
        self._visible(message)
        self.emu.rest.unreact(self.id, message, emoji)

    def close_dms(self) -> None:
        """Refuse DMs from server members: bots get 403/50007."""
        self.user.dms_open = False

    def open_dms(self) -> None:
        """Accept DMs again."""
        self.user.dms_open = True

    # -- interactions -------------------------------------------------------------------------

    def _start(self, app: Application, kind: int, channel: Channel, data: JSON, message: Message | None) -> Reply:
        world = self.emu.world
        if not world.can_view(self.id, channel):
            raise missing_access()
        token = f"{app.id}.{world.new_token()}"
        interaction = Interaction(
            id=world.ids.next(),
            token=token,
            application_id=app.id,
            type=kind,
            user_id=self.id,
            channel_id=channel.id,
            guild_id=channel.guild_id,
            data=data,
            created_at=self.emu.clock.monotonic(),
            message_id=None if message is None else message.id,
        )
        world.interactions[interaction.id] = interaction
        world.interactions_by_token[token] = interaction
        self.emu.events.emit_interaction(interaction)
        return Reply(self.emu, interaction)

    def _find_command(self, channel: Channel, name: str, app: Application | None) -> tuple[Application, JSON]:
        apps = [app] if app is not None else list(self.emu.world.applications.values())
        for candidate in apps:
            pools: list[dict[int, JSON]] = []
            if channel.guild_id is not None:
                pools.append(candidate.guild_commands.get(channel.guild_id, {}))
            pools.append(candidate.global_commands)
            for pool in pools:
                for command in pool.values():
                    if command["name"] == name and command.get("type", 1) == 1:
                        return candidate, command
        raise LookupError(f"no slash command {name!r} is registered for this channel")

    def _option_value(self, option: JSON, value: Any, resolved: JSON, guild: Guild | None) -> Any:
        world = self.emu.world
        kind = option["type"]
        if kind == _ATTACHMENT:
            return self._attachment_value(option, value, resolved)
        if kind in (_USER, _CHANNEL, _ROLE, _MENTIONABLE):
            has_id = isinstance(value, ScriptedUser | User | Channel | Role)
            target_id = int(value.id) if has_id else int(value)
            if target_id in world.users:
                resolved.setdefault("users", {})[str(target_id)] = world.users[target_id].to_json()
                if guild is not None and target_id in guild.members:
                    member = world.member_json(guild, target_id, with_user=False)
                    resolved.setdefault("members", {})[str(target_id)] = member
            elif target_id in world.channels:
                channel = world.channels[target_id]
                resolved.setdefault("channels", {})[str(target_id)] = {
                    **channel.to_json(world),
                    "permissions": str(world.permissions(self.id, channel)),
                }
            elif guild is not None and target_id in guild.roles:
                resolved.setdefault("roles", {})[str(target_id)] = guild.roles[target_id].to_json()
            else:
                raise LookupError(f"option {option['name']!r}: unknown id {target_id}")
            return str(target_id)
        return value

    def attach(self, filename: str, data: bytes, content_type: str | None = None) -> Upload:
        """Pick a file for an attachment option (pass the result as the option's value).

        Raises:
            UploadTooLargeError: the file is above Discord's upload limit; the client sends nothing.
        """
        app_id = next(iter(self.emu.world.applications))
        return self.emu.attachments.upload(app_id, filename, data, content_type)

    def _attachment_value(self, option: JSON, value: Any, resolved: JSON) -> str:
        if not isinstance(value, Upload):
            raise LookupError(f"option {option['name']!r} takes a file: pass user.attach(...)")
        resolved.setdefault("attachments", {})[str(value.id)] = self.emu.attachments.resolved(value)
        return str(value.id)

    def _build_options(
        self, spec: list[JSON], values: dict[str, Any], resolved: JSON, guild: Guild | None
    ) -> list[JSON]:
        by_name = {o["name"]: o for o in spec}
        out = []
        for name, value in values.items():
            option = by_name.get(name)
            if option is None:
                raise LookupError(f"unknown option {name!r}; the command has {sorted(by_name)}")
            converted = self._option_value(option, value, resolved, guild)
            out.append({"type": option["type"], "name": name, "value": converted})
        missing = [o["name"] for o in spec if o.get("required") and o["name"] not in values]
        if missing:
            raise LookupError(f"missing required options {missing}")
        return out

    def _walk(
        self, channel: Channel, name: str, app: Application | None,
    ) -> tuple[Application, JSON, list[JSON], list[JSON], list[JSON]]:
        """Find ``"mafia ruleset upload"``'s command and subcommand path, as the client nests them.

        Returns the application, the top-level command, the options tree to send, the list the
        leaf's own options go into, and the leaf's registered options.
        """
        first, *path = name.split()
        app, command = self._find_command(channel, first, app)
        spec: list[JSON] = command.get("options") or []
        root: list[JSON] = []
        level = root
        for part in path:
            option = next((o for o in spec if o["name"] == part and o["type"] in (_SUBCOMMAND, _GROUP)), None)
            if option is None:
                raise LookupError(f"{part!r} is not a subcommand of {first!r}")
            node: JSON = {"type": option["type"], "name": part, "options": []}
            level.append(node)
            level = node["options"]
            spec = option.get("options") or []
        return app, command, root, level, spec

    def command(self, channel: Channel, name: str, *, app: Application | None = None, **options: Any) -> Reply:
        """Run a slash command without waiting: ``"mafia new"`` walks into groups and subcommands."""
        first = name.split()[0]
        app, command, root, level, spec = self._walk(channel, name, app)
        guild = self.emu.world.guild_of(channel)
        resolved: JSON = {}
        level.extend(self._build_options(spec, options, resolved, guild))
        data: JSON = {"id": command["id"], "name": first, "type": 1, "options": root}
        if resolved:
            data["resolved"] = resolved
        if "guild_id" in command:
            data["guild_id"] = command["guild_id"]
        return self._start(app, 2, channel, data, None)

    def autocomplete(
        self, channel: Channel, name: str, focused: str, typed: str, *, app: Application | None = None,
        **options: Any,
    ) -> Reply:
        """Type ``typed`` into option ``focused`` of a slash command: what the client sends as you type.

        Only an option registered with ``autocomplete`` gets these; the other options filled so far
        ride along, and required ones may be missing.
        """
        first = name.split()[0]
        app, command, root, level, spec = self._walk(channel, name, app)
        guild = self.emu.world.guild_of(channel)
        resolved: JSON = {}
        target = next((o for o in spec if o["name"] == focused), None)
        if target is None or not target.get("autocomplete"):
            raise LookupError(f"option {focused!r} of {name!r} has no autocomplete")
        filled = {o["name"]: o for o in spec}
        for key, value in options.items():
            if key not in filled:
                raise LookupError(f"unknown option {key!r}")
            level.append({"type": filled[key]["type"], "name": key,
                          "value": self._option_value(filled[key], value, resolved, guild)})
        level.append({"type": target["type"], "name": focused, "value": typed, "focused": True})
        data: JSON = {"id": command["id"], "name": first, "type": 1, "options": root}
        if resolved:
            data["resolved"] = resolved
        if "guild_id" in command:
            data["guild_id"] = command["guild_id"]
        return self._start(app, _AUTOCOMPLETE, channel, data, None)

    async def suggestions(
        self, channel: Channel, name: str, focused: str, typed: str = "", *, timeout: float = 5.0,  # noqa: ASYNC109
        **options: Any,
    ) -> list[JSON]:
        """The choices the bot offers for ``typed`` in option ``focused`` (name and value of each)."""
        reply = self.autocomplete(channel, name, focused, typed, **options)
        await self.emu.wait_for(lambda: reply.acknowledged, timeout)
        return list(reply.interaction.choices or [])

    async def run_command(
        self,
        channel: Channel,
        name: str,
        *,
        app: Application | None = None,
        timeout: float = 5.0,  # noqa: ASYNC109
        **options: Any,
    ) -> Reply:
        """Run a slash command and wait for the bot's answer, as the person would see it.

        A deferred answer is waited for until the "thinking" message is filled in, deleted, or
        followed up: how long the bot took to answer is not what a person at the table notices.
        """
        reply = self.command(channel, name, app=app, **options)
        await self.emu.wait_for(lambda: reply.acknowledged, timeout)
        if reply.response_type == DEFERRED:

            def answered() -> bool:
                message = reply.message
                return (message is None or message.deleted or not message.flags & LOADING
                        or bool(reply.interaction.followup_ids))

            await self.emu.wait_for(answered, max(timeout, 30.0))
        return reply

    def _component(self, message: Message, custom_id: str) -> JSON:
        self._visible(message)
        for component in _components(message.components):
            if component.get("custom_id") == custom_id:
                if component.get("disabled"):
                    raise ValueError(f"component {custom_id!r} is disabled")
                return component
        raise LookupError(f"no component {custom_id!r} on message {message.id}")

    def _message_app(self, message: Message) -> Application:
        app = self.emu.world.app_by_user(message.author_id)
        if app is None:
            raise LookupError("components only work on a bot's messages")
        return app

    def click(self, message: Message, custom_id: str) -> Reply:
        """Press a button without waiting."""
        component = self._component(message, custom_id)
        data = {"custom_id": custom_id, "component_type": component.get("type", 2)}
        channel = self.emu.world.channels[message.channel_id]
        return self._start(self._message_app(message), 3, channel, data, message)

    def select(self, message: Message, custom_id: str, values: list[str]) -> Reply:
        """Pick options in a select menu without waiting."""
        component = self._component(message, custom_id)
        data: JSON = {"custom_id": custom_id, "component_type": component.get("type", 3), "values": values}
        channel = self.emu.world.channels[message.channel_id]
        return self._start(self._message_app(message), 3, channel, data, message)

    def submit_modal(self, reply: Reply, values: dict[str, str]) -> Reply:
        """Fill in and send the modal the bot answered ``reply`` with (interaction type 5, MODAL_SUBMIT).

        Each text input comes back as Discord sends it: in its label (type 18), or in its action row.
        """
        asked = reply.interaction
        modal = asked.modal
        if modal is None or asked.user_id != self.id:
            raise LookupError("the bot showed this user no modal there")
        fields: list[JSON] = []
        for component in modal.get("components") or []:
            inner = component.get("component") if component.get("type") == 18 else next(
                iter(component.get("components") or []), None)
            if isinstance(inner, dict) and inner.get("type") == 4:
                value = {"type": 4, "custom_id": inner["custom_id"], "value": values.get(inner["custom_id"], "")}
                fields.append({"type": 18, "component": value} if component.get("type") == 18
                              else {"type": 1, "components": [value]})
        world = self.emu.world
        message = None if asked.message_id is None else world.messages[asked.message_id]
        data: JSON = {"custom_id": modal["custom_id"], "components": fields}
        return self._start(world.applications[asked.application_id], 5, world.channels[asked.channel_id], data,
                           message)

    async def press(self, message: Message, custom_id: str, timeout: float = 5.0) -> Reply:  # noqa: ASYNC109
        """Press a button and wait for the bot's answer."""
        reply = self.click(message, custom_id)
        await self.emu.wait_for(lambda: reply.acknowledged, timeout)
        return reply

    async def choose(self, message: Message, custom_id: str, values: list[str], timeout: float = 5.0) -> Reply:  # noqa: ASYNC109
        """Pick select options and wait for the bot's answer."""
        reply = self.select(message, custom_id, values)
        await self.emu.wait_for(lambda: reply.acknowledged, timeout)
        return reply

    # -- what this user sees ------------------------------------------------------------------

    def visible_messages(self, channel: Channel) -> list[Message]:
        """Messages of a channel this user sees, their own ephemeral answers included."""
        return self.emu.world.visible_messages(self.id, channel)

    def visible_channels(self, guild: Guild) -> list[Channel]:
        """Channels and threads this user sees."""
        return self.emu.world.visible_channels(self.id, guild)

    def ephemeral_messages(self) -> list[Message]:
        """Every ephemeral answer addressed to this user."""
        return [m for m in self.emu.world.messages.values() if m.ephemeral_for == self.id and not m.deleted]

    def dm_messages(self, bot: Application | User) -> list[Message]:
        """Messages in this user's DM with a bot."""
        other = bot.user if isinstance(bot, Application) else bot
        channel = self.emu.world.dm_channel(self.id, other.id)
        return self.emu.world.channel_messages_of(channel.id)

    async def wait_for_message(
        self,
        channel: Channel,
        predicate: Callable[[Message], bool] = lambda _m: True,
        timeout: float = 5.0,  # noqa: ASYNC109
    ) -> Message:
        """Wait until a message this user can see in ``channel`` matches ``predicate``."""

        def found() -> Message | None:
            return next((m for m in reversed(self.visible_messages(channel)) if predicate(m)), None)

        return await self.emu.wait_for(found, timeout)

    def has_role(self, guild: Guild, role: Role) -> bool:
        """Whether this user has the role in the guild."""
        return role.id in guild.members[self.id].roles
