"""Check REST requests against an OpenAPI 3.0 document (stdlib only, no network).

Built for tests/fixtures/github/openapi-subset.json: a fake GitHub records the requests the
forge layer sends, and the tests assert that each one is a request GitHub would accept.

    checker = OpenApiChecker.load(FIXTURES / "github" / "openapi-subset.json")
    checker.check("POST", "/repos/o/r/issues/1/comments", {}, {"body": "x"})  # -> []
    checker.assert_valid("GET", "/api/v3/repos/o/r/pulls?state=open")       # GHES prefix

Problems reported, as readable strings:

- the path matches no templated path (segments are compared percent-decoded; a full URL, a
  query string and a leading `/api/v3` are accepted), or the method is not defined for it;
- a path parameter of the wrong type (`issue_number` must be an integer);
- a query parameter the operation does not declare, a required one missing, a wrong value;
- a body sent where none is expected, or missing where required;
- in the body: a required property missing, a wrong JSON type, a value outside an enum, too
  few/many array items, a property the schema does not declare (unless
  `additionalProperties` allows it). `nullable` is honoured; `oneOf`/`anyOf` pass when any
  branch fits, `allOf` when all do. `format` is not checked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

Schema = dict[str, Any]
Resolver = Callable[[Any], Any]

GHES_PREFIX = "/api/v3"
HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
INTEGER_TEXT = re.compile(r"-?[0-9]+")
BOOLEAN_TEXT = ("true", "false")


# --------------------------------------------------------------------------- types


def json_type(value: object) -> str:
    """The JSON type name of a decoded JSON value ('integer' for whole numbers)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__


def type_fits(expected: str, value: object) -> bool:
    actual = json_type(value)
    return actual == expected or (expected == "number" and actual == "integer")


def declared_types(schema: Schema) -> list[str]:
    """`type` as a list (OpenAPI 3.0 has one name, 3.1 may list several)."""
    declared = schema.get("type")
    if declared is None:
        return []
    return [declared] if isinstance(declared, str) else list(declared)


def allows_null(schema: Schema) -> bool:
    return bool(schema.get("nullable")) or "null" in declared_types(schema)


# ---------------------------------------------------------------------- operations


@dataclass(frozen=True)
class Parameter:
    """A path or query parameter of one operation."""

    name: str
    location: str
    required: bool
    schema: Schema


@dataclass(frozen=True)
class Operation:
    """One method on one templated path."""

    method: str
    template: str
    parameters: tuple[Parameter, ...]
    body_schema: Schema | None
    body_required: bool

    def params_in(self, location: str) -> dict[str, Parameter]:
        return {p.name: p for p in self.parameters if p.location == location}

    def label(self) -> str:
        return f"{self.method.upper()} {self.template}"


@dataclass(frozen=True)
class PathTemplate:
    """A templated path split into segments; `{name}` segments capture a value."""

    template: str
    segments: tuple[str, ...]
    operations: dict[str, Operation] = field(compare=False)

    def match(self, segments: list[str]) -> dict[str, str] | None:
        if len(segments) != len(self.segments):
            return None
        captured: dict[str, str] = {}
        for pattern, actual in zip(self.segments, segments, strict=True):
            if pattern.startswith("{") and pattern.endswith("}"):
                captured[pattern[1:-1]] = actual
            elif pattern != actual:
                return None
        return captured

    def literal_count(self) -> int:
        return sum(1 for s in self.segments if not s.startswith("{"))


@dataclass(frozen=True)
class PathMatch:
    """The templated path a concrete path matched, with the captured path parameters."""

    template: PathTemplate
    path_params: dict[str, str]


# -------------------------------------------------------------------------- checker


