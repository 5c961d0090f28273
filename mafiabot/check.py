"""``mafiabot check``: is this installation ready to host a table?

A host usually finds a missing permission in the middle of an evening, when the first mute or the
mafia's thread fails. The check finds it before: it validates the config, logs in with the token,
connects to the gateway with the bot's intents, reads every server's permissions for the bot
(server-wide, then each channel a table could use), and looks for libopus. Every problem comes with
how to fix it, and the invite URL asks for exactly the permissions the bot needs.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import ctypes.util
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field

import discord
import discord.gateway
import discord.http
import yarl

from mafiabot.config import Config

TEXT_PERMISSIONS: dict[str, str] = {
    "view_channel": "View Channel",
    "send_messages": "Send Messages",
    "read_message_history": "Read Message History",
    "add_reactions": "Add Reactions",
    "manage_messages": "Manage Messages",
    "create_private_threads": "Create Private Threads",
    "send_messages_in_threads": "Send Messages in Threads",
    "manage_threads": "Manage Threads",
}
"""What a table's text channel needs: the table's messages, the ✋ votes and the mafia's thread."""

VOICE_PERMISSIONS: dict[str, str] = {
    "view_channel": "View Channel",
    "connect": "Connect",
    "speak": "Speak",
    "mute_members": "Mute Members",
}
"""What a table's voice channel needs: the floor (server mutes) and the voice cues."""

PERMISSION_NAMES = {**TEXT_PERMISSIONS, **VOICE_PERMISSIONS}
NEEDED_PERMISSIONS = discord.Permissions(**dict.fromkeys(PERMISSION_NAMES, True))
"""Exactly what the invite URL asks for."""

BOT_INTENTS = discord.Intents.default()
"""The intents ``MafiaBot`` connects with: none of them privileged."""

NEEDED_INTENTS = {
    "guilds": "Guilds",
    "guild_messages": "Guild Messages",
    "guild_reactions": "Guild Message Reactions",
    "voice_states": "Guild Voice States",
}
"""Channels, the table's messages, the ✋ votes, and who sits in voice."""

SCOPES = ("bot", "applications.commands")
READY_TIMEOUT = 20.0


@dataclass(frozen=True, slots=True)
class Finding:
    """One line of the report; ``fix`` says what to do when ``ok`` is False."""

    topic: str
    ok: bool
    detail: str
    fix: str = ""
    required: bool = True
    """A problem that is not required (libopus without voice cues) is a warning."""


@dataclass
class Report:
    """Everything the check found, and the invite URL once the application is known."""

    findings: list[Finding] = field(default_factory=list)
    invite_url: str | None = None

    @property
    def ok(self) -> bool:
        """Whether nothing required is missing."""
        return all(f.ok or not f.required for f in self.findings)

    def add(self, topic: str, detail: str, fix: str = "", *, ok: bool = False, required: bool = True) -> None:
        """Record a finding."""
        self.findings.append(Finding(topic, ok, detail, fix, required))

    def lines(self) -> Iterator[str]:
        """The report as text, one finding per line with its fix indented below."""
        for f in self.findings:
            mark = "ok" if f.ok else ("missing" if f.required else "warning")
            yield f"[{mark}] {f.topic}: {f.detail}"
            if f.fix and not f.ok:
                yield f"    fix: {f.fix}"
        if self.invite_url:
            yield f"invite URL (exactly the permissions the bot needs): {self.invite_url}"


def invite_url(client_id: int) -> str:
    """The OAuth2 URL that adds the bot with the slash commands and exactly ``NEEDED_PERMISSIONS``."""
    return discord.utils.oauth_url(client_id, permissions=NEEDED_PERMISSIONS, scopes=SCOPES)


