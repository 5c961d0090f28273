"""Files on messages and on slash command options, checked as Discord checks them and served back.

A message's files come as a ``multipart/form-data`` body (developers/reference, "Uploading Files"):
the JSON in a ``payload_json`` part, each file in a ``files[n]`` part, and an ``attachments`` array
whose entries name new files by ``n`` and, on an edit, the files to keep by id (the ones left out are
removed). Discord refuses a file above the upload limit with 413 / 40005 "Request entity too large",
and more than 10 files, alt text over 1024 characters or an entry naming no file with 400 / 50035.
Each file is kept with its bytes and served at its ``/attachments/{channel}/{id}/{filename}`` link.

Discord takes a file a user picks for an ``ATTACHMENT`` option (type 11) before the interaction
exists, refuses it above the upload limit (10 MiB for everyone without Nitro or boosts, the
``attachment_size_limit`` the interaction carries), and hands the application an attachment object
in ``data.resolved.attachments`` whose ``url`` points at its CDN:
``/ephemeral-attachments/{app}/{attachment}/{filename}?ex=…&is=…&hm=…``. The CDN answers a URL
whose signature is wrong or whose expiry (``ex``, hex seconds) has passed with 404, as Discord does.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import mimetypes
import re
import secrets
import struct
import urllib.parse
from typing import Any

from aiohttp import BodyPartReader, web

from .config import Address
from .errors import ApiError
from .limits import invalid
from .ratelimit import Clock
from .state import JSON, MessageFile, World

UPLOAD_LIMIT = 10 * 1024 * 1024
"""Discord's default per-file upload limit (developers/reference: "Uploading Files")."""
REQUEST_LIMIT = 25 * 1024 * 1024
"""The largest message request (Create Message, "Limitations")."""
MAX_FILES = 10
"""Files one message carries at most (the spec: ``attachments`` ``maxItems``, ``files[0]`` to ``files[9]``)."""
DESCRIPTION_MAX = 1024
"""Characters of alt text (the attachment object's ``description``)."""
URL_LIFETIME = 24 * 3600
"""Seconds a signed CDN link stays valid."""
_NOT_AVAILABLE = "This content is no longer available."


class UploadTooLargeError(ValueError):
    """The Discord client refuses to send a file above the upload limit; no interaction starts."""


@dataclasses.dataclass(frozen=True)
class Upload:
    """A file a scripted user attached, as the application will see it."""

    id: int
    application_id: int
    filename: str
    content_type: str
    data: bytes
    issued: int

    def to_json(self, base_url: str, secret: bytes) -> JSON:
        """The attachment object of ``resolved.attachments``, linked under the CDN at ``base_url``."""
        url = f"{base_url}{self.path}?{self.query(secret)}"
        return {
            "id": str(self.id), "filename": self.filename, "size": len(self.data), "url": url, "proxy_url": url,
            "content_type": self.content_type, "ephemeral": True,
        }

    @property
    def path(self) -> str:
        """The CDN path of the file."""
        return f"/ephemeral-attachments/{self.application_id}/{self.id}/{urllib.parse.quote(self.filename)}"

    def query(self, secret: bytes) -> str:
        """``ex``, ``is`` and the ``hm`` signature over the path and both times."""
        expires = self.issued + URL_LIFETIME
        return f"ex={expires:x}&is={self.issued:x}&hm={_sign(secret, self.path, expires, self.issued)}"


@dataclasses.dataclass(frozen=True)
class FilePart:
    """One file part of a multipart body; ``index`` is the ``n`` of its ``files[n]`` name."""

    index: int
    filename: str
    content_type: str | None
    data: bytes


async def read_multipart(request: web.Request) -> tuple[Any, list[FilePart]]:
    """A multipart body's JSON (``payload_json``, else its plain form fields) and its files, in order.

    A body that does not parse gives ``None`` and no files, which the handlers refuse as Discord does.
    """
    fields: dict[str, str] = {}
    payload: Any = None
    files: list[FilePart] = []
    try:
        reader = await request.multipart()
        while (part := await reader.next()) is not None:
            if not isinstance(part, BodyPartReader):
                continue
            if part.filename is not None:
                files.append(FilePart(_index(part.name, len(files)), part.filename,
                                      part.headers.get("Content-Type"), bytes(await part.read())))
            elif part.name == "payload_json":
                payload = json.loads(await part.text())
            elif part.name is not None:
                fields[part.name] = await part.text()
    except ValueError:
        return None, []
    return (payload if payload is not None else fields or None), files


