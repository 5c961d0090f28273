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
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

import discord
import discord.gateway
import discord.http
import yarl

from mafiabot.tools.config import Config

TEXT_PERMISSIONS: dict[str, str] = {
    "view_channel": "View Channel",
    "send_messages": "Send Messages",
    "read_message_history": "Read Message History",
    "attach_files": "Attach Files",
    "add_reactions": "Add Reactions",
    "manage_messages": "Manage Messages",
    "create_private_threads": "Create Private Threads",
    "send_messages_in_threads": "Send Messages in Threads",
    "manage_threads": "Manage Threads",
}
"""What a table's text channel needs: the table's messages and pictures, the ✋ votes and the mafia's thread."""

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


Kind = Literal["ok", "missing", "refused", "unreachable", "misconfigured", "warning"]
"""What a finding is: fine; something absent (a permission, a library, a token); refused by
Discord or the database; not reachable at all; set up wrongly; or only worth knowing."""


@dataclass(frozen=True, slots=True)
class Finding:
    """One line of the report; ``fix`` says what to do about a problem."""

    topic: str
    kind: Kind
    detail: str
    fix: str = ""

    @property
    def ok(self) -> bool:
        """Whether this is no problem at all."""
        return self.kind == "ok"

    @property
    def required(self) -> bool:
        """Whether the bot cannot host properly until it is fixed (a warning is only worth knowing)."""
        return self.kind not in ("ok", "warning")

    def line(self) -> str:
        """``[kind] topic: detail``."""
        return f"[{self.kind}] {self.topic}: {self.detail}"


@dataclass
class Report:
    """Everything the check found, and the invite URL once the application is known."""

    findings: list[Finding] = field(default_factory=list)
    invite_url: str | None = None

    @property
    def ok(self) -> bool:
        """Whether nothing required is missing."""
        return not any(f.required for f in self.findings)

    def add(self, topic: str, detail: str, fix: str = "", *, kind: Kind = "missing") -> None:
        """Record a finding."""
        self.findings.append(Finding(topic, kind, detail, fix))

    def lines(self) -> Iterator[str]:
        """The report as text, one finding per line with its fix indented below."""
        for f in self.findings:
            yield f.line()
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
def pointed_at(config: Config) -> Iterator[None]:
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
                   "connect with discord.Intents.default(), as MafiaBot does", kind="misconfigured")
    privileged = [name for name in ("members", "presences", "message_content") if getattr(intents, name)]
    if privileged:
        report.add("intents", f"privileged intents requested: {', '.join(privileged)}",
                   "enable them in the Developer Portal (Bot > Privileged Gateway Intents) or stop asking for them",
                   kind="warning")


ELEVATED = ("manage_messages", "manage_threads")
"""The needed permissions Discord marks as elevated: on a server with 2FA required, they work only
for a bot whose owner has 2FA on (error 60003 otherwise)."""

SEATED_RISKS: dict[str, str] = {
    "administrator": "Administrator (everything below)",
    "manage_threads": "Manage Threads (reads the mafia's private thread)",
    "mute_members": "Mute Members (unmutes themselves out of turn)",
}
"""Permissions a seated player must not hold: each one breaks the game's secrecy or its floor."""


def check_guild(report: Report, guild: discord.Guild, *, owner_mfa: bool = True) -> None:
    """Server-wide permissions first; then each text and voice channel the bot can see; then the risks."""
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
    problems = _check_owner_mfa(report, topic, guild, owner_mfa=owner_mfa)
    for channel in guild.channels:
        if isinstance(channel, discord.TextChannel | discord.VoiceChannel):
            problems += _check_channel(report, topic, channel, me, missing)
    problems += check_seated_risks(report, topic, guild, me)
    if not missing and not problems:
        report.add(topic, "every permission a table needs", kind="ok")