def client_id_from_token(token: str) -> int | None:
    """The bot's user id, which is its application's client id, read from the token's first part.

    >>> client_id_from_token("MTIzNDU2Nzg5MDEyMzQ1Njc4.x.y")
    123456789012345678
    >>> client_id_from_token("not a token") is None
    True
    """
    head = token.split(".", 1)[0]
    try:
        decoded = base64.b64decode(head + "=" * (-len(head) % 4), validate=True).decode("ascii")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        decoded = ""
    if decoded.isdigit():
        return int(decoded)
    return int(head) if head.isdigit() and "." in token else None


def _names(permissions: list[str]) -> str:
    return ", ".join(PERMISSION_NAMES[p] for p in permissions)


@contextlib.contextmanager
def _pointed_at(config: Config) -> Iterator[None]:
    """Use ``[discord] api_base`` and ``gateway_url`` from the config (a local emulator), then restore."""
    base, gateway = discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY
    if config.discord.api_base:
        discord.http.Route.BASE = config.discord.api_base.rstrip("/")
    if config.discord.gateway_url:
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(config.discord.gateway_url)
    try:
        yield
    finally:
        discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = base, gateway


def check_intents(report: Report, intents: discord.Intents) -> None:
    """The bot's intents must cover what it listens to and need nothing privileged."""
    missing = [label for name, label in NEEDED_INTENTS.items() if not getattr(intents, name)]
    if missing:
        report.add("intents", f"the bot does not ask for {', '.join(missing)}",
                   "connect with discord.Intents.default(), as MafiaBot does")
    privileged = [name for name in ("members", "presences", "message_content") if getattr(intents, name)]
    if privileged:
        report.add("intents", f"privileged intents requested: {', '.join(privileged)}",
                   "enable them in the Developer Portal (Bot > Privileged Gateway Intents) or stop asking for them",
                   required=False)


def check_guild(report: Report, guild: discord.Guild) -> None:
    """Server-wide permissions first; then each text and voice channel the bot can see."""
    me = guild.me
    topic = f"server {guild.name!r} ({guild.id})"
    if me is None:
        report.add(topic, "the bot's member is not known", "make sure the bot is still in this server")
        return
    base = me.guild_permissions
    missing = [p for p in PERMISSION_NAMES if not getattr(base, p)]
    if missing:
        report.add(topic, f"missing server-wide: {_names(missing)}",
                   f"Server Settings > Roles > {me.top_role.name}: allow {_names(missing)} "
                   "(or invite the bot again with the URL below)")
    problems = 0
    for channel in guild.channels:
        if isinstance(channel, discord.TextChannel):
            wanted = TEXT_PERMISSIONS
        elif isinstance(channel, discord.VoiceChannel):
            wanted = VOICE_PERMISSIONS
        else:
            continue
        perms = channel.permissions_for(me)
        if not perms.view_channel:
            continue  # a channel the bot cannot see is not one of its tables
        lacking = [p for p in wanted if not getattr(perms, p) and p not in missing]
        if lacking:
            problems += 1
            report.add(f"{topic} #{channel.name}", f"missing in this channel: {_names(lacking)}",
                       f"Edit Channel > Permissions: allow {_names(lacking)} for the bot or its role "
                       "(an override denies it here)")
    if not missing and not problems:
        report.add(topic, "every permission a table needs", ok=True)


def check_rulesets(report: Report, config: Config) -> None:
    """Name the rulesets every server is offered besides the presets, from ``[game] rulesets_dir``.

    The folder was already read when the config loaded (a bad file stops there); this shows the
    host what the servers will see.
    """
    from mafiabot.rulesets import load_rulesets_dir

    folder = config.game.rulesets_dir
    if not folder:
        report.add("rulesets", "the presets only (no [game] rulesets_dir)", ok=True)
        return
    hosted = load_rulesets_dir(folder)
    names = ", ".join(f"{r.name} ({'/'.join(map(str, r.ruleset.player_counts))} players)" for r in hosted.values())
    report.add("rulesets", f"the presets and {len(hosted)} from {folder}: {names or 'none'}", ok=True)


