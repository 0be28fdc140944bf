"""The bounds of a suite's name and a case's id: checked when the suite is read, and again when a
report comes back from another job (`merge`, `comment-from`), so that a name of 60 MB in a fork's
report is exit 2, not a comment that is all marker (docs/design.md §15)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

MAX_SUITE_NAME_CHARS = 100
MAX_CASE_ID_CHARS = 200
MAX_PATH_CHARS = 4096
CASE_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$"

SuiteName = Annotated[str, Field(min_length=1, max_length=MAX_SUITE_NAME_CHARS)]
CaseId = Annotated[str, Field(min_length=1, max_length=MAX_CASE_ID_CHARS)]
PathText = Annotated[str, Field(max_length=MAX_PATH_CHARS)]