def _check_owner_mfa(report: Report, topic: str, guild: discord.Guild, *, owner_mfa: bool) -> int:
    """A server that requires 2FA voids the elevated permissions of a bot whose owner has none."""
    if guild.mfa_level != discord.MFALevel.require_2fa or owner_mfa:
        return 0
    report.add(topic, "the server requires 2FA for moderation and the bot's owner has no 2FA: "
               f"Discord refuses the bot's {_names(list(ELEVATED))} (error 60003)",
               "the bot's owner turns on two-factor authentication (User Settings > My Account), or a "
               "server admin turns off Server Settings > Safety Setup > 2FA requirement for moderation",
               kind="refused")
    return 1


def _check_channel(
    report: Report, topic: str, channel: discord.TextChannel | discord.VoiceChannel, me: discord.Member,
    missing: list[str],
) -> int:
    """One text or voice channel the bot can see: what an override denies it there, and announcement channels.

    Returns how many problems it found.
    """
    perms = channel.permissions_for(me)
    if not perms.view_channel:
        return 0  # a channel the bot cannot see is not one of its tables
    wanted = TEXT_PERMISSIONS if isinstance(channel, discord.TextChannel) else VOICE_PERMISSIONS
    problems = 0
    lacking = [p for p in wanted if not getattr(perms, p) and p not in missing]
    if lacking:
        problems += 1
        report.add(f"{topic} #{channel.name}", f"missing in this channel: {_names(lacking)}",
                   f"Edit Channel > Permissions: allow {_names(lacking)} for the bot or its role "
                   "(an override denies it here)")
    if isinstance(channel, discord.TextChannel) and channel.is_news():
        problems += 1
        report.add(f"{topic} #{channel.name}", "an announcement channel cannot hold a private thread, "
                   "so a table here has no room for the mafia",
                   "host tables in plain text channels (Discord opens private threads only there)",
                   kind="misconfigured")
    return problems


def check_seated_risks(report: Report, topic: str, guild: discord.Guild, me: discord.Member) -> int:
    """Name the roles whose members must not sit at a table; @everyone holding one breaks every table.

    Returns how many problems (not warnings) it found.
    """
    problems = 0
    for role in guild.roles:
        if role.managed or (role in me.roles and not role.is_default()):
            continue  # the bot's own role, or another bot's or integration's: nobody sits with it
        risks = [label for name, label in SEATED_RISKS.items() if getattr(role.permissions, name)]
        if not risks:
            continue
        if role.is_default():
            problems += 1
            report.add(f"{topic} @everyone", f"every member holds {', '.join(risks)}",
                       "Server Settings > Roles > @everyone: turn these off; give them only to the staff",
                       kind="misconfigured")
        else:
            report.add(f"{topic} role {role.name!r}", f"grants {', '.join(risks)}",
                       "its members should judge or watch, not sit at a table", kind="warning")
    return problems


TOKEN_FIX = "Developer Portal > your application > Bot > Reset Token; put the new one in DISCORD_TOKEN"  # noqa: S105


def unreachable(config: Config, exc: BaseException) -> tuple[str, str]:
    """The detail and fix of a failed connection to Discord (or to ``[discord] api_base``)."""
    where = config.discord.api_base or "Discord"
    reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    fix = "check the network and DNS" + (" or [discord] api_base" if config.discord.api_base else "")
    return f"cannot reach {where}: {reason}", fix


def check_config_file(report: Report, path: str | None, config: Config) -> None:
    """A config file that holds a token must be readable by its owner alone."""
    finding = config_file_finding(path, config)
    if finding is not None:
        report.findings.append(finding)


def config_file_finding(path: str | None, config: Config) -> Finding | None:
    """A warning when the config file holds the token and other users of the machine may read it."""
    if path is None or (not config.discord.token and not config.voice.helper_tokens):
        return None
    try:
        mode = Path(path).stat().st_mode
    except OSError:
        return None
    if mode & 0o077 == 0:
        return None
    return Finding("config", "warning", f"{path} holds a bot token and other users may read it "
                   f"(mode {mode & 0o777:o})", f"chmod 600 {path}, or put the token in DISCORD_TOKEN instead")