def check_opus(report: Report, *, cues: bool) -> None:
    """Look for libopus, which encodes the voice cues; without it the bot still hosts, silently."""
    if discord.opus.is_loaded():
        report.add("libopus", "loaded", ok=True)
        return
    found = ctypes.util.find_library("opus")
    if found is not None:
        try:
            discord.opus.load_opus(found)
        except OSError as exc:
            report.add("libopus", f"{found} does not load: {exc}", "reinstall libopus (Debian/Ubuntu: libopus0)",
                       required=cues)
            return
        report.add("libopus", f"found ({found})", ok=True)
        return
    report.add("libopus", "not found: voice cues cannot play",
               "install libopus (Debian/Ubuntu: apt install libopus0; Fedora: dnf install opus; macOS: brew install "
               "opus), or turn voice cues off", required=cues)


def check_voice_libraries(report: Report, *, cues: bool) -> None:
    """PyNaCl and davey (Discord's required DAVE encryption) for a voice connection; espeak-ng for speech."""
    from discord.voice_client import has_nacl
    from discord.voice_state import has_dave

    fix = "reinstall the bot with its voice extra: pip install -e . (it depends on discord.py[voice])"
    if has_nacl:
        report.add("PyNaCl", "installed", ok=True)
    else:
        report.add("PyNaCl", "not installed: voice cues cannot connect", fix, required=cues)
    if has_dave:
        report.add("davey", "installed (DAVE end-to-end encryption, required by Discord voice)", ok=True)
    else:
        report.add("davey", "not installed: Discord refuses voice without DAVE encryption", fix, required=cues)
    espeak = shutil.which("espeak-ng")
    if espeak is not None:
        report.add("espeak-ng", f"found ({espeak}): the cues are spoken in en, ru and ka", ok=True)
    else:
        report.add("espeak-ng", "not found: the voice cues are tones only, without spoken announcements",
                   "optional: apt install espeak-ng (Debian/Ubuntu), dnf install espeak-ng, brew install espeak-ng",
                   required=False)


async def check(config: Config, *, timeout: float = READY_TIMEOUT) -> Report:  # noqa: ASYNC109
    """Log in, connect and read every server's permissions; never raises for a problem it can name."""
    report = Report()
    check_intents(report, BOT_INTENTS)
    check_rulesets(report, config)
    token = config.token
    if not token:
        report.add("token", "no token", "set DISCORD_TOKEN, or [discord] token in the config file")
        check_opus(report, cues=config.voice.cues)
        check_voice_libraries(report, cues=config.voice.cues)
        return report
    with _pointed_at(config):
        await _check_online(report, config, token, timeout)
    check_opus(report, cues=config.voice.cues)
    check_voice_libraries(report, cues=config.voice.cues)
    return report


async def _check_online(report: Report, config: Config, token: str, timeout: float) -> None:  # noqa: ASYNC109
    client = discord.Client(intents=BOT_INTENTS, guild_ready_timeout=0.5)
    try:
        try:
            await client.login(token)
        except discord.LoginFailure:
            report.add("token", "Discord refused the token",
                       "Developer Portal > your application > Bot > Reset Token; put the new one in DISCORD_TOKEN")
            return
        except (discord.HTTPException, OSError) as exc:
            where = config.discord.api_base or "Discord"
            report.add("token", f"cannot reach {where}: {exc}", "check the network, or [discord] api_base")
            return
        user = client.user
        report.add("token", f"logged in as {user}" if user else "logged in", ok=True)
        app_id = client.application_id or (user.id if user else None)
        if app_id is not None:
            report.invite_url = invite_url(app_id)
        guild_ids = await _check_gateway(report, client, timeout)
        await check_helpers(report, list(config.voice.helper_tokens), guild_ids)
    finally:
        await client.close()


