"""Write a scenario dict as TOML text (the Rust schema parses it; Python does not re-declare it)."""

from __future__ import annotations

import json
from typing import Any, Mapping


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, Mapping):
        return "{ " + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def _key(k: str) -> str:
    return k if k.replace("_", "").replace("-", "").isalnum() else json.dumps(k)


def dumps(d: Mapping[str, Any]) -> str:
    """Top-level scalars and inline tables; lists of tables as inline arrays."""
    return "\n".join(f"{_key(k)} = {_value(v)}" for k, v in d.items()) + "\n"
