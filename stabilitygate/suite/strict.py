"""The base of the suite file's models: unknown keys are errors, objects never change after loading."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

#: Keys whose value may be a secret pasted in by mistake (a key where its variable's name goes): an
#: error about them never shows the value (suite/load.py `to_bad_input`).
NEVER_ECHOED = frozenset({"api_key_env", "headers"})


class Strict(BaseModel):
    """Unknown keys are errors; objects never change after loading."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=False)
