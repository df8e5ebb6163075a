"""Scenarios in Python: a user's file with overrides (`FileScenario`: the core reads the file's own text,
so its errors name the user's lines) or a dict (`load`, `override`), and their hash.

The Rust serde types are the schema; this module never re-declares it. It only moves values around by
their dotted key paths (`switch.aqm.threshold`, `traffic.0.load`) and lets the core validate the result.
"""

from __future__ import annotations

import copy
import hashlib
import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from . import _core


class ScenarioError(_core.ConfigError):
    """A scenario problem found in Python (unreadable file, bad override key)."""

    def __init__(self, field: str, message: str):
        super().__init__(f"`{field}`: {message}" if field else message)
        self.field = field
        self.detail = message

    def __reduce__(self):  # rebuilt whole in the process a worker (a pool's or Ray's) sends it to
        return (type(self), (self.field, self.detail))


def read_text(path: str | Path) -> str:
    """A scenario file's text; a file that is not UTF-8 text (binary, UTF-16) is one clear error."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as e:
        raise ScenarioError("", f"cannot read scenario file `{p}`: {e.strerror}") from None
    kind = None
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff") or b"\x00" in raw[:2]:
        kind = "UTF-16 text"
    elif b"\x00" in raw:
        kind = "a binary file"
    if kind:
        raise ScenarioError("", f"`{p}` is {kind}, not a TOML scenario: save it as UTF-8 text")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ScenarioError("", f"`{p}` is not UTF-8 text (byte {e.start} cannot be read): save it as UTF-8") from None


def parse_toml(text: str, what: str) -> dict:
    """TOML text as a dict; invalid or absurdly nested text is one clear error."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError("", f"{what} is not valid TOML: {e}") from None
    except RecursionError:
        raise ScenarioError("", f"{what} is not valid TOML: it nests tables or lists too deeply") from None


def load(path: str | Path) -> dict:
    """Read a scenario file into a dict."""
    return parse_toml(read_text(path), f"`{Path(path)}`")


@dataclass(frozen=True)
class FileScenario:
    """A user's scenario file and the overrides (`--set`, sweep grid points) applied to it: the core
    reads the file's own text with the overrides written into it, so an error names the user's line.
    An override's value is a string in the command line's rule (TOML syntax, else a bare string) or
    any other value as it is."""

    path: Path
    text: str
    overrides: tuple[tuple[str, Any], ...] = ()

    @staticmethod
    def open(path: str | Path) -> "FileScenario":
        p = Path(path)
        text = read_text(p)
        parse_toml(text, f"`{p}`")
        return FileScenario(p, text)

    def with_overrides(self, changes: Mapping[str, Any]) -> "FileScenario":
        return FileScenario(self.path, self.text, self.overrides + tuple(changes.items()))

    def as_dict(self) -> dict:
        """The scenario with its overrides, as a dict (what the core reads, for looking things up)."""
        vals = {k: parse_value(v) if isinstance(v, str) else v for k, v in self.overrides}
        return override(parse_toml(self.text, f"`{self.path}`"), vals)

    @property
    def base_dir(self) -> str:
        return str(self.path.resolve().parent)


def parse_value(text: str) -> Any:
    """A value given on the command line: TOML syntax (`0.5`, `true`, `[1, 2]`, `{ kind = "sp" }`), else a
    bare string (`100KB`, `dctcp`) — the rule the core applies to overrides too."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except (tomllib.TOMLDecodeError, RecursionError):
        return text.strip()


def _step(node: Any, key: str, path: str, create: bool) -> Any:
    if isinstance(node, list):
        if not key.isdigit() or int(key) >= len(node):
            raise ScenarioError(path, f"`{key}` is not an index of this list (0–{len(node) - 1})")
        return node[int(key)]
    if isinstance(node, dict):
        if key not in node:
            if not create:
                raise ScenarioError(path, f"no key `{key}` here")
            node[key] = {}
        return node[key]
    raise ScenarioError(path, "this value has no keys below it")


def override(scenario: "Mapping[str, Any] | FileScenario", changes: Mapping[str, Any]) -> "dict | FileScenario":
    """A copy of `scenario` with each dotted key set: `{"switch.aqm.threshold": "100KB",
    "traffic.0.load": 0.6}`. Missing tables are created; list entries are addressed by index. A
    `FileScenario` keeps the changes as overrides of its text."""
    if isinstance(scenario, FileScenario):
        return scenario.with_overrides(changes)
    out = copy.deepcopy(dict(scenario))
    for dotted, value in changes.items():
        parts = dotted.split(".")
        node: Any = out
        for i, k in enumerate(parts[:-1]):
            node = _step(node, k, ".".join(parts[: i + 1]), create=True)
        last = parts[-1]
        if isinstance(node, list):
            if not last.isdigit() or int(last) >= len(node):
                raise ScenarioError(dotted, f"`{last}` is not an index of this list")
            node[int(last)] = value
        elif isinstance(node, dict):
            node[last] = value
        else:
            raise ScenarioError(dotted, "this value has no keys below it")
    return out


def get(scenario: Mapping[str, Any], dotted: str) -> Any:
    node: Any = scenario
    for i, k in enumerate(dotted.split(".")):
        node = _step(node, k, ".".join(dotted.split(".")[: i + 1]), create=False)
    return node


def scenario_hash(scenario: "Mapping[str, Any] | FileScenario") -> str:
    """Stable hash of a scenario's content (key order does not matter; a file with overrides hashes as
    the dict it amounts to)."""
    if isinstance(scenario, FileScenario):
        scenario = scenario.as_dict()
    blob = json.dumps(scenario, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]
