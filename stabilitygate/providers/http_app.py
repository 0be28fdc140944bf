"""The `http` provider: the team's own application, called the way its clients call it.

The request body is a sandboxed jinja2 template that renders to JSON; the completion is found in
the reply by an RFC 6901 pointer. Measuring the application instead of the bare model also
measures what it adds: caches keyed on an idempotency key, retrieval, post-processing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any, Literal

import httpx
import jinja2
from jinja2.sandbox import SandboxedEnvironment
from pydantic import Field, field_validator

from stabilitygate.errors import BadInput
from stabilitygate.jsonpointer import resolve_pointer
from stabilitygate.measure.canonical import canonical_json
from stabilitygate.providers.config import (
    HeaderedConfig,
    HttpUrl,
    check_header_variables,
    expand_headers,
    header_variables,
)
from stabilitygate.providers.httpbase import request_json
from stabilitygate.providers.interface import (
    Completion,
    FatalProviderError,
    Provider,
    ProviderError,
    Request,
)
from stabilitygate.secrets import environment_secrets, redact
from stabilitygate.suite.model import ProviderConfig

#: Used when the suite gives no `body`: everything the request has, under plain names.
DEFAULT_BODY = (
    '{"prompt": {{ prompt|tojson }}, "system": {{ system|tojson }}, "messages": {{ messages|tojson }},'
    ' "model": {{ model|tojson }}, "params": {{ params|tojson }}, "case_id": {{ case_id|tojson }},'
    ' "sample_index": {{ sample_index }}, "idempotency_key": {{ idempotency_key|tojson }}}'
)
#: Variables a header may use besides the environment's: they change with every request.
REQUEST_VARIABLES = ("api_key", "idempotency_key", "case_id", "sample_index")


def _tojson(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=_not_json)


def _not_json(value: Any) -> Any:
    if isinstance(value, jinja2.Undefined):
        str(value)  # StrictUndefined raises here, naming the variable
    raise jinja2.TemplateRuntimeError(f"tojson cannot serialise a {type(value).__name__}")


class HttpAppConfig(HeaderedConfig):
    """`type: http`: the team's own application."""

    type: Literal["http"]
    url: HttpUrl = Field(min_length=1, description="http: the endpoint to call")
    method: Literal["GET", "POST", "PUT", "PATCH"] | None = Field(None, description="http: the method")
    body: str | None = Field(None, description="http: a jinja2 template of the JSON body")
    completion_pointer: str | None = Field(None, description="http: RFC 6901 pointer to the completion in the response")

    @field_validator("completion_pointer")
    @classmethod
    def _is_a_pointer(cls, value: str | None) -> str | None:
        if value and not value.startswith("/"):
            raise ValueError(f"{value!r} must be '' or start with '/'")
        return value


class HttpAppProvider(Provider):
    """POSTs (or GETs) a rendered JSON body to the application and reads the completion back."""

    config_model = HttpAppConfig
    has_fingerprint = False

    @classmethod
    def secret_env_names(cls, config: ProviderConfig) -> frozenset[str]:
        # ${api_key} and the other request variables are not environment variables.
        return super().secret_env_names(config) - set(REQUEST_VARIABLES)

    def __init__(
        self, config: HttpAppConfig, *, environ: Mapping[str, str] | None = None, timeout_s: float = 60
    ) -> None:
        env = os.environ if environ is None else environ
        self._url = config.url
        self._method = config.method or "POST"
        self._model = config.model
        self._pointer = config.completion_pointer or ""
        self._api_key: str | None = None
        if config.api_key_env:
            self._api_key = env.get(config.api_key_env)
            if not self._api_key:
                raise BadInput(f"provider.api_key_env: the variable {config.api_key_env} is not set")
        self._headers = dict(config.headers or {})
        env_secrets = check_header_variables(self._headers, env, REQUEST_VARIABLES)
        env_names = header_variables(self._headers) - set(REQUEST_VARIABLES)
        self._env_values = {name: env[name] for name in env_names}
        if "api_key" in header_variables(self._headers) and self._api_key is None:
            raise BadInput("provider.headers: ${api_key} is used but `api_key_env` is not set")
        self._secrets = [s for s in (self._api_key, *env_secrets, *environment_secrets(env)) if s]
        self._template_source = config.body or DEFAULT_BODY
        self._template = _compile(self._template_source)
        # The sampler's concurrency is the limit, not the pool (httpx's default would cap it at 100).
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=256)
        self._client = httpx.AsyncClient(timeout=timeout_s, limits=limits, follow_redirects=False)

    async def complete(self, request: Request) -> Completion:
        variables = self._variables(request)
        document = self._render(variables)
        headers = expand_headers(
            self._headers,
            {
                **self._env_values,
                "api_key": self._api_key or "",
                "idempotency_key": request.idempotency_key,
                "case_id": request.case_id,
                "sample_index": str(request.index),
            },
        )
        url, body = self._url, document
        if self._method == "GET":
            url, body = _with_query(self._url, document), None
        reply = await request_json(self._client, self._method, url, json=body, headers=headers, secrets=self._secrets)
        found, value = resolve_pointer(reply, self._pointer)
        if not found:
            raise ProviderError(
                f"the reply has nothing at completion_pointer {self._pointer!r}", retryable=False, kind="bad_body"
            )
        text = value if isinstance(value, str) else canonical_json(value)
        return Completion(text=text, model=self._model)

    async def aclose(self) -> None:
        await self._client.aclose()

    def _variables(self, request: Request) -> dict[str, Any]:
        messages = [dict(m) for m in request.messages]
        system = "\n\n".join(m["content"] for m in messages if m.get("role") in ("system", "developer"))
        prompt = next((m["content"] for m in reversed(messages) if m.get("role") == "user"), "")
        return {
            "prompt": prompt,
            "system": system or None,
            "messages": messages,
            "sample_index": request.index,
            "case_id": request.case_id,
            "idempotency_key": request.idempotency_key,
            "model": request.model or self._model,
            "params": dict(request.params),
            "api_key": self._api_key,
        }

    def _render(self, variables: Mapping[str, Any]) -> Any:
        try:
            text = self._template.render(**variables)
        except jinja2.TemplateError as exc:
            raise FatalProviderError(
                f"provider.body: the template failed to render: {redact(str(exc), self._secrets)}",
                kind="bad_template",
            ) from exc
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            # Never show the rendered text: it may hold the key. The position points at the problem.
            raise FatalProviderError(
                f"provider.body: the template did not render valid JSON ({exc.msg} at line {exc.lineno}"
                f" column {exc.colno}); use the tojson filter for strings, e.g. {{{{ prompt|tojson }}}}",
                kind="bad_template",
            ) from exc


def _compile(source: str) -> jinja2.Template:
    environment = SandboxedEnvironment(undefined=jinja2.StrictUndefined, autoescape=False)
    environment.filters["tojson"] = _tojson
    try:
        return environment.from_string(source)
    except jinja2.TemplateSyntaxError as exc:
        raise BadInput(f"provider.body: template syntax error at line {exc.lineno}: {exc.message}") from exc


def _with_query(url: str, document: Any) -> str:
    """For GET: the rendered object's fields as query parameters (non-strings in canonical JSON)."""
    if not isinstance(document, dict):
        raise FatalProviderError(
            "provider.body: with method GET the template must render a JSON object (its fields become"
            " the query string)",
            kind="bad_template",
        )
    params = {k: v if isinstance(v, str) else canonical_json(v) for k, v in document.items()}
    return str(httpx.URL(url).copy_merge_params(params))
