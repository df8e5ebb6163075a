"""The `dcnlab` command line (a first cut: run, validate, demo)."""

from __future__ import annotations

import html
import sys
from pathlib import Path

import pandas as pd

from . import _core
from .results import run, summary, validate

DEMO = Path(__file__).resolve().parents[2] / "experiments" / "demo.toml"


def _fail(msg: str) -> int:
    print(f"error: {msg}", file=sys.stderr)
    return 2


def _table(s: pd.DataFrame) -> str:
    cols = ["flows", "unfinished", "fct_mean", "fct_p99", "sd_mean", "sd_p50", "sd_p99"]
    return s[cols].to_string(float_format=lambda x: f"{x:,.1f}")


def demo(out: Path) -> int:
    if not DEMO.exists():
        return _fail(f"demo scenario `{DEMO}` is missing")
    text = DEMO.read_text()
    results = {}
    for label, k in (("DCTCP-RED K=200KB", "200KB"), ("DCTCP-RED K=30KB", "30KB")):
        print(f"running {label} …", flush=True)
        r = run(text.replace('threshold = "200KB"', f'threshold = "{k}"'))
        results[label] = r
        print(f"  {r.meta['flows_finished']}/{r.meta['flows_total']} flows, {r.meta['events']:,} events, "
              f"{r.meta['wall_s']:.1f} s wall")
    parts = []
    for label, r in results.items():
        s = summary(r.flows)
        print(f"\n{label}\n{_table(s)}")
        parts.append(f"<h2>{html.escape(label)}</h2>" + s.to_html(float_format=lambda x: f"{x:,.1f}"))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("<!doctype html><meta charset='utf-8'><title>dcnlab demo</title>"
                   "<h1>dcnlab demo: DCTCP-RED thresholds under RTT variation</h1>" + "".join(parts))
    print(f"\nreport: {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        print("usage: dcnlab run SCENARIO.toml [-o DIR] | dcnlab validate SCENARIO.toml | dcnlab demo")
        return 0 if args else 2
    cmd, rest = args[0], args[1:]
    try:
        if cmd == "demo":
            return demo(Path("results/demo/report.html"))
        if cmd in ("run", "validate") and rest:
            if cmd == "validate":
                validate(rest[0])
                print(f"ok: {rest[0]}")
                return 0
            r = run(rest[0])
            print(_table(summary(r.flows)))
            if "-o" in rest:
                d = r.save(rest[rest.index("-o") + 1])
                print(f"records: {d}")
            return 0
    except _core.ConfigError as e:
        return _fail(str(e))
    return _fail(f"unknown command `{' '.join(args)}`; try `dcnlab --help`")


if __name__ == "__main__":
    sys.exit(main())
