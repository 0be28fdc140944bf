"""Untrusted model text made inert for GitHub-flavoured Markdown, checked with GitHub's own renderer."""

from __future__ import annotations

import html

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options
from hypothesis import given, settings
from hypothesis import strategies as st

from stabilitygate.report.safe_text import ZWJ, bar, cell, clean, fence, html_text, inline, marker_name, no_pings

EXTENSIONS = ["table", "autolink", "strikethrough", "tasklist"]  # tagfilter left out on purpose


def render(markdown: str) -> str:
    """GitHub's cmark fork with raw HTML let through: whatever we fail to escape would show."""
    return cmarkgfm.markdown_to_html_with_extensions(markdown, options=Options.CMARK_OPT_UNSAFE, extensions=EXTENSIONS)


@pytest.mark.parametrize(
    "text",
    ["plain", "a ``` b", "````", "```\n</details>\n```", "`x` and ``y``", "", "ends with `", "\n\n```python\n"],
)
def test_fence_holds_any_backtick_run(text: str) -> None:
    rendered = render(fence(text))
    assert rendered.count("<pre>") == 1
    body = rendered.split("<code", 1)[1].split(">", 1)[1].rsplit("</code></pre>", 1)[0]
    assert html.unescape(body) == (text if text.endswith("\n") or not text else text + "\n")


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("`~ \nab<>/&|@")), max_size=60))
def test_fence_property(text: str) -> None:
    rendered = render(fence(text) + "\n\nafter")
    assert rendered.count("<pre>") == 1 and rendered.rstrip().endswith("<p>after</p>")


def test_inline_keeps_html_as_text() -> None:
    for hostile in ("<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "</details><details open>"):
        rendered = render(inline(hostile))
        assert "<script" not in rendered and "<img" not in rendered and "<details" not in rendered
        assert html.unescape(rendered).strip() == f"<p>{hostile}</p>"


def test_inline_neutralises_markdown_syntax() -> None:
    rendered = render("- " + inline("# **bold** [link](http://x) ~~gone~~ `code` $x$ | _i_"))
    for tag in ("<h1", "<strong", "<a ", "<del", "<code", "<em"):
        assert tag not in rendered
    assert render(inline("1. not a list")).startswith("<p>1. not a list")
    assert "<li>" not in render(inline("- not a list"))


def test_urls_in_model_text_are_not_links() -> None:
    rendered = render(inline("see https://evil.example/login or www.evil.example"))
    assert "<a " not in rendered
    assert "https://evil.example/login or www.evil.example" in rendered


def test_cell_cannot_break_the_table() -> None:
    table = "| a | b |\n| --- | --- |\n| " + cell("x | y\nz") + " | ok |\n"
    rendered = render(table)
    assert rendered.count("<td>") == 2 and "ok</td>" in rendered
    assert "x | y ⏎ z" in html.unescape(rendered)


def test_cell_is_short() -> None:
    assert len(cell("x" * 500)) == 81 and cell("x" * 500).endswith("…")


def test_mentions_and_issue_references_cannot_ping() -> None:
    assert no_pings("@org/team and @bob, see #12") == f"@{ZWJ}org/team and @{ZWJ}bob, see #{ZWJ}12"
    assert "@org/team" not in render(inline("cc @org/team"))
    assert "@org" not in html_text("@org")
    assert "#12" not in html.unescape(render(inline("fixes #12")))


@pytest.mark.parametrize("reference", ["GH-123", "gh-7", "Gh-42"])
def test_gh_references_cannot_link_like_issue_numbers(reference: str) -> None:
    prefix, number = reference.split("-")
    assert no_pings(f"see {reference}.") == f"see {prefix}-{ZWJ}{number}."
    assert reference not in html.unescape(render(inline(f"fixes {reference}")))
    assert reference not in html_text(f"fixes {reference}")
    assert no_pings("HIGH-5 and GH-x stay as they are") == "HIGH-5 and GH-x stay as they are"


def test_clean_removes_controls_and_bidi_overrides() -> None:
    assert clean("a\x00b\x1b[31mc\r\nd\re\u202eevil\ud800") == "ab[31mc\nd\ne\ufffdevil\ufffd"
    assert clean("tab\tkept\n") == "tab\tkept\n"


def test_html_text_escapes_for_summary_elements() -> None:
    assert html_text('<b a="1">x</b>') == "&lt;b a=&quot;1&quot;&gt;x&lt;/b&gt;"


@pytest.mark.parametrize(
    ("count", "total", "shown"),
    [
        (8, 10, "████████░░ 8/10"),
        (10, 10, "██████████ 10/10"),
        (0, 10, "░░░░░░░░░░ 0/10"),
        (1, 100, "█░░░░░░░░░ 1/100"),
        (99, 100, "█████████░ 99/100"),
        (0, 0, "░░░░░░░░░░ 0/0"),
    ],
)
def test_bar(count: int, total: int, shown: str) -> None:
    assert bar(count, total) == shown


def test_marker_name_cannot_end_the_comment() -> None:
    assert marker_name("checkout assistant") == "checkout-assistant"
    assert marker_name("a -->b<!--") == "a-b"
    assert "--" not in marker_name("x--y") and marker_name("!!!") == "suite"


def shown_text(rendered: str) -> str:
    """The text of the one <pre> block, as a browser shows it (entities decoded, joiners dropped)."""
    body = rendered.split("<pre", 1)[1].split(">", 1)[1].rsplit("</pre>", 1)[0]
    # In a raw <pre>, the browser drops the line break right after the tag.
    inner = body.split(">", 1)[1].rsplit("</code>", 1)[0] if body.startswith("<code") else body.removeprefix("\n")
    return html.unescape(inner).replace(ZWJ, "")


def as_written(text: str) -> str:
    """What the block holds: the text, cleaned, ending with one line break."""
    text = clean(text)
    return text if text.endswith("\n") or not text else text + "\n"


@pytest.mark.parametrize(
    "text",
    [
        "`" * 255,
        "x\n" + "`" * 255 + "\n</details>\n## pass",
        "`" * 254,
        "x\n" + "`" * 600 + "\nafter",
        "~" * 255 + "\n" + "`" * 255,
        "   " + "`" * 255 + "   \n" + "    " + "~" * 999 + "\n<img src=x>",
        "`" * 255 + "~" * 255,
        "\t~~~\n```\n" * 3,
    ],
    ids=["255", "255-then-html", "254", "600", "255-of-both", "indented-of-both", "one-line-of-both", "tabs"],
)
def test_no_run_of_any_length_closes_the_block(text: str) -> None:
    """cmark-gfm keeps 255 of a fence's characters: a longer run cannot be outrun (issue 25, item 2)."""
    rendered = render(fence(text) + "\n\nafter")
    assert rendered.count("<pre") == 1 and rendered.rstrip().endswith("<p>after</p>")
    assert "<img" not in rendered and "<h2" not in rendered and "</details>" not in rendered
    assert shown_text(rendered) == as_written(text)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(["`", "~"]).flatmap(lambda c: st.integers(250, 300).map(lambda n: c * n)),
            st.sampled_from(["\n", " ", "x", "<b>", "&amp;", "@org", "```", "~~~"]),
        ),
        max_size=12,
    ).map("".join)
)
def test_fence_property_with_runs_past_the_cap(text: str) -> None:
    rendered = render(fence(text) + "\n\nafter")
    assert rendered.count("<pre") == 1 and rendered.rstrip().endswith("<p>after</p>")
    assert shown_text(rendered) == as_written(text)
