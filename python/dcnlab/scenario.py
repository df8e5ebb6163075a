"""Scenario files as Python dicts: load, override keys, write back as TOML, hash.

The Rust serde types are the schema; this module never re-declares it. It only moves values around by
their dotted key paths (`switch.aqm.threshold`, `traffic.0.load`) and lets the core validate the result.
"""

from __future__ import annotations

import copy
import hashlib
import json
import tomllib
from pathlib import Path
from typing import Any, Mapping

from . import _core
from .toml_out import dumps


class ScenarioError(_core.ConfigError):
    """A scenario problem found in Python (unreadable file, bad override key)."""

    def __init__(self, field: str, message: str):
        super().__init__(f"`{field}`: {message}" if field else message)
        self.field = field
        self.detail = message


def load(path: str | Path) -> dict:
    """Read a scenario file into a dict."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise ScenarioError("", f"cannot read scenario file `{p}`: {e.strerror}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError("", f"`{p}` is not valid TOML: {e}") from None


def parse_value(text: str) -> Any:
    """A value given on the command line: TOML syntax (`0.5`, `true`, `[1, 2]`, `{ kind = "sp" }`), else a
    bare string (`100KB`, `dctcp`)."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


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


def override(scenario: Mapping[str, Any], changes: Mapping[str, Any]) -> dict:
    """A copy of `scenario` with each dotted key set: `{"switch.aqm.threshold": "100KB",
    "traffic.0.load": 0.6}`. Missing tables are created; list entries are addressed by index."""
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


def to_toml(scenario: Mapping[str, Any]) -> str:
    return dumps(scenario)


def scenario_hash(scenario: Mapping[str, Any]) -> str:
    """Stable hash of a scenario's content (key order does not matter)."""
    blob = json.dumps(scenario, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]