def _index(name: str | None, position: int) -> int:
    found = re.fullmatch(r"files\[(\d+)\]", name or "")
    return int(found.group(1)) if found else position


def message_files(
    world: World, channel_id: int, body: Any, parts: list[FilePart], kept: list[MessageFile] | None = None
) -> list[MessageFile] | None:
    """The files a message has after this request, or ``None`` when an edit leaves them as they are.

    ``kept`` are the files of the message being edited (``None`` for a new message). Without an
    ``attachments`` array new files are appended; with one, the message has exactly what it lists.

    Raises:
        ApiError: 413/40005 for a file over the upload limit or a request over 25 MiB; 400/50035
            for more than 10 files, alt text over 1024 characters, or an entry that names neither
            a file of this request nor one the message has.
    """
    listed = body.get("attachments") if isinstance(body, dict) else None
    _check_sizes(parts, listed)
    if listed is None:
        if kept is not None and not parts:
            return None
        result = [*(kept or []), *(_new_file(world, channel_id, p, {}) for p in parts)]
    elif isinstance(listed, list):
        result = _listed(world, channel_id, listed, {p.index: p for p in parts}, kept or [])
    else:
        raise invalid("attachments", "BASE_TYPE_LIST", "Must be a list.")
    if len(result) > MAX_FILES:
        raise invalid("attachments", "BASE_TYPE_MAX_LENGTH", f"Must be {MAX_FILES} or fewer in length.")
    return result


def _check_sizes(parts: list[FilePart], listed: Any) -> None:
    """Discord's size limits: each file and the whole request, then the number of files."""
    if any(len(p.data) > UPLOAD_LIMIT for p in parts) or sum(len(p.data) for p in parts) > REQUEST_LIMIT:
        raise ApiError(413, 40005, "Request entity too large")
    if len(parts) > MAX_FILES or (isinstance(listed, list) and len(listed) > MAX_FILES):
        raise invalid("attachments", "BASE_TYPE_MAX_LENGTH", f"Must be {MAX_FILES} or fewer in length.")


def _listed(
    world: World, channel_id: int, listed: list[Any], new: dict[int, FilePart], kept: list[MessageFile]
) -> list[MessageFile]:
    """The files an ``attachments`` array names: kept ones by id (alt text and spoiler updatable), new ones by ``n``."""
    existing = {f.id: f for f in kept}
    used: set[int] = set()
    result: list[MessageFile] = []
    for i, entry in enumerate(listed):
        ref = _reference(entry)
        if ref is None:
            raise invalid(f"attachments.{i}.id", "BASE_TYPE_REQUIRED", "This field is required")
        description = entry.get("description")
        if isinstance(description, str) and len(description) > DESCRIPTION_MAX:
            raise invalid(
                f"attachments.{i}.description", "BASE_TYPE_MAX_LENGTH", f"Must be {DESCRIPTION_MAX} or fewer in length."
            )
        if ref in used or (ref not in existing and ref not in new):
            raise invalid(f"attachments.{i}.id", "ATTACHMENT_NOT_FOUND", "Unknown attachment")
        used.add(ref)
        if ref in existing:
            old = existing[ref]
            result.append(dataclasses.replace(
                old,
                description=description if "description" in entry else old.description,
                spoiler=bool(entry["is_spoiler"]) if entry.get("is_spoiler") is not None else old.spoiler,
            ))
        else:
            result.append(_new_file(world, channel_id, new[ref], entry))
    return result


def _reference(entry: Any) -> int | None:
    """An entry's ``id``: a snowflake or a ``files[n]`` index, as a number."""
    raw = entry.get("id") if isinstance(entry, dict) else None
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    return int(raw) if isinstance(raw, str) and raw.isdigit() else None


def _new_file(world: World, channel_id: int, part: FilePart, entry: JSON) -> MessageFile:
    """A new attachment from a file part and its ``attachments`` entry; its type told by its name, as Discord does."""
    filename = str(entry.get("filename") or part.filename)
    kind = mimetypes.guess_type(filename)[0] or part.content_type or "application/octet-stream"
    if kind.startswith("text/") and "charset" not in kind:
        kind += "; charset=utf-8"
    width, height = png_size(part.data) or (None, None)
    description = entry.get("description")
    return MessageFile(
        id=world.ids.next(), channel_id=channel_id, filename=filename, content_type=kind, data=part.data,
        description=description if isinstance(description, str) else None, width=width, height=height,
        spoiler=bool(entry.get("is_spoiler")),
    )


_PNG = b"\x89PNG\r\n\x1a\n"