@dataclass(frozen=True, slots=True)
class DatabaseStatus:
    """Where the database stands: a finding to print, and the revisions when it answered."""

    finding: Finding
    current: str | None = None
    head: str | None = None
    unwritable: bool = False
    """The SQLite file's folder takes no new file: the bot could not write its database."""


def database_status(url: str) -> DatabaseStatus:
    """Connect to the database at ``url`` (creating nothing) and read its migration level."""
    from sqlalchemy import exc as sa_exc
    from sqlalchemy import make_url

    from mafiabot.store.db import current_revision, head_revision, make_engine

    topic = "database"
    head = head_revision()
    try:
        parsed = make_url(url)
        where = parsed.render_as_string(hide_password=True)
        absent = _absent_sqlite_file(parsed.get_backend_name(), parsed.database, where, head)
        if absent is not None:
            return absent
        engine = make_engine(url)
    except ModuleNotFoundError as exc:
        return DatabaseStatus(Finding(topic, "missing", f"{url.split('@')[-1]} needs the driver {exc.name!r}, "
                                      "which is not installed", "pip install 'mafiabot[postgres]' "
                                      "(from a checkout: pip install '.[postgres]')"))
    except (ValueError, sa_exc.ArgumentError) as exc:
        return DatabaseStatus(Finding(topic, "misconfigured", f"[database] url {url!r} is not usable: "
                                      f"{str(exc).splitlines()[0]}",
                                      "use sqlite:///path/to/file.sqlite3 or postgresql+psycopg://user@host/db"))
    try:
        current = current_revision(engine)
    except sa_exc.OperationalError as exc:
        reason = str(exc.orig).strip().splitlines()[0] if exc.orig else str(exc).splitlines()[0]
        return DatabaseStatus(_unanswered(topic, where, reason))
    except sa_exc.DatabaseError as exc:
        return DatabaseStatus(Finding(topic, "misconfigured", f"{where}: {str(exc).splitlines()[0]}",
                                      "point [database] url at a mafiabot database"))
    finally:
        engine.dispose()
    if current == head:
        return DatabaseStatus(Finding(topic, "ok", f"{where}: at the newest schema ({head})"), current, head)
    level = f"at schema {current}" if current else "empty"
    return DatabaseStatus(Finding(topic, "ok", f"{where}: {level}, newest {head}; the bot migrates it at start "
                                  "(or run mafiabot db upgrade)"), current, head)


def _absent_sqlite_file(backend: str, database: str | None, where: str, head: str | None) -> DatabaseStatus | None:
    """A SQLite file the bot cannot write, or one that does not exist yet (fine if its folder takes files)."""
    if backend != "sqlite" or not database or database == ":memory:":
        return None
    file = Path(database)
    if not file.parent.is_dir():
        return DatabaseStatus(Finding("database", "misconfigured", f"{where}: the folder {file.parent} "
                                      "does not exist", "create it, or fix [database] url"))
    refusal = cannot_create_in(file.parent)
    if refusal is not None:  # WAL mode writes -wal and -shm beside the file, so an existing file needs it too
        return DatabaseStatus(Finding("database", "misconfigured", f"{where}: cannot create files in "
                                      f"{file.parent} ({refusal})", "give the bot's user that folder "
                                      "(chown, chmod 700), or fix [database] url"), unwritable=True)
    if file.exists():
        return None
    return DatabaseStatus(Finding("database", "ok", f"{where} does not exist yet; the bot creates it "
                                  f"at start (newest schema: {head})"), None, head)


def cannot_create_in(folder: Path) -> str | None:
    """Why no file can be created in ``folder`` (None: it can).

    A file is really created and removed at once: permission bits say nothing for root, nor for a
    read-only mount or an access control list.
    """
    try:
        handle, name = tempfile.mkstemp(prefix=".mafiabot-check-", dir=folder)
    except OSError as exc:
        return exc.strerror or str(exc)
    os.close(handle)
    Path(name).unlink()
    return None


