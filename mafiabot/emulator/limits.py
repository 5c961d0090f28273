"""Discord's documented limits on message bodies, emoji and modals, enforced as Discord does: 400.

The OpenAPI check only records what the spec rejects; these are refusals. Each limit is from
Discord's docs (Create Message, Embed Limits, Component Reference, Legacy Message Component
Behavior, Interaction Response "Modal"). A refused body answers 400 with code 50035 "Invalid Form
Body" and an ``errors`` tree naming the field, the shape discord.py turns into its message.
"""

from __future__ import annotations

import re
from typing import Any

import emoji as emoji_data

from .errors import ApiError
from .state import JSON

CONTENT_MAX = 2000
NONCE_MAX = 25
EMBEDS_MAX = 10
EMBED_TOTAL_MAX = 6000
EMBED_FIELDS_MAX = 25
EMBED_TEXT_MAX = {"title": 256, "description": 4096}
FIELD_MAX = {"name": 256, "value": 1024}
ACTION_ROWS_MAX = 5
"""Legacy messages (no ``IS_COMPONENTS_V2`` flag): up to 5 action rows at the top level."""
V2_COMPONENTS_MAX = 40
IS_COMPONENTS_V2 = 1 << 15
BUTTONS_PER_ROW = 5
CUSTOM_ID_MAX = 100
BUTTON_LABEL_MAX = 80
BUTTON_URL_MAX = 512
SELECT_OPTIONS_MAX = 25
SELECT_TEXT_MAX = 100
PLACEHOLDER_MAX = 150
SELECT_VALUES_MAX = 25
MODAL_TITLE_MAX = 45
MODAL_COMPONENTS_MAX = 5
SELECT_TYPES = (3, 5, 6, 7, 8)
LINK_STYLE, PREMIUM_STYLE = 5, 6
_CUSTOM_EMOJI = re.compile(r"^[A-Za-z0-9_~]{1,32}:[0-9]{1,20}$")


def invalid(path: str, code: str, message: str) -> ApiError:
    """Discord's 400/50035 with an ``errors`` tree for one field (``a.0.b`` paths)."""
    tree: JSON = {"_errors": [{"code": code, "message": message}]}
    for part in reversed(path.split(".")):
        tree = {part: tree}
    return ApiError(400, 50035, "Invalid Form Body", errors=tree)


def _too_long(path: str, value: Any, limit: int) -> None:
    if isinstance(value, str) and len(value) > limit:
        raise invalid(path, "BASE_TYPE_MAX_LENGTH", f"Must be {limit} or fewer in length.")


def _custom_id(path: str, value: Any) -> None:
    if not isinstance(value, str) or not 1 <= len(value) <= CUSTOM_ID_MAX:
        raise invalid(path, "BASE_TYPE_BAD_LENGTH", f"Must be between 1 and {CUSTOM_ID_MAX} in length.")


def check_message(body: Any) -> None:
    """Refuse a message body (create, edit, interaction answer, follow-up) over Discord's limits."""
    if not isinstance(body, dict):
        return
    _too_long("content", body.get("content"), CONTENT_MAX)
    nonce = body.get("nonce")
    if isinstance(nonce, str):
        _too_long("nonce", nonce, NONCE_MAX)
    _check_embeds(body.get("embeds"))
    flags = body.get("flags")
    v2 = isinstance(flags, int) and bool(flags & IS_COMPONENTS_V2)
    _check_components(body.get("components"), v2=v2)


def _check_embeds(embeds: Any) -> None:
    if not isinstance(embeds, list):
        return
    if len(embeds) > EMBEDS_MAX:
        raise invalid("embeds", "BASE_TYPE_MAX_LENGTH", f"Must be {EMBEDS_MAX} or fewer in length.")
    total = 0
    for i, embed in enumerate(embeds):
        if not isinstance(embed, dict):
            continue
        texts: list[tuple[str, Any, int]] = [(f"embeds.{i}.{k}", embed.get(k), n) for k, n in EMBED_TEXT_MAX.items()]
        texts.append((f"embeds.{i}.footer.text", (embed.get("footer") or {}).get("text"), 2048))
        texts.append((f"embeds.{i}.author.name", (embed.get("author") or {}).get("name"), 256))
        fields = embed.get("fields") or []
        if len(fields) > EMBED_FIELDS_MAX:
            raise invalid(
                f"embeds.{i}.fields", "BASE_TYPE_MAX_LENGTH", f"Must be {EMBED_FIELDS_MAX} or fewer in length."
            )
        for j, field in enumerate(fields):
            texts.extend((f"embeds.{i}.fields.{j}.{k}", field.get(k), n) for k, n in FIELD_MAX.items())
        for path, value, limit in texts:
            if isinstance(value, str):
                # Discord trims leading and trailing whitespace before it measures.
                _too_long(path, value.strip(), limit)
                total += len(value.strip())
    if total > EMBED_TOTAL_MAX:
        raise invalid("embeds", "MAX_EMBED_SIZE_EXCEEDED", f"Embed size exceeds maximum size of {EMBED_TOTAL_MAX}")