def png_size(data: bytes) -> tuple[int, int] | None:
    """A PNG's width and height from its header (Discord gives both for images), else ``None``."""
    if len(data) < 24 or not data.startswith(_PNG) or data[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


def _sign(secret: bytes, path: str, expires: int, issued: int) -> str:
    return hmac.new(secret, f"{path}|{expires:x}|{issued:x}".encode(), hashlib.sha256).hexdigest()


class Attachments:
    """Every file attached to an interaction, and the CDN route that serves them."""

    def __init__(self, world: World, clock: Clock, address: Address) -> None:
        self.world = world
        self.clock = clock
        self.address = address
        self.files: dict[int, Upload] = {}
        self.downloads: list[int] = []
        """Attachment ids fetched from the CDN, in order."""
        self._secret = secrets.token_bytes(16)
        world.cdn_url = self.signed_url

    def upload(self, application_id: int, filename: str, data: bytes, content_type: str | None = None) -> Upload:
        """Take a file a user picked; refused above the upload limit, as the client refuses it.

        Raises:
            UploadTooLargeError: the file is larger than ``UPLOAD_LIMIT``.
        """
        if len(data) > UPLOAD_LIMIT:
            raise UploadTooLargeError(f"{filename}: {len(data)} bytes; Discord takes at most {UPLOAD_LIMIT}")
        kind = content_type or mimetypes.guess_type(filename)[0] or "application/octet-stream"
        if kind.startswith("text/") and "charset" not in kind:
            kind += "; charset=utf-8"
        upload = Upload(self.world.ids.next(), application_id, filename, kind, data, int(self.clock.wall()))
        self.files[upload.id] = upload
        return upload

    def signed_url(self, path: str) -> str:
        """A link to ``path`` on the CDN, signed now and good for ``URL_LIFETIME``."""
        issued = int(self.clock.wall())
        expires = issued + URL_LIFETIME
        return f"{self.address.url}{path}?ex={expires:x}&is={issued:x}&hm={_sign(self._secret, path, expires, issued)}"

    def _valid(self, request: web.Request, path: str) -> bool:
        """Whether the link's signature is ours and it has not expired."""
        query = request.query
        try:
            expires, issued = int(query.get("ex", ""), 16), int(query.get("is", ""), 16)
        except ValueError:
            return False
        good = hmac.compare_digest(query.get("hm", ""), _sign(self._secret, path, expires, issued))
        return good and self.clock.wall() <= expires

    async def serve_message_file(self, request: web.Request) -> web.Response:
        """``GET /attachments/{channel}/{attachment}/{filename}``: a message's file, while the message has it."""
        raw = request.match_info["attachment_id"]
        found = self.world.files.get(int(raw)) if raw.isdigit() else None
        if found is None or request.match_info["channel_id"] != str(found.channel_id):
            return web.Response(status=404, text=_NOT_AVAILABLE)
        if request.match_info["filename"] != found.filename or not self._valid(request, found.path):
            return web.Response(status=404, text=_NOT_AVAILABLE)
        self.downloads.append(found.id)
        return web.Response(body=found.data, content_type=found.content_type.split(";")[0])

    def resolved(self, upload: Upload) -> JSON:
        """The attachment object an interaction carries for ``upload``."""
        return upload.to_json(self.address.url, self._secret)

    async def serve(self, request: web.Request) -> web.Response:
        """``GET /ephemeral-attachments/{app}/{attachment}/{filename}``: the bytes, if the link is valid."""
        upload = self.files.get(int(request.match_info["attachment_id"]))
        query = request.query
        if upload is None or request.match_info["filename"] != upload.filename:
            return web.Response(status=404, text=_NOT_AVAILABLE)
        try:
            expires, issued = int(query.get("ex", ""), 16), int(query.get("is", ""), 16)
        except ValueError:
            return web.Response(status=404, text=_NOT_AVAILABLE)
        good = hmac.compare_digest(query.get("hm", ""), _sign(self._secret, upload.path, expires, issued))
        if not good or self.clock.wall() > expires:
            return web.Response(status=404, text=_NOT_AVAILABLE)
        self.downloads.append(upload.id)
        return web.Response(body=upload.data, content_type=upload.content_type.split(";")[0])


def add_attachment_routes(attachments: Attachments, app: web.Application) -> None:
    """Serve the CDN route of ``attachments``."""
    app.router.add_get("/ephemeral-attachments/{application_id}/{attachment_id}/{filename}", attachments.serve)
    app.router.add_get("/attachments/{channel_id}/{attachment_id}/{filename}", attachments.serve_message_file)