class OpenApiChecker:
    """Validates (method, path, query, JSON body) requests against an OpenAPI document."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        self.document = document
        self.templates = [self._template(t, item) for t, item in document["paths"].items()]

    @classmethod
    def load(cls, path: str | Path) -> OpenApiChecker:
        return cls(json.loads(Path(path).read_text(encoding="utf-8")))

    # -- public API

    def check(
        self,
        method: str,
        url_path: str,
        query: Mapping[str, object] | None = None,
        json_body: object = None,
    ) -> list[str]:
        """Every problem with the request; an empty list means it is valid.

        `url_path` may be a full URL and may carry a query string (merged into `query`).
        `json_body=None` means "no body".
        """
        path, all_query = split_url(url_path, query)
        found = self.match(path)
        if found is None:
            return [f"no templated path matches {path!r}"]
        operation = found.template.operations.get(method.lower())
        if operation is None:
            return [method_problem(method, found.template)]
        return [
            *self._path_problems(operation, found.path_params),
            *query_problems(operation, all_query, self.resolve),
            *self._body_problems(operation, json_body),
        ]

    def assert_valid(
        self,
        method: str,
        url_path: str,
        query: Mapping[str, object] | None = None,
        json_body: object = None,
    ) -> None:
        """Raise AssertionError listing the problems, if any."""
        problems = self.check(method, url_path, query, json_body)
        if problems:
            listed = "\n  - ".join(problems)
            raise AssertionError(f"{method.upper()} {url_path} is not valid:\n  - {listed}")

    def match(self, url_path: str) -> PathMatch | None:
        """The most specific templated path matching `url_path` (most literal segments)."""
        segments = path_segments(split_url(url_path, None)[0])
        if segments is None:
            return None
        found = [(t, t.match(segments)) for t in self.templates]
        candidates = [PathMatch(t, params) for t, params in found if params is not None]
        if not candidates:
            return None
        return max(candidates, key=lambda m: m.template.literal_count())

    def resolve(self, node: Any) -> Any:
        """Follow local `$ref`s ('#/components/...') until a non-reference node."""
        while isinstance(node, Mapping) and "$ref" in node:
            target: Any = self.document
            for part in str(node["$ref"]).removeprefix("#/").split("/"):
                target = target[part.replace("~1", "/").replace("~0", "~")]
            node = target
        return node

    # -- building

    def _template(self, template: str, item: Mapping[str, Any]) -> PathTemplate:
        shared = item.get("parameters", [])
        operations = {
            method: self._operation(method, template, op, shared)
            for method, op in item.items()
            if method in HTTP_METHODS
        }
        segments = tuple(template.strip("/").split("/"))
        return PathTemplate(template, segments, operations)

    def _operation(
        self, method: str, template: str, op: Mapping[str, Any], shared: list[Any]
    ) -> Operation:
        params = [self._parameter(p) for p in [*shared, *op.get("parameters", [])]]
        body = self.resolve(op.get("requestBody")) or {}
        media = body.get("content", {}).get("application/json", {})
        schema = self.resolve(media.get("schema")) if media else None
        required = bool(body.get("required", False))
        return Operation(method, template, tuple(params), schema, required)

    def _parameter(self, node: Any) -> Parameter:
        p = self.resolve(node)
        required = bool(p.get("required", False)) or p["in"] == "path"
        return Parameter(p["name"], p["in"], required, self.resolve(p.get("schema", {})))

    # -- request parts

    def _path_problems(self, operation: Operation, values: dict[str, str]) -> list[str]:
        problems: list[str] = []
        for name, param in operation.params_in("path").items():
            value = values.get(name, "")
            if value == "":
                problems.append(f"path parameter {name!r} is empty")
            else:
                problems += text_problems(f"path parameter {name!r}", value, param.schema)
        return problems

    def _body_problems(self, operation: Operation, body: object) -> list[str]:
        if body is None:
            needed = operation.body_required
            return [f"{operation.label()} requires a JSON body"] if needed else []
        if operation.body_schema is None:
            return [f"{operation.label()} takes no JSON body"]
        return SchemaValidator(self.resolve).problems(operation.body_schema, body, "body")


# ---------------------------------------------------------------------- url & query


def split_url(url: str, query: Mapping[str, object] | None) -> tuple[str, dict[str, object]]:
    """(path without any GHES `/api/v3` prefix, query string merged with `query`)."""
    parts = urlsplit(url)
    merged: dict[str, object] = dict(parse_qsl(parts.query, keep_blank_values=True))
    merged.update(query or {})
    path = parts.path
    if path == GHES_PREFIX or path.startswith(GHES_PREFIX + "/"):
        path = path[len(GHES_PREFIX) :]
    return path, merged


def path_segments(path: str) -> list[str] | None:
    """Percent-decoded segments of an absolute path; None for a malformed one."""
    if not path.startswith("/"):
        return None
    return [unquote(segment) for segment in path[1:].split("/")]


def method_problem(method: str, template: PathTemplate) -> str:
    allowed = ", ".join(m.upper() for m in template.operations)
    return f"method {method.upper()} is not defined for {template.template} (allowed: {allowed})"


def query_problems(
    operation: Operation, query: Mapping[str, object], resolve: Resolver
) -> list[str]:
    declared = operation.params_in("query")
    problems = [
        f"unknown query parameter {name!r} for {operation.label()}"
        for name in query
        if name not in declared
    ]
    for name, param in declared.items():
        if name not in query:
            problems += [f"missing required query parameter {name!r}"] if param.required else []
            continue
        problems += query_value_problems(name, query[name], resolve(param.schema))
    return problems


def query_value_problems(name: str, value: object, schema: Schema) -> list[str]:
    values = value if isinstance(value, list | tuple) else [value]
    problems: list[str] = []
    for item in values:
        text = str(item).lower() if isinstance(item, bool) else str(item)
        problems += text_problems(f"query parameter {name!r}", text, schema)
    return problems


def text_problems(where: str, text: str, schema: Schema) -> list[str]:
    """Problems with a path or query value (always text on the wire) against its schema."""
    types = declared_types(schema)
    if "integer" in types and not INTEGER_TEXT.fullmatch(text):
        return [f"{where}: expected an integer, got {text!r}"]
    if "boolean" in types and text not in BOOLEAN_TEXT:
        return [f"{where}: expected true or false, got {text!r}"]
    enum = schema.get("enum")
    if enum is not None and text not in [str(e) for e in enum]:
        return [f"{where}: {text!r} is not one of {enum}"]
    return []


# --------------------------------------------------------------------------- bodies


@dataclass(frozen=True)
class SchemaValidator:
    """Validates a decoded JSON value against an OpenAPI 3.0 schema (the subset we need)."""

    resolve: Resolver

    def problems(self, schema: Schema, value: object, where: str) -> list[str]:
        schema = self.resolve(schema)
        if value is None and allows_null(schema):
            return []
        if "oneOf" in schema or "anyOf" in schema:
            return self._branch_problems(schema, value, where)
        parts = schema.get("allOf", [])
        problems = [p for part in parts for p in self.problems(part, value, where)]
        if problems:
            return problems
        wrong_type = self._type_problems(schema, value, where)
        return wrong_type or self._value_problems(schema, value, where)

    def _branch_problems(self, schema: Schema, value: object, where: str) -> list[str]:
        branches = [*schema.get("oneOf", []), *schema.get("anyOf", [])]
        failures = [self.problems(branch, value, where) for branch in branches]
        if any(not failure for failure in failures):
            return []
        if len(failures) == 1:
            return failures[0]
        reasons = "; ".join(failure[0] for failure in failures)
        return [f"{where}: matches none of the {len(branches)} allowed shapes ({reasons})"]

    def _type_problems(self, schema: Schema, value: object, where: str) -> list[str]:
        types = declared_types(schema)
        if not types or any(type_fits(t, value) for t in types):
            return []
        return [f"{where}: expected {' or '.join(types)}, got {json_type(value)}"]

    def _value_problems(self, schema: Schema, value: object, where: str) -> list[str]:
        enum = schema.get("enum")
        if enum is not None and value not in enum:
            return [f"{where}: {value!r} is not one of {enum}"]
        if isinstance(value, dict):
            return self._object_problems(schema, value, where)
        if isinstance(value, list):
            return self._array_problems(schema, value, where)
        return []

    def _object_problems(self, schema: Schema, value: dict[str, Any], where: str) -> list[str]:
        properties: dict[str, Schema] = schema.get("properties", {})
        problems = [
            f"{where}: missing required property {name!r}"
            for name in schema.get("required", [])
            if name not in value
        ]
        for name, item in value.items():
            item_where = f"{where}.{name}"
            if name in properties:
                problems += self.problems(properties[name], item, item_where)
            else:
                problems += self._additional_problems(schema, item, item_where)
        return problems

    def _additional_problems(self, schema: Schema, value: object, where: str) -> list[str]:
        """A property the schema does not list: allowed only if `additionalProperties` says so.

        Without `properties` the object is free-form (anything goes).
        """
        extra = schema.get("additionalProperties", "properties" not in schema)
        if extra is True:
            return []
        if extra is False:
            return [f"{where}: unknown property"]
        return self.problems(extra, value, where)

    def _array_problems(self, schema: Schema, value: list[Any], where: str) -> list[str]:
        problems: list[str] = []
        if len(value) < schema.get("minItems", 0):
            problems.append(f"{where}: needs at least {schema['minItems']} item(s)")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            problems.append(f"{where}: allows at most {schema['maxItems']} item(s)")
        items: Schema = schema.get("items", {})
        for index, item in enumerate(value):
            problems += self.problems(items, item, f"{where}[{index}]")
        return problems