def _count(components: list[Any]) -> int:
    total = 0
    for component in components:
        if isinstance(component, dict):
            total += 1 + _count(component.get("components") or [])
            if isinstance(component.get("accessory"), dict):
                total += 1
    return total


def _check_components(components: Any, *, v2: bool) -> None:
    if not isinstance(components, list):
        return
    if v2:
        if _count(components) > V2_COMPONENTS_MAX:
            raise invalid("components", "BASE_TYPE_MAX_LENGTH", f"Must be {V2_COMPONENTS_MAX} or fewer in length.")
    elif len(components) > ACTION_ROWS_MAX:
        raise invalid("components", "BASE_TYPE_MAX_LENGTH", f"Must be {ACTION_ROWS_MAX} or fewer in length.")
    seen: set[str] = set()
    for i, row in enumerate(components):
        if not isinstance(row, dict):
            continue
        if row.get("type") == 1:
            _check_row(f"components.{i}", row, seen)
        elif not v2:
            raise invalid(f"components.{i}", "COMPONENT_LAYOUT_WIDTH_EXCEEDED", "Only action rows may be top-level")


def _check_row(path: str, row: JSON, seen: set[str]) -> None:
    """An action row: 1 to 5 children, a select menu alone."""
    children = row.get("components") or []
    if not children:
        raise invalid(f"{path}.components", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 5 in length.")
    selects = [c for c in children if isinstance(c, dict) and c.get("type") in SELECT_TYPES]
    if selects and len(children) > 1:
        raise invalid(
            f"{path}.components", "COMPONENT_LAYOUT_WIDTH_EXCEEDED", "A select menu must be alone in its action row"
        )
    if len(children) > BUTTONS_PER_ROW:
        raise invalid(f"{path}.components", "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 5 in length.")
    for j, child in enumerate(children):
        if isinstance(child, dict):
            _check_child(f"{path}.components.{j}", child, seen)


def _check_child(path: str, child: JSON, seen: set[str]) -> None:
    kind = child.get("type")
    if kind == 2:
        if not _check_button(path, child):
            return
    elif kind in SELECT_TYPES:
        _check_select(path, child)
    else:
        return
    custom = child.get("custom_id")
    if isinstance(custom, str):
        if custom in seen:
            raise invalid(
                f"{path}.custom_id", "COMPONENT_CUSTOM_ID_DUPLICATED", "Component custom id cannot be duplicated"
            )
        seen.add(custom)


def _check_button(path: str, button: JSON) -> bool:
    """A button's label, and its url or custom id; whether it has a custom id that must be unique."""
    style = button.get("style")
    _too_long(f"{path}.label", button.get("label"), BUTTON_LABEL_MAX)
    if style == LINK_STYLE:
        if not button.get("url") or "custom_id" in button:
            raise invalid(f"{path}.url", "BUTTON_COMPONENT_INVALID_URL", "A link button needs a url and no custom_id")
        _too_long(f"{path}.url", button.get("url"), BUTTON_URL_MAX)
        return False
    if style == PREMIUM_STYLE:
        return False
    _custom_id(f"{path}.custom_id", button.get("custom_id"))
    return True


def _check_select(path: str, select: JSON) -> None:
    """A select menu's custom id, placeholder, value counts and (string selects) options."""
    _custom_id(f"{path}.custom_id", select.get("custom_id"))
    _too_long(f"{path}.placeholder", select.get("placeholder"), PLACEHOLDER_MAX)
    for name in ("min_values", "max_values"):
        value = select.get(name)
        if isinstance(value, int) and not (0 if name == "min_values" else 1) <= value <= SELECT_VALUES_MAX:
            raise invalid(f"{path}.{name}", "NUMBER_TYPE_MAX", f"Must be {SELECT_VALUES_MAX} or less.")
    if select.get("type") != 3:
        return
    options = select.get("options") or []
    if not 1 <= len(options) <= SELECT_OPTIONS_MAX:
        raise invalid(
            f"{path}.options", "BASE_TYPE_BAD_LENGTH", f"Must be between 1 and {SELECT_OPTIONS_MAX} in length."
        )
    for k, option in enumerate(options):
        for name in ("label", "value", "description"):
            _too_long(f"{path}.options.{k}.{name}", option.get(name), SELECT_TEXT_MAX)


def check_modal(data: Any) -> None:
    """Refuse a modal (interaction response type 9) over Discord's limits."""
    if not isinstance(data, dict):
        raise invalid("data", "BASE_TYPE_REQUIRED", "This field is required")
    _custom_id("data.custom_id", data.get("custom_id"))
    title = data.get("title")
    if not isinstance(title, str) or not 1 <= len(title) <= MODAL_TITLE_MAX:
        raise invalid("data.title", "BASE_TYPE_BAD_LENGTH", f"Must be between 1 and {MODAL_TITLE_MAX} in length.")
    components = data.get("components") or []
    if not 1 <= len(components) <= MODAL_COMPONENTS_MAX:
        raise invalid(
            "data.components", "BASE_TYPE_BAD_LENGTH", f"Must be between 1 and {MODAL_COMPONENTS_MAX} in length."
        )


def valid_reaction_emoji(raw: str) -> bool:
    """Whether a reaction route's emoji segment is one Discord knows: ``name:id`` or a Unicode emoji.

    The chat form ``<:name:id>`` (what ``str()`` of a custom emoji gives) is not one.
    """
    if _CUSTOM_EMOJI.match(raw):
        return True
    return bool(raw) and emoji_data.is_emoji(raw)


def require_reaction_emoji(raw: str) -> None:
    """Discord's 400/10014 for an emoji segment it cannot resolve."""
    if not valid_reaction_emoji(raw):
        raise ApiError(400, 10014, "Unknown Emoji")


COMMAND_OPTIONS_MAX = 25
"""Options (subcommands and groups too) per command and per level: "up to 25" (Application Command Option)."""
COMMAND_CHARACTERS_MAX = 8000
"""Characters of a slash command's names, descriptions and values, its options' and choices' included."""


def _longest(data: JSON, field: str) -> int:
    """A field's length as Discord counts it towards the 8,000: its longest localization, the default included."""
    texts = [data.get(field)]
    localized = data.get(f"{field}_localizations")
    if isinstance(localized, dict):
        texts.extend(localized.values())
    return max((len(str(text)) for text in texts if text is not None), default=0)


def _option_characters(path: str, option: JSON) -> int:
    """The characters ``option`` counts, its own options and choices too; over 25 of either is refused."""
    total = _longest(option, "name") + _longest(option, "description")
    for kind in ("options", "choices"):
        nested = option.get(kind) or []
        if len(nested) > COMMAND_OPTIONS_MAX:
            raise invalid(f"{path}{kind}", "BASE_TYPE_MAX_LENGTH", f"Must be {COMMAND_OPTIONS_MAX} or fewer in length.")
        for i, item in enumerate(nested):
            if kind == "options":
                total += _option_characters(f"{path}{kind}.{i}.", item)
            else:
                total += _longest(item, "name") + len(str(item.get("value", "")))
    return total


def command_characters(body: JSON, path: str = "") -> int:
    """The characters a command counts towards Discord's 8,000 (refusing more than 25 options on the way)."""
    return _option_characters(path, body)


def check_command(body: Any, path: str = "") -> None:
    """Refuse a command over Discord's limits (400/50035), as command sync meets them.

    More than 25 options (subcommands and groups included) or choices at any level, or a slash
    command over 8,000 characters (Discord's "Slash Commands" warning; ``command_characters``).
    """
    if not isinstance(body, dict):
        return
    characters = command_characters(body, path)
    if int(body.get("type") or 1) == 1 and characters > COMMAND_CHARACTERS_MAX:
        raise invalid(path.rstrip(".") or "name", "APPLICATION_COMMAND_TOO_LARGE",
                      f"Command exceeds maximum size ({COMMAND_CHARACTERS_MAX})")