def _unanswered(topic: str, where: str, reason: str) -> Finding:
    """A database that did not answer: refused credentials, a missing database, or no server there."""
    lowered = reason.lower()
    kind: Kind = "unreachable"
    fix = "is the database server running, at that host and port?"
    if any(word in lowered for word in ("authentication", "password", "permission denied", "role")):
        kind, fix = "refused", "check the user and password in [database] url"
    elif "database" in lowered and "does not exist" in lowered:
        kind, fix = "misconfigured", "create it (createdb NAME), or fix the name in [database] url"
    return Finding(topic, kind, f"{where}: {reason}", fix)


def check_database(report: Report, url: str) -> None:
    """Report the database's reachability and migration level."""
    report.findings.append(database_status(url).finding)


async def check_global_limit_redis(report: Report, config: Config) -> None:
    """Whether the Redis that shares the token's global limit (``[discord] global_limit_redis``) answers.

    Without it the bot still runs, each process on its static share of the limit: a warning.
    """
    url = config.discord.global_limit_redis
    if not url:
        return
    topic = "global_limit_redis"
    try:
        from redis.asyncio import Redis
    except ImportError:
        report.add(topic, "the redis client is not installed", "pip install 'mafiabot[redis]'")
        return
    client = Redis.from_url(url, socket_timeout=2.0, socket_connect_timeout=2.0)
    where = urlsplit(url)._replace(netloc=urlsplit(url).netloc.rpartition("@")[2]).geturl()  # never its password
    try:
        await client.ping()
    except Exception as exc:  # any failure means the same to the operator: the static share until it answers
        report.add(topic, f"{where} does not answer ({exc}); each process keeps global_rate_limit / processes",
                   "start Redis there, or fix [discord] global_limit_redis", kind="warning")
    else:
        report.add(topic, f"{where} answers; the processes share the token's global limit", kind="ok")
    finally:
        await client.aclose()


def check_rulesets(report: Report, config: Config) -> None:
    """Name the rulesets every server is offered besides the presets, from ``[game] rulesets_dir``.

    The folder was already read when the config loaded (a bad file stops there); this shows the
    host what the servers will see.
    """
    from mafiabot.core.rulesets import load_rulesets_dir

    folder = config.game.rulesets_dir
    if not folder:
        report.add("rulesets", "the presets only (no [game] rulesets_dir)", kind="ok")
        return
    hosted = load_rulesets_dir(folder)
    names = ", ".join(f"{r.name} ({'/'.join(map(str, r.ruleset.player_counts))} players)" for r in hosted.values())
    report.add("rulesets", f"the presets and {len(hosted)} from {folder}: {names or 'none'}", kind="ok")


def check_opus(report: Report, *, cues: bool) -> None:
    """Look for libopus, which encodes the voice cues; without it the bot still hosts, silently."""
    if discord.opus.is_loaded():
        report.add("libopus", "loaded", kind="ok")
        return
    found = ctypes.util.find_library("opus")
    if found is not None:
        try:
            discord.opus.load_opus(found)
        except OSError as exc:
            report.add("libopus", f"{found} does not load: {exc}", "reinstall libopus (Debian/Ubuntu: libopus0)",
                       kind="missing" if cues else "warning")
            return
        report.add("libopus", f"found ({found})", kind="ok")
        return
    report.add("libopus", "not found: voice cues cannot play",
               "install libopus (Debian/Ubuntu: apt install libopus0; Fedora: dnf install opus; macOS: brew install "
               "opus), or turn voice cues off", kind="missing" if cues else "warning")


