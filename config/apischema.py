"""The API's OpenAPI schema (drf-spectacular's, served at /api/schema/), saying what every
operation may also answer and what a query parameter may hold, so that the schema and the API
agree: tests/config/test_api_schemathesis.py checks both ways with schemathesis.

Its own module: DRF reads its settings (and imports config.http's parser) when drf-spectacular
is imported, so config.http cannot import it.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import ResolvedComponent

# The refusals every API operation may answer, as config.errors and DRF write them.
ERROR_RESPONSES = {
    "400": "Refused: {detail, code, field} saying what is wrong and where (a query parameter, "
    "a field), or {field: [messages]} for a body that is not valid.",
    "401": "Credentials that are not valid (basic authentication).",
    "403": "Not signed in, or not allowed: {detail}.",
    "404": "No such object, or not one of yours: {detail}.",
    "429": "Too many requests for now: {detail}; Retry-After says when to ask again.",
}
# What a query parameter may hold (UntrustedInputMiddleware refuses control characters).
NO_CONTROL_CHARACTERS = "^[^\\x00-\\x1f\\x7f-\\x9f]*$"
# What a JSON body's text may hold (config.untrusted: no NUL, no lone surrogate).
STORABLE_TEXT = "^[^\\x00\\ud800-\\udfff]*$"
NOT_BLANK_TEXT = "^[^\\x00\\ud800-\\udfff]*[^\\s\\x00\\ud800-\\udfff][^\\x00\\ud800-\\udfff]*$"
_SELF = {"$ref": "#/components/schemas/StorableJSON"}
STORABLE_JSON: dict[str, Any] = {
    "description": "Any JSON value with no NUL or lone surrogate in its texts or keys.",
    "nullable": True,
    "oneOf": [
        {"type": "string", "pattern": STORABLE_TEXT},
        {"type": "number"},
        {"type": "boolean"},
        {"type": "array", "items": _SELF},
        {
            "type": "object",
            "propertyNames": {"pattern": STORABLE_TEXT},
            "additionalProperties": _SELF,
        },
    ],
}


class ApiSchema(AutoSchema):
    """drf-spectacular's schema, saying what every operation may also answer (the refusals
    above) and what a text query parameter may not hold, so that the schema and the API
    agree (tests/config/test_api_schemathesis.py checks both ways)."""

    def _get_response_bodies(self, direction: Any = "response") -> dict[str, Any]:
        responses = super()._get_response_bodies(direction)
        for code, description in ERROR_RESPONSES.items():
            responses.setdefault(
                code,
                {
                    "content": {
                        "application/json": {
                            "schema": {"type": "object", "additionalProperties": {}}
                        }
                    },
                    "description": description,
                },
            )
        return responses

    def _map_basic_serializer(self, serializer: Any, direction: Any) -> dict[str, Any]:
        schema = super()._map_basic_serializer(serializer, direction)
        if direction == "request":
            # config.http.RequestBody refuses a field the operation does not take
            schema["additionalProperties"] = False
        return schema

    def _map_serializer_field(
        self, field: Any, direction: Any, bypass_extensions: bool = False
    ) -> Any:
        schema = super()._map_serializer_field(field, direction, bypass_extensions)
        if direction == "request" and isinstance(schema, dict) and schema.get("type") == "object":
            # the bounded reader refuses a key a database cannot store (config.untrusted), and
            # a text a database cannot store anywhere in a value of a free-form object
            schema.setdefault("propertyNames", {"pattern": STORABLE_TEXT})
            if schema.get("additionalProperties") in ({}, True):
                schema["additionalProperties"] = self._storable_json()
        if (
            direction == "request"
            and isinstance(schema, dict)
            and schema.get("type") == "string"
            and not {"pattern", "enum", "format"} & set(schema)
        ):
            # a text a database can store (config.untrusted); one that may not be blank has a
            # character other than white space (DRF trims it before it checks)
            blank = getattr(field, "allow_blank", True) or not getattr(field, "trim_whitespace", 0)
            schema["pattern"] = STORABLE_TEXT if blank else NOT_BLANK_TEXT
        least = getattr(field, "min_value", None)
        pattern = schema.get("pattern", "") if isinstance(schema, dict) else ""
        if least is not None and least >= 0 and pattern.startswith("^-?"):
            # a decimal written as a string: its pattern says the sign its minimum allows
            schema["pattern"] = "^" + pattern[3:]
        return schema

    def _storable_json(self) -> dict[str, Any]:
        """A reference to StorableJSON: any JSON value whose texts (keys too) a database can
        store, what config.untrusted reads from a body's free-form objects."""
        component = ResolvedComponent(
            name="StorableJSON",
            type=ResolvedComponent.SCHEMA,
            object="StorableJSON",
            schema=STORABLE_JSON,
        )
        self.registry.register_on_missing(component)
        return component.ref

    def _get_parameters(self) -> list[dict[str, Any]]:
        parameters = super()._get_parameters()
        for parameter in parameters:
            if parameter.get("in") != "query":
                continue
            schema = parameter.get("schema", {})
            text = schema.get("items", {}) if schema.get("type") == "array" else schema
            if text.get("type") == "string" and "enum" not in text and "pattern" not in text:
                text["pattern"] = NO_CONTROL_CHARACTERS
        return parameters
