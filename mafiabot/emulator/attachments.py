"""Files people attach to slash command options, served back from a signed CDN URL.

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
import mimetypes
import secrets
import urllib.parse

from aiohttp import web

from .config import Address
from .ratelimit import Clock
from .state import JSON, World

UPLOAD_LIMIT = 10 * 1024 * 1024
"""Discord's default per-file upload limit (developers/reference: "Uploading Files")."""
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