HELPER_PERMISSIONS = discord.Permissions(mute_members=True)
"""All a helper token needs: it only server-mutes and unmutes."""


async def check_helpers(report: Report, tokens: list[str], guild_ids: list[int]) -> None:
    """Each ``[voice] helper_tokens`` entry must log in, be in every server, and hold Mute Members there.

    A helper that cannot edit a server's members is skipped by the bot there (its edits go to the
    other tokens), so a missing helper slows mass mutes down rather than breaking a game: still a
    problem worth naming with its fix.
    """
    for number, token in enumerate(tokens, 1):
        topic = f"helper token {number}"
        http = discord.http.HTTPClient(asyncio.get_running_loop())
        try:
            try:
                me = await http.static_login(token)
            except discord.LoginFailure:
                report.add(topic, "Discord refused the token",
                           "Developer Portal > the helper's application > Bot > Reset Token; then update "
                           "[voice] helper_tokens")
                continue
            except (discord.HTTPException, OSError) as exc:
                report.add(topic, f"cannot log in: {exc}", "check the network, or [discord] api_base")
                continue
            user_id = int(me["id"])
            invite = discord.utils.oauth_url(user_id, permissions=HELPER_PERMISSIONS, scopes=("bot",))
            for guild_id in guild_ids:
                await _check_helper_in(report, http, topic, user_id, guild_id, invite)
            if not guild_ids:
                report.add(topic, f"logged in as {me.get('username', user_id)}", ok=True)
        finally:
            await http.close()


async def _check_helper_in(
    report: Report, http: discord.http.HTTPClient, topic: str, user_id: int, guild_id: int, invite: str
) -> None:
    where = f"{topic} in server {guild_id}"
    try:
        member = await http.get_member(guild_id, user_id)
        roles = await http.get_roles(guild_id)
    except (discord.NotFound, discord.Forbidden):
        report.add(where, "the helper is not in this server", f"invite it with Mute Members: {invite}")
        return
    except (discord.HTTPException, OSError) as exc:
        report.add(where, f"cannot read the helper's member: {exc}", "try again; check the network")
        return
    held = {str(r) for r in member.get("roles", [])} | {str(guild_id)}  # @everyone has the guild's id
    value = 0
    for role in roles:
        if str(role["id"]) in held:
            value |= int(role.get("permissions", 0))
    permissions = discord.Permissions(value)
    if permissions.administrator or permissions.mute_members:
        report.add(where, "a member with Mute Members", ok=True)
    else:
        report.add(where, "the helper lacks Mute Members",
                   "Server Settings > Roles: allow Mute Members for the helper's role (or invite it again: "
                   f"{invite})")


async def _check_gateway(report: Report, client: discord.Client, timeout: float) -> list[int]:  # noqa: ASYNC109
    connection = asyncio.create_task(client.connect(reconnect=False))
    ready = asyncio.create_task(client.wait_until_ready())
    try:
        done, _ = await asyncio.wait({connection, ready}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if ready not in done:
            error = connection.exception() if connection in done else None
            if isinstance(error, discord.PrivilegedIntentsRequired):
                report.add("gateway", "Discord refused the intents the bot asks for",
                           "Developer Portal > Bot > Privileged Gateway Intents, or ask only for the default intents")
            else:
                report.add("gateway", f"no READY from the gateway ({error or 'timed out'})",
                           "check the network, or [discord] gateway_url")
            return []
        names = ", ".join(label for name, label in NEEDED_INTENTS.items() if getattr(BOT_INTENTS, name))
        report.add("gateway", f"connected with {names}; nothing privileged", ok=True)
        if not client.guilds:
            report.add("servers", "the bot is in no server", "invite it with the URL below")
        for guild in client.guilds:
            check_guild(report, guild)
        return [guild.id for guild in client.guilds]
    finally:
        ready.cancel()
        await client.close()
        with contextlib.suppress(asyncio.CancelledError, discord.DiscordException, OSError):
            await connection
