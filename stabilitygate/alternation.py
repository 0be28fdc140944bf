"""One regular expression for many literal words, built as a trie.

At each position the engine follows one branch per next character instead of trying every word in
turn (hundreds of them, for a runner's secrets or the number words): several times faster to scan.
The longer branch is tried first, so a word that contains another is matched whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TypeAlias

#: A trie of characters: each key one character ("" marks a word that ends there).
Trie: TypeAlias = dict[str, "Trie"]


def trie_pattern(words: Iterable[str]) -> str:
    """A pattern (`re` syntax, not compiled) matching exactly `words`: "fo(?:rty|ur)"."""
    root: Trie = {}
    for word in words:
        node = root
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}
    return _node_pattern(root)


def _node_pattern(node: Trie) -> str:
    ends = "" in node
    branches = []
    for char in sorted(k for k in node if k):
        child, run = node[char], char
        while len(child) == 1 and "" not in child:  # a chain of single children: one literal
            (following,) = child
            run, child = run + following, child[following]
        branches.append(re.escape(run) + _node_pattern(child))
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    return f"(?:{body})?" if ends else body
