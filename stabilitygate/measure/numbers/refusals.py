"""An answer that declines: "I can't determine ...", "not enough information", "cannot be determined".

Such a text commits to no number, whatever numbers it mentions, unless it then gives an answer
plainly ("... but the answer is 12"); an answer it only supposes ("the answer would be 36")
does not count (docs/design.md §4.1).
"""

from __future__ import annotations

import re

_REFUSAL = re.compile(
    r"\b(?:i\s*(?:can(?:no|['’])t|cannot|could\s*n['’o]t|am\s+(?:unable|not\s+able)\s+to|['’]m\s+(?:unable|not\s+able)\s+to)"
    r"\s+(?:\w+\s+){0,2}?(?:determine|answer|solve|calculate|compute|tell|say|know|help|provide|give|find|access|be\s+sure)"
    r"|i\s+do\s*n['’o]t\s+(?:have\s+(?:access|enough|the\s+(?:data|information|figures))|know)"
    r"|(?:can(?:no|['’])t|cannot|could\s*n['’o]t)\s+be\s+(?:determined|calculated|answered|known|computed|solved|found)"
    r"|(?:not|isn['’]t|aren['’]t|wasn['’]t|don['’]t\s+have)\s+enough\s+(?:information|data)"
    r"|insufficient\s+(?:information|data)"
    r"|(?:impossible|not\s+possible)\s+to\s+(?:determine|know|say|tell|answer|calculate)"
    r"|(?:is|are)\s+ambiguous|no\s+(?:unique|single|definitive)\s+answer"
    r"|(?:does|do)\s+not\s+have\s+a\s+(?:unique|single)\s+answer"
    r"|(?:has|have|there\s+is|there\s+are)\s+no\s+(?:solutions?|answers?)\b)",
    re.I,
)

#: Each way of declining holds one of these.
_HINT = re.compile(r"can|could|able|don|enough|insufficient|possible|ambiguous|unique|single|definitive|no so|no an")


def refusal_in(text: str) -> re.Match[str] | None:
    """The first phrase that declines to answer, or None."""
    lower = text.lower()
    if not _HINT.search(lower):  # most texts: no look with the slow pattern
        return None
    return _REFUSAL.search(text)