def check_voice_libraries(report: Report, *, cues: bool) -> None:
    """PyNaCl and davey (Discord's required DAVE encryption) for a voice connection; espeak-ng for speech."""
    from discord.voice_client import has_nacl
    from discord.voice_state import has_dave

    fix = "reinstall the bot with its voice extra: pip install -e . (it depends on discord.py[voice])"
    absent: Kind = "missing" if cues else "warning"
    if has_nacl:
        report.add("PyNaCl", "installed", kind="ok")
    else:
        report.add("PyNaCl", "not installed: voice cues cannot connect", fix, kind=absent)
    if has_dave:
        report.add("davey", "installed (DAVE end-to-end encryption, required by Discord voice)", kind="ok")
    else:
        report.add("davey", "not installed: Discord refuses voice without DAVE encryption", fix, kind=absent)
    espeak = shutil.which("espeak-ng")
    if espeak is not None:
        report.add("espeak-ng", f"found ({espeak}): the cues are spoken in en, ru and ka", kind="ok")
    else:
        report.add("espeak-ng", "not found: the voice cues are tones only, without spoken announcements",
                   "optional: apt install espeak-ng (Debian/Ubuntu), dnf install espeak-ng, brew install espeak-ng",
                   kind="warning")


async def check(config: Config, *, timeout: float = READY_TIMEOUT) -> Report:  # noqa: ASYNC109
    """Log in, connect and read every server's permissions; never raises for a problem it can name."""
    report = Report()
    check_intents(report, BOT_INTENTS)
    check_rulesets(report, config)
    token = config.token
    if not token:
        report.add("token", "no token", "set DISCORD_TOKEN, or [discord] token in the config file")
        check_database(report, config.database.url)
        check_opus(report, cues=config.voice.cues)
        check_voice_libraries(report, cues=config.voice.cues)
        return report
    check_database(report, config.database.url)
    await check_global_limit_redis(report, config)
    with pointed_at(config):
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
            report.add("token", "Discord refused the token", TOKEN_FIX, kind="refused")
            return
        except (discord.HTTPException, OSError, TimeoutError) as exc:
            report.add("token", *unreachable(config, exc), kind="unreachable")
            return
        user = client.user
        report.add("token", f"logged in as {user}" if user else "logged in", kind="ok")
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
                           "[voice] helper_tokens", kind="refused")
                continue
            except (discord.HTTPException, OSError, TimeoutError) as exc:
                report.add(topic, f"cannot log in: {exc}", "check the network, or [discord] api_base",
                           kind="unreachable")
                continue
            user_id = int(me["id"])
            invite = discord.utils.oauth_url(user_id, permissions=HELPER_PERMISSIONS, scopes=("bot",))
            for guild_id in guild_ids:
                await _check_helper_in(report, http, topic, user_id, guild_id, invite)
            if not guild_ids:
                report.add(topic, f"logged in as {me.get('username', user_id)}", kind="ok")
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
        report.add(where, f"cannot read the helper's member: {exc}", "try again; check the network",
                   kind="unreachable")
        return
    held = {str(r) for r in member.get("roles", [])} | {str(guild_id)}  # @everyone has the guild's id
    value = 0
    for role in roles:
        if str(role["id"]) in held:
            value |= int(role.get("permissions", 0))
    permissions = discord.Permissions(value)
    if permissions.administrator or permissions.mute_members:
        report.add(where, "a member with Mute Members", kind="ok")
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
                           "Developer Portal > Bot > Privileged Gateway Intents, or ask only for the default intents",
                           kind="refused")
            else:
                report.add("gateway", f"no READY from the gateway ({error or 'timed out'})",
                           "check the network, or [discord] gateway_url", kind="unreachable")
            return []
        names = ", ".join(label for name, label in NEEDED_INTENTS.items() if getattr(BOT_INTENTS, name))
        report.add("gateway", f"connected with {names}; nothing privileged", kind="ok")
        if not client.guilds:
            report.add("servers", "the bot is in no server", "invite it with the URL below")
        owner_mfa = bool(client.user and client.user.mfa_enabled)
        for guild in client.guilds:
            check_guild(report, guild, owner_mfa=owner_mfa)
        return [guild.id for guild in client.guilds]
    finally:
        ready.cancel()
        await client.close()
        with contextlib.suppress(asyncio.CancelledError, discord.DiscordException, OSError):
            await connection
