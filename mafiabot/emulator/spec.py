"""Check every request against Discord's OpenAPI spec and record what it rejects.

The spec is read at run time from ``MAFIABOT_DISCORD_SPEC`` or the ``shared/discord-api-spec``
folder beside the repository; it is never copied into the project. Tolerances, each narrow:

- A snowflake may be sent as a JSON integer (Discord accepts both; discord.py sends ints).
- ``integer`` accepts int-parseable strings, as the spec's README says; in a ``oneOf`` such a string
  that also matches a string branch counts once (discord.py sends ``nonce`` as a digit string).
- ``anyOf`` unions are checked as "at least one branch matches": the spec marks them as ``oneOf``
  unions whose branches overlap, and "exactly one" would reject valid bodies.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import logging
import os
import re
from pathlib import Path
from typing import Any

import jsonschema
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

_log = logging.getLogger(__name__)
SPEC_ENV = "MAFIABOT_DISCORD_SPEC"
_INT_STRING = re.compile(r"^-?[0-9]+$")
_METHODS = ("get", "put", "post", "patch", "delete")


def default_spec_path() -> Path:
    """Where the spec is looked for: the env var, else ``<repo>/../shared/discord-api-spec/openapi.json``."""
    env = os.environ.get(SPEC_ENV)
    if env:
        return Path(env)
    repo = Path(__file__).resolve().parents[2]
    return repo.parent / "shared" / "discord-api-spec" / "openapi.json"


@dataclasses.dataclass(frozen=True)
class Violation:
    """A request the spec does not allow."""

    method: str
    path: str
    route: str | None
    reason: str


@dataclasses.dataclass(frozen=True)
class _Operation:
    template: str
    regex: re.Pattern[str]
    literals: int
    methods: dict[str, Any]


def _is_integer(_checker: Any, value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, str) and bool(_INT_STRING.match(value)))


_STRICT_ONE_OF = Draft202012Validator.VALIDATORS["oneOf"]


def _one_of(validator: Any, one_of: list[Any], instance: Any, schema: Any) -> Any:
    """``oneOf`` where a digit string that also passes an integer branch (by the tolerance) counts once."""
    errors = list(_STRICT_ONE_OF(validator, one_of, instance, schema))
    if errors and isinstance(instance, str) and _INT_STRING.match(instance):
        others = [s for s in one_of if not (isinstance(s, dict) and s.get("type") in ("integer", "number"))]
        if sum(1 for s in others if validator.evolve(schema=s).is_valid(instance)) == 1:
            return
    yield from errors


_Validator = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
    Draft202012Validator,
    validators={"oneOf": _one_of},
    type_checker=Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_integer),
)


@dataclasses.dataclass
class _Loaded:
    """One spec file, parsed: shared by every validator of the process that reads the same file."""

    ops: list[_Operation]
    registry: Registry[Any]
    validators: dict[tuple[str, str], Any] = dataclasses.field(default_factory=dict)
    verdicts: dict[tuple[str, str, str], str | None] = dataclasses.field(default_factory=dict)
    """Body checks already made: the same body on the same route gets the same answer."""


_VERDICTS_KEPT = 4096
_LOADED: dict[tuple[Path, int, int], _Loaded] = {}
"""Parsed specs by file, size and modification time: each emulator of a test run used to parse and
compile the 1 MB file again, and check the bot's identical command list again."""


