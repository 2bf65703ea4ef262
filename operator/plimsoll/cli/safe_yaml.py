"""Reading a spec file defensively: size, encoding, duplicate keys, nesting, alias bombs.

A CapacityTest file is user input, and YAML is generous: PyYAML lets the last of two
equal keys win without a word, builds a document nested 10,000 deep until Python's
recursion limit breaks, and expands a 1 KB "billion laughs" of aliases into
billions of values when the spec is written out (the report, the status). So
before a document reaches the models it must be:

- at most `MAX_FILE_BYTES` (checked before reading, so a 50 MB file costs nothing);
- UTF-8 text (the error gives the byte offset and line);
- free of duplicate keys in any mapping;
- at most `MAX_DEPTH` levels deep and `MAX_VALUES` values once aliases are expanded.

Each failure is a `SpecError` line naming the file, the place and the fix.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
import yaml.reader
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, SequenceNode

from plimsoll.api.resource import SpecError

MAX_FILE_BYTES = 1024 * 1024
MAX_DEPTH = 64
MAX_VALUES = 100_000
_MERGE = "tag:yaml.org,2002:merge"


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key repeated in one mapping."""

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == _MERGE:
                continue  # '<<' merges are meant to be overridden
            key = self.construct_object(key_node, deep=True)
            try:
                repeated = key in seen
                seen.add(key)
            except TypeError:
                continue  # an unhashable key: the base class reports it
            if repeated:
                raise ConstructorError(
                    None,
                    None,
                    f"the key {key!r} appears twice in one mapping (the last would silently "
                    "win): keep one",
                    key_node.start_mark,
                )
        return super().construct_mapping(node, deep=deep)


def _check_shape(node: Node) -> str | None:
    """Why the document is too deep or too large once aliases are expanded, or None."""
    stack: list[tuple[Node, int]] = [(node, 1)]
    values = 0
    while stack:
        current, depth = stack.pop()
        values += 1
        if values > MAX_VALUES:
            return (
                f"expands to more than {MAX_VALUES:,} values, most likely through YAML "
                "aliases (*name): write the values out, or use fewer aliases"
            )
        if depth > MAX_DEPTH:
            mark = current.start_mark
            return f"line {mark.line + 1}: nested more than {MAX_DEPTH} levels deep"
        if isinstance(current, SequenceNode):
            stack.extend((child, depth + 1) for child in current.value)
        elif isinstance(current, MappingNode):
            for key, value in current.value:
                stack.extend(((key, depth + 1), (value, depth + 1)))
    return None


def read_text(path: Path) -> str:
    """The file's text, refused up front when too large or not UTF-8."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise SpecError(
                [
                    f"{path}: {size:,} bytes is more than a CapacityTest needs (at most "
                    f"{MAX_FILE_BYTES:,}): is this the right file?"
                ]
            )
        with path.open("rb") as file:
            raw = file.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise SpecError([f"{path}: cannot read the file ({exc.strerror})"]) from exc
    if len(raw) > MAX_FILE_BYTES:  # a pipe or a file still growing
        raise SpecError([f"{path}: more than {MAX_FILE_BYTES:,} bytes: is this the right file?"])
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise SpecError(
            [
                f"{path}: not UTF-8 text: byte 0x{raw[exc.start]:02x} at offset {exc.start} "
                f"(line {line}); save the file as UTF-8"
            ]
        ) from exc


def _unreadable_character(path: Path, text: str, exc: yaml.reader.ReaderError) -> str:
    """A character YAML may not hold (a control character, U+FFFE), with its place."""
    line = text.count("\n", 0, exc.position) + 1
    code = exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1] or "?")
    return (
        f"{path}: line {line}: the character U+{code:04X} is not allowed in YAML (a control "
        "character or a non-character): delete it, or write it as an escape such as "
        '"\\x07" inside double quotes'
    )


def load_documents(path: Path, text: str) -> list[Any]:
    """Every YAML document in `text`, each checked for shape before it is built."""
    try:
        loader = _StrictLoader(text)
    except yaml.reader.ReaderError as exc:
        raise SpecError([_unreadable_character(path, text, exc)]) from exc
    documents: list[Any] = []
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            problem = _check_shape(node)
            if problem:
                raise SpecError([f"{path}: document {len(documents) + 1} {problem}"])
            document = loader.construct_document(node)
            if document is not None:
                documents.append(document)
    except yaml.reader.ReaderError as exc:
        raise SpecError([_unreadable_character(path, text, exc)]) from exc
    except yaml.YAMLError as exc:
        raise SpecError([f"{path}: not valid YAML: {exc}"]) from exc
    except RecursionError as exc:
        raise SpecError(
            [f"{path}: nested too deeply to read (at most {MAX_DEPTH} levels)"]
        ) from exc
    finally:
        loader.dispose()
    return documents
