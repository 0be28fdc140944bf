"""An answer that declines: "I can't determine ...", "not enough information", "cannot be determined".

Such a text commits to no number, whatever numbers it mentions, unless it then gives an answer
plainly ("... but the answer is 12"); an answer it only supposes ("the answer would be 36")
does not count (docs/design.md §4.1).
"""

from __future__ import annotations

import re

_REFUSAL = re.compile(
    r"\b(?:i\s*(?:can(?:no|['’])t|cannot|could\s*n['’o]t|am\s+(?:unable|not\s+able)\s+to|['’]m\s+(?:unable|not\s+able)\s+to)"
    r"\s+(?:\w+\s+){0,2}?(?:determine|answer|solve|calculate|compute|tell|say|know|help|provide|give|find|access|be\s+sure|be\s+certain"
    r"|verify|confirm|work\s+(?:it\s+)?out|figure\s+(?:it\s+)?out)"
    r"|i\s*(?:won['’]t|will\s+not|['’]d\s+rather\s+not)\s+(?:\w+\s+){0,2}?(?:guess|answer|speculate|assume|make\s+up)"
    r"|i\s*(?:['’]d|\s+would)\s+need\s+(?:to\s+know|more|the|a|an)\b"
    r"|(?:never|does\s*n['’o]t|do\s*n['’o]t)\s+(?:says?|states?|specify|specifies|gives?|mentions?|tells?)\s+(?:us\s+)?(?:how|what|which|the|whether)\b"
    r"|i\s+do\s*n['’o]t\s+(?:have\s+(?:access|enough|the\s+(?:data|information|figures))|know)"
    r"|(?:can(?:no|['’])t|cannot|could\s*n['’o]t)\s+be\s+(?:determined|calculated|answered|known|computed|solved|found)"
    r"|(?:not|isn['’]t|aren['’]t|wasn['’]t|don['’]t\s+have)\s+enough\s+(?:information|info|data)"
    r"|insufficient\s+(?:information|data)"
    r"|(?:impossible|not\s+possible)\s+to\s+(?:determine|know|say|tell|answer|calculate)"
    r"|(?:is|are)\s+ambiguous|no\s+(?:unique|single|definitive)\s+answer"
    r"|i\s*(?:['’]m|\s+am)\s+(?:not\s+sure|unsure)|(?:question|problem|prompt)\s+is\s+unclear|without\s+knowing"
    r"|no\s+(?:way|means)\s+(?:to|of)\s+(?:know|tell|determine|say|work|figure)|i\s+can\s+only\s+guess|\bis\s+undefined\b"
    r"|(?:does|do)\s+not\s+have\s+a\s+(?:unique|single)\s+answer"
    r"|(?:has|have|there\s+is|there\s+are)\s+no\s+(?:solutions?|answers?)\b)",
    re.I,
)

#: Each way of declining holds one of these.
_HINT = re.compile(
    r"can|could|able|don|enough|insufficient|possible|ambiguous|unique|single|definitive|no so|no an|won|will not"
    r"|rather|need|never|doesn|sure|unclear|without|way|means|guess|undefined"
)


def refusal_in(text: str) -> re.Match[str] | None:
    """The first phrase that declines to answer, or None."""
    lower = text.lower()
    if not _HINT.search(lower):  # most texts: no look with the slow pattern
        return None
    return _REFUSAL.search(text)