class SpecValidator:
    """Matches request paths to the spec's templates and validates JSON bodies."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_spec_path()
        self.violations: list[Violation] = []
        self.skip_reason: str | None = None
        try:
            stat = self.path.stat()
            key = (self.path.resolve(), stat.st_size, stat.st_mtime_ns)
            loaded = _LOADED.get(key)
            if loaded is None:
                loaded = _LOADED[key] = _load(json.loads(self.path.read_text(encoding="utf-8")))
        except (OSError, ValueError) as exc:
            self.skip_reason = f"Discord OpenAPI spec not readable at {self.path} ({exc}); request checks skipped"
            _log.warning("%s", self.skip_reason)
            loaded = _Loaded([], Registry())
        self._spec = loaded

    @property
    def available(self) -> bool:
        """Whether requests are being checked."""
        return self.skip_reason is None

    def match(self, path: str) -> tuple[str, dict[str, str]] | None:
        """Find the spec template for a concrete path; literal segments win over parameters."""
        for op in self._spec.ops:
            found = op.regex.match(path)
            if found is not None:
                return op.template, found.groupdict()
        return None

    def has_method(self, template: str, method: str) -> bool:
        """Whether the spec defines this method on the template."""
        return any(op.template == template and method in op.methods for op in self._spec.ops)

    def _validator(self, template: str, method: str) -> Any:
        validators = self._spec.validators
        key = (template, method)
        if key not in validators:
            op = next(o for o in self._spec.ops if o.template == template).methods[method]
            body = op.get("requestBody", {}).get("content", {}).get("application/json", {})
            schema = body.get("schema")
            validators[key] = None if schema is None else _Validator(
                _reroot(copy.deepcopy(schema)), registry=self._spec.registry
            )
        return validators[key]

    def _body_verdict(self, template: str, method: str, body: Any) -> str | None:
        """Why the spec rejects ``body`` on this route, or None; each distinct body is checked once."""
        validator = self._validator(template, method)
        if validator is None:
            return None
        try:
            key = (template, method, json.dumps(body, sort_keys=True))
        except (TypeError, ValueError):
            key = None
        verdicts = self._spec.verdicts
        if key is not None and key in verdicts:
            return verdicts[key]
        reason = None
        error = jsonschema.exceptions.best_match(validator.iter_errors(body))
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path) or "<body>"
            reason = f"body rejected at {where}: {error.message[:300]}"
        if key is not None:
            if len(verdicts) >= _VERDICTS_KEPT:
                verdicts.clear()
            verdicts[key] = reason
        return reason

    def check(self, method: str, path: str, body: Any, *, has_body: bool) -> str | None:
        """Validate one request; record and return the reason when the spec rejects it."""
        if not self.available:
            return None
        found = self.match(path)
        reason: str | None = None
        template = None if found is None else found[0]
        if template is None:
            reason = "unknown route"
        elif not self.has_method(template, method):
            reason = f"method {method} not defined for {template}"
        elif has_body:
            reason = self._body_verdict(template, method, body)
        if reason is not None:
            self.violations.append(Violation(method, path, template, reason))
        return reason


def _load(spec: dict[str, Any]) -> _Loaded:
    """Compile the spec's routes, with snowflakes also accepted as integers (discord.py sends ints)."""
    components = copy.deepcopy(spec.get("components", {}))
    snowflake = components.get("schemas", {}).get("SnowflakeType")
    if snowflake is not None:
        components["schemas"]["SnowflakeType"] = {"anyOf": [snowflake, {"type": "integer", "minimum": 0}]}
    registry: Registry[Any] = Registry().with_resource(
        "urn:discord-spec", Resource.from_contents({"components": components}, default_specification=DRAFT202012)
    )
    ops = []
    for template, item in spec["paths"].items():
        parts = [
            f"(?P<{seg[1:-1]}>[^/]+)" if seg.startswith("{") and seg.endswith("}") else re.escape(seg)
            for seg in template.split("/")
        ]
        methods = {m.upper(): item[m] for m in _METHODS if m in item}
        literals = sum(1 for seg in template.split("/") if seg and not seg.startswith("{"))
        ops.append(_Operation(template, re.compile("^" + "/".join(parts) + "$"), literals, methods))
    ops.sort(key=lambda op: -op.literals)
    return _Loaded(ops, registry)


def _reroot(node: Any) -> Any:
    """Point the spec's local ``#/components`` refs at the registered spec resource."""
    if isinstance(node, dict):
        out = {k: _reroot(v) for k, v in node.items()}
        ref = out.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/"):
            out["$ref"] = "urn:discord-spec" + ref
        return out
    if isinstance(node, list):
        return [_reroot(v) for v in node]
    return node
