#!/usr/bin/env python3
"""Point action.yml at a pushed image: the release commit's `runs.image`, pinned by digest.

On `main`, action.yml says `image: Dockerfile`, so that `uses: ./` in CI builds and tests the source.
The release workflow rewrites a copy to `image: docker://REGISTRY/NAME:TAG@sha256:DIGEST`, the digest
the push returned, so that `uses: OWNER/llm-stability-gate@vN` pulls that exact image and never builds.

    python3 scripts/pin_action_image.py --image ghcr.io/owner/llm-stability-gate:1.2.3 \\
        --digest sha256:0123...cdef [--file action.yml] [--output release/action.yml]

Only the `image:` line of the `runs:` block changes; comments, inputs, defaults and formatting are
kept byte for byte. The standard library suffices: the release job runs it without installing anything.
Exit 0 with the new reference on stdout; exit 2 with one line on stderr when the image, the digest or
the file is not what a release expects.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
# REGISTRY/PATH:TAG, lower case as registries require; no digest (it is given apart) and no scheme.
IMAGE = re.compile(
    r"(?P<name>[a-z0-9]+(?:[._-][a-z0-9]+)*(?::[0-9]+)?(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)+)"
    r":(?P<tag>[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})"
)
TOP_LEVEL_KEY = re.compile(r"^[A-Za-z_][\w-]*:")
RUNS_KEY = re.compile(r"^runs:\s*(?:#.*)?$")
IMAGE_LINE = re.compile(r"^(?P<indent>[ ]+)image:(?P<space>[ ]+)(?P<value>[^#\s][^#]*?)(?P<tail>\s*(?:#.*)?)$")
SOURCE_IMAGE = "Dockerfile"


class PinError(Exception):
    """The inputs are not what a release expects; the message is one line for the log."""


@dataclass(frozen=True)
class ImageLine:
    """Where `runs.image` is in the file and how it is written."""

    index: int
    indent: str
    space: str
    value: str
    tail: str


def image_reference(image: str, digest: str) -> str:
    """`docker://IMAGE@DIGEST`: the tag says which release it is, the digest what the runner pulls."""
    if not IMAGE.fullmatch(image):
        raise PinError(f"--image {image!r} is not REGISTRY/NAME:TAG in lower case (no scheme, no digest)")
    if not DIGEST.fullmatch(digest):
        raise PinError(f"--digest {digest!r} is not sha256: followed by 64 lower-case hex digits")
    return f"docker://{image}@{digest}"


def unquoted(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def find_image_line(lines: list[str]) -> ImageLine:
    """The one `image:` line directly under the top-level `runs:` key."""
    starts = [i for i, line in enumerate(lines) if RUNS_KEY.match(line)]
    if len(starts) != 1:
        raise PinError(f"expected one top-level `runs:` key, found {len(starts)}")
    found: list[ImageLine] = []
    block_indent: str | None = None
    for index in range(starts[0] + 1, len(lines)):
        line = lines[index]
        if TOP_LEVEL_KEY.match(line):
            break
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indent = line[: len(line) - len(line.lstrip(" "))]
        block_indent = indent if block_indent is None else block_indent
        match = IMAGE_LINE.match(line)
        if match and match["indent"] == block_indent:
            found.append(ImageLine(index, match["indent"], match["space"], match["value"], match["tail"]))
    if len(found) != 1:
        raise PinError(f"expected one `image:` line under `runs:`, found {len(found)}")
    return found[0]


def pin(text: str, reference: str) -> str:
    """The file's text with `runs.image` set to `reference`; refuses anything but `image: Dockerfile`."""
    lines = text.splitlines(keepends=True)
    bare = [line.rstrip("\r\n") for line in lines]
    where = find_image_line(bare)
    current = unquoted(where.value)
    if current != SOURCE_IMAGE:
        raise PinError(f"runs.image is {current!r}, not {SOURCE_IMAGE!r}: pin the copy of main's action.yml")
    ending = lines[where.index][len(bare[where.index]) :]
    # Quoted: a YAML plain scalar may not hold ": " or " #", and a quoted one says so plainly.
    lines[where.index] = f'{where.indent}image:{where.space}"{reference}"{where.tail}{ending}'
    return "".join(lines)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--image", required=True, help="the pushed image with its tag: REGISTRY/NAME:TAG")
    parser.add_argument("--digest", required=True, help="the digest the push returned: sha256:...")
    parser.add_argument("--file", type=Path, default=Path("action.yml"), help="the action metadata to read")
    parser.add_argument("--output", type=Path, default=None, help="where to write it (default: --file, in place)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        reference = image_reference(args.image, args.digest)
        try:
            text = args.file.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise PinError(f"cannot read {args.file}: {exc}") from exc
        pinned = pin(text, reference)
        output: Path = args.output or args.file
        try:
            output.write_bytes(pinned.encode("utf-8"))
        except OSError as exc:
            raise PinError(f"cannot write {output}: {exc}") from exc
    except PinError as exc:
        print(f"pin_action_image: {args.file}: {exc}", file=sys.stderr)
        return 2
    print(reference)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
