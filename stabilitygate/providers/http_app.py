"""The `http` provider: the team's own application, called the way its clients call it.

The request body is a sandboxed jinja2 template that renders to JSON, under limits of time, loop work
and size (providers/body_template.py); the completion is found in the reply by an RFC 6901 pointer.
Measuring the application instead of the bare model also measures what it adds: caches keyed on an
idempotency key, retrieval, post-processing. `check_request` renders each case's first body when the
suite loads, so a template mistake is exit 2 at `validate`, not a failure of every sample.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Annotated, Literal

import httpx
from pydantic import Field, field_validator

from stabilitygate.errors import BadInput
from stabilitygate.jsonpointer import resolve_pointer
from stabilitygate.measure.canonical import canonical_json
from stabilitygate.providers.body_template import BodyTemplate, TemplateProblem, limit_for
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
from stabilitygate.secrets import environment_secrets
from stabilitygate.suite.model import ADDRESS, Implied, ProviderConfig

#: Used when the suite gives no `body`: everything the request has, under plain names.
DEFAULT_BODY = (
    '{"prompt": {{ prompt|tojson }}, "system": {{ system|tojson }}, "messages": {{ messages|tojson }},'
    ' "model": {{ model|tojson }}, "params": {{ params|tojson }}, "case_id": {{ case_id|tojson }},'
    ' "sample_index": {{ sample_index }}, "idempotency_key": {{ idempotency_key|tojson }}}'
)
#: Variables a header may use besides the environment's: they change with every request.
REQUEST_VARIABLES = ("api_key", "idempotency_key", "case_id", "sample_index")
#: What `api_key` holds when a body is rendered to check it, before any key is read.
KEY_STAND_IN = "api-key-stand-in"
#: The method of a config that names none.
DEFAULT_METHOD = "POST"
#: What to check for each refusal, in this provider's keys (an API provider's say base_url and model).
STATUS_HINTS = {
    400: "request rejected (check body, the template of what is sent)",
    401: "authentication refused (check headers and the variable named by api_key_env)",
    403: "permission denied (check headers and the key they send)",
    404: "not found (check url)",
    405: "method not allowed (check url and method)",
    413: "request too large",
    422: "request not processable (check body, the template of what is sent)",
}


class HttpAppConfig(HeaderedConfig):
    """`type: http`: the team's own application."""

    type: Literal["http"]
    url: Annotated[HttpUrl, ADDRESS] = Field(min_length=1, description="http: the endpoint to call")
    method: Annotated[Literal["GET", "POST", "PUT", "PATCH"] | None, Implied(DEFAULT_METHOD)] = Field(
        None, description="http: the method"
    )
    body: str | None = Field(None, description="http: a jinja2 template of the JSON body")
    completion_pointer: str | None = Field(None, description="http: RFC 6901 pointer to the completion in the response")

    def endpoint(self) -> str | None:
        return self.url

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
    sends = "what its `body` template renders (params only where the template uses them), to its url, with its headers"

    @classmethod
    def secret_env_names(cls, config: ProviderConfig) -> frozenset[str]:
        # ${api_key} and the other request variables are not environment variables.
        return super().secret_env_names(config) - set(REQUEST_VARIABLES)

    @classmethod
    def check_request(cls, config: ProviderConfig, request: Request, *, timeout_s: float) -> str | None:
        """The body this request would get rendered, with a stand-in key: what is wrong with it, or None."""
        assert isinstance(config, HttpAppConfig)
        try:
            template = BodyTemplate(config.body or DEFAULT_BODY)
            api_key = KEY_STAND_IN if config.api_key_env else None
            variables = request_variables(request, config.model, api_key)
            _for_method(
                template.render(variables, limit_s=limit_for(timeout_s)), config.method or DEFAULT_METHOD, config.url
            )
        except (BadInput, TemplateProblem) as exc:
            return str(exc)
        return None

    @classmethod
    def sent(cls, config: ProviderConfig, request: Request, *, timeout_s: float) -> object:
        """The method, url (a GET's query included), headers and rendered body; None when it does not render."""
        assert isinstance(config, HttpAppConfig)
        method = config.method or DEFAULT_METHOD
        try:
            variables = request_variables(request, config.model, KEY_STAND_IN if config.api_key_env else None)
            rendered = BodyTemplate(config.body or DEFAULT_BODY).render(variables, limit_s=limit_for(timeout_s))
            url, body = _for_method(rendered, method, config.url)
        except (BadInput, TemplateProblem):
            return None
        return (method, url, sorted((config.headers or {}).items()), canonical_json(body))

    def __init__(
        self, config: HttpAppConfig, *, environ: Mapping[str, str] | None = None, timeout_s: float = 60
    ) -> None:
        env = os.environ if environ is None else environ
        self._url = config.url
        self._method = config.method or DEFAULT_METHOD
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
        self._template = BodyTemplate(config.body or DEFAULT_BODY)
        self._render_limit_s = limit_for(timeout_s)
        # The sampler's concurrency is the limit, not the pool (httpx's default would cap it at 100).
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=256)
        self._client = httpx.AsyncClient(timeout=timeout_s, limits=limits, follow_redirects=False)

    async def complete(self, request: Request) -> Completion:
        try:
            variables = request_variables(request, self._model, self._api_key)
            url, body = _for_method(
                self._template.render(variables, limit_s=self._render_limit_s), self._method, self._url
            )
        except TemplateProblem as exc:
            raise FatalProviderError(self.redacting(self._secrets).redact(str(exc)), kind="bad_template") from exc
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
        reply = await request_json(
            self._client,
            self._method,
            url,
            json=body,
            headers=headers,
            secrets=self.redacting(self._secrets),
            hints=STATUS_HINTS,
            address_key="url",
        )
        found, value = resolve_pointer(reply, self._pointer)
        if not found:
            raise ProviderError(
                f"the reply has nothing at completion_pointer {self._pointer!r}", retryable=False, kind="bad_body"
            )
        text = value if isinstance(value, str) else canonical_json(value)
        return Completion(text=text, model=self._model)

    async def aclose(self) -> None:
        await self._client.aclose()


def request_variables(request: Request, model: str | None, api_key: str | None) -> dict[str, object]:
    """What a body template may use, for one request."""
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
        "model": request.model or model,
        "params": dict(request.params),
        "api_key": api_key,
    }


def _for_method(document: object, method: str, url: str) -> tuple[str, object]:
    """(url, body) of the request: for GET the rendered object's fields as the query, and no body."""
    if method != "GET":
        return url, document
    return _with_query(url, document), None


def _with_query(url: str, document: object) -> str:
    """For GET: the rendered object's fields as query parameters (non-strings in canonical JSON)."""
    if not isinstance(document, dict):
        raise TemplateProblem(
            "provider.body: with method GET the template must render a JSON object (its fields become the query string)"
        )
    params = {k: v if isinstance(v, str) else canonical_json(v) for k, v in document.items()}
    return str(httpx.URL(url).copy_merge_params(params))
