"""Config keys that several provider types share, and the ${VAR} expansion of header values.

Each provider type's config model (its `config_model`) is a subclass of one of these; the keys a
type does not declare are errors in the suite file.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterable, Mapping
from typing import Annotated

from pydantic import AfterValidator, Field, field_validator

from stabilitygate.errors import BadInput
from stabilitygate.suite.model import ADDRESS, ProviderConfig

__all__ = [
    "EndpointConfig",
    "HeaderedConfig",
    "KeyedConfig",
    "check_header_variables",
    "check_http_url",
    "expand_headers",
    "header_variables",
]

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_VARIABLE_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"


def check_http_url(value: str) -> str:
    """`value` when it is an http(s) URL with a host (and a port, if any, that is a number); else
    ValueError, which the suite's loader turns into exit 2 at the key's line."""
    try:
        parts = urllib.parse.urlsplit(value)
        parts.port  # noqa: B018 -- reading it checks it
    except ValueError as exc:
        raise ValueError(f"{value!r:.200} is not a URL: {exc}") from exc
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{value!r:.200} is not an http:// or https:// URL with a host")
    return value


HttpUrl = Annotated[str, AfterValidator(check_http_url)]


class KeyedConfig(ProviderConfig):
    """A provider that may read an API key from the environment."""

    api_key_env: Annotated[str | None, ADDRESS] = Field(
        None, pattern=_VARIABLE_NAME, description="NAME of the variable holding the key"
    )

    @field_validator("api_key_env", mode="before")
    @classmethod
    def _a_name_not_a_key(cls, value: object) -> object:
        # A key pasted where its variable's name goes is the likeliest mistake: say what is expected,
        # and never show the value (suite/strict.py NEVER_ECHOED).
        if isinstance(value, str) and not re.fullmatch(_VARIABLE_NAME, value):
            raise ValueError(
                "api_key_env is the NAME of the environment variable that holds the key (letters, digits and _,"
                " e.g. api_key_env: OPENAI_API_KEY), not the key itself: put the key in that variable"
            )
        return value


class HeaderedConfig(KeyedConfig):
    """A provider that sends HTTP headers of the suite's choosing."""

    headers: Annotated[dict[str, str] | None, ADDRESS] = Field(
        None, description="Extra HTTP headers (values may use ${VAR})"
    )


class EndpointConfig(HeaderedConfig):
    """A provider speaking a vendor's API at a root URL that has a default."""

    base_url: Annotated[HttpUrl | None, ADDRESS] = Field(None, description="API root, e.g. https://api.openai.com/v1")

    def endpoint(self) -> str | None:
        return self.base_url


def header_variables(headers: Mapping[str, str]) -> set[str]:
    """The ${NAME}s the header values reference."""
    return {name for value in headers.values() for name in _VAR.findall(value)}


def expand_headers(headers: Mapping[str, str], variables: Mapping[str, str]) -> dict[str, str]:
    """Header values with each ${NAME} replaced; the caller has checked every name is defined."""
    return {key: _VAR.sub(lambda m: variables[m.group(1)], value) for key, value in headers.items()}


def check_header_variables(
    headers: Mapping[str, str], environ: Mapping[str, str], provided: Iterable[str] = ()
) -> list[str]:
    """The values of the environment variables the headers use (secrets to redact); BadInput if unset."""
    values = []
    for name in sorted(header_variables(headers) - set(provided)):
        value = environ.get(name)
        if value is None:
            raise BadInput(f"provider.headers: the variable {name} used as ${{{name}}} is not set")
        values.append(value)
    return values
