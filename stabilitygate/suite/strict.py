"""The base of the suite file's models: unknown keys are errors, objects never change after loading."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    """Unknown keys are errors; objects never change after loading."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=False)
