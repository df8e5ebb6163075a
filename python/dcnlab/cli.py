"""The `dcnlab` command line: run, summary, compare, plot, report, validate, schema, sweep, reproduce, train, tune,
demo.

Every bad input ends in one line naming the field and the fix, with exit code 2 (`--debug` shows the
traceback)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from . import _core
from .results import Interrupted, Result, SimulationFailed, load, run, summary
from .reproduce import PAPERS
from .scenario import FileScenario, ScenarioError, load as load_scenario, override

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="dcnlab: datacenter congestion-control simulator",
)
# Tables need ~110 columns; a pipe or file gets that width instead of rich's default 80.
console = Console(width=None if sys.stdout.isatty() else 120)
err = Console(stderr=True, width=None if sys.stderr.isatty() else 120)
STATE = {"debug": False}


class UserError(Exception):
    """A problem with what the user gave us: one line, exit 2."""


@app.callback()
def main_opts(debug: bool = typer.Option(False, "--debug", help="Show tracebacks on errors.")) -> None:
    STATE["debug"] = debug


def _sets(sets: List[str]) -> dict:
    """`--set key=value` options as overrides; the core reads each value by the command-line rule (TOML
    syntax, else a bare string) and names the override in its errors."""
    out = {}
    for s in sets:
        if "=" not in s:
            raise ScenarioError("--set", f"`{s}` is not key=value (e.g. switch.aqm.threshold=100KB)")
        k, v = s.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def _stop_us(sc: dict) -> float | None:
    stop = sc.get("stop", {})
    t = stop.get("time") or stop.get("max_time")
    try:
        return _core.parse_time_us(t) if isinstance(t, str) else None
    except _core.ConfigError:
        return None


def _human(b: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if b < 1024 or unit == "PiB":
            return f"{b:,.0f} {unit}" if unit == "B" else f"{b:,.1f} {unit}"
        b /= 1024
    return f"{b:,.1f} EiB"


FORCE_HELP = "Run even when the memory estimate exceeds the memory available."


def _check_memory(estimates: list[tuple[str, dict]], force: bool, at_once: int = 1, show: bool = False) -> None:
    """Refuse (exit 2) when the scenarios that run at once need more memory than the machine has
    available (`MemAvailable`; no check where the system does not say), printing the estimate and
    `--force`. A scenario the engine cannot hold whatever the memory is refused here too, before anything
    is built. `show` prints every estimate (validate)."""
    avail = _core.available_memory()
    largest = sorted(estimates, key=lambda e: e[1]["bytes"], reverse=True)
    need = sum(e["bytes"] for _, e in largest[: max(at_once, 1)])
    too_big = avail is not None and need > avail and not force
    limited = [x for x in estimates if x[1]["limit"] is not None]
    shown = estimates if show else limited[:1] or (largest[:1] if too_big else [])
    for label, e in shown:
        console.print(f"estimate for {label}: {e['text']}", markup=False, highlight=False, soft_wrap=True)
    if limited:
        raise UserError(limited[0][1]["limit"][1])
    if too_big:
        runs = f"{min(at_once, len(estimates))} runs at once need" if at_once > 1 else "it needs"
        raise UserError(
            f"refused: {runs} about {_human(need)} of memory but {_human(avail)} is available (estimate above); "
            "make the scenario smaller, or pass --force to run it anyway"
        )


def summary_table(res: Result, title: str) -> Table:
    s = summary(res)
    t = Table(title=title, title_justify="left")
    cols = ["flows", "unfinished", "fct_mean", "fct_p50", "fct_p99", "sd_mean", "sd_p50", "sd_p99"]
    t.add_column("bucket")
    for c in cols:
        t.add_column(c.replace("sd_", "slowdown ").replace("fct_", "FCT µs "), justify="right")
    for b, row in s.iterrows():
        t.add_row(str(b), *[f"{row[c]:,.0f}" if c in ("flows", "unfinished") or c.startswith("fct") else f"{row[c]:,.2f}" for c in cols])
    return t


def comparison_table(c, title: str) -> Table:
    """A rich table of report.compare_table's frame: one row per (bucket, statistic), one column per run."""
    t = Table(title=title, title_justify="left")
    t.add_column("bucket")
    t.add_column("statistic")
    for col in c.columns:
        t.add_column(str(col), justify="right")
    for (b, stat), row in c.iterrows():
        t.add_row(str(b), stat, *[f"{v:,.2f}" for v in row.to_numpy()])
    return t


def run_with_progress(scenario, base_dir: str | None, label: str, flows_total: int | None = None) -> Result:
    """Run with a live line on stderr (refreshed every half second of wall time: simulated time, flows
    done / started / in all — the estimate's count —, events per second). Ctrl-C raises `Interrupted`
    with the records so far."""
    total = _stop_us(scenario.as_dict() if isinstance(scenario, FileScenario) else scenario)
    start = time.perf_counter()
    prog = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.fields[sim]}"),
        TextColumn("{task.fields[flows]}"),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    )
    task = prog.add_task(label, total=total or None, sim="", flows="", rate="")

    def cb(t_us: float, done: int, started: int, events: int) -> None:
        if not prog.live.is_started:  # shown from the first report on: a scenario error leaves no trace
            prog.start()
        el = max(time.perf_counter() - start, 1e-9)
        prog.update(
            task,
            completed=min(t_us, total or t_us),
            sim=f"{t_us / 1000:,.1f} ms simulated",
            flows=f"{done:,} done, {started:,} started" + (f" of {flows_total:,} flows" if flows_total else " flows"),
            rate=f"{events / el / 1e6:,.2f} M events/s",
        )

    try:
        return run(scenario, progress=cb, progress_every_s=0.5, base_dir=base_dir)
    finally:
        prog.stop()


@app.command("run")
def run_cmd(
    scenario: Path = typer.Argument(..., help="Scenario TOML file."),
    out: Optional[Path] = typer.Option(None, "-o", "--out", help="Write records (Parquet + meta.json) here."),
    set_: List[str] = typer.Option([], "--set", help="Override a key: --set switch.aqm.threshold=100KB"),
    force: bool = typer.Option(False, "--force", help=FORCE_HELP),
) -> None:
    """Run a scenario: progress bar, then the summary table."""
    from .results import estimate

    sc = override(FileScenario.open(scenario), _sets(set_))
    est = estimate(sc)
    _check_memory([(str(scenario), est)], force)
    _writable(out)
    try:
        res = run_with_progress(sc, None, scenario.stem, est["flows"])
    except Interrupted as e:
        res = e.result
        m = res.meta
        if out:
            res.save(out)
        err.print(f"interrupted at {m['sim_time_us'] / 1000:,.1f} ms simulated: {m['flows_finished']}/{m['flows_total']} flows "
                  f"finished" + (f"; the records so far are in {out} (meta.interrupted = true)" if out else ""),
                  markup=False, highlight=False, soft_wrap=True)
        raise SystemExit(130) from None
    except SimulationFailed as e:
        if out:
            e.result.save(out)
        err.print(f"error: {e}" + (f" (the records until then are in {out})" if out else ""), markup=False, highlight=False, soft_wrap=True)
        raise SystemExit(3) from None
    m = res.meta
    console.print(
        f"{m['name']}: {m['flows_finished']}/{m['flows_total']} flows, {m['sim_time_us'] / 1000:,.1f} ms simulated, "
        f"{m['events']:,} events in {m['wall_s']:.1f} s"
    )
    console.print(summary_table(res, "summary"))
    if out:
        res.save(out)
        console.print(f"records: {out}")


def _writable(out: Path | None, what: str = "-o") -> None:
    """Check before a run that its results can be written where asked (not after it has finished): the
    folder is made, and a file written in it and removed."""
    if out is None:
        return
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise UserError(f"`{what}`: `{out}` is a file; give a folder for the results")
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".dcnlab-write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as e:
        raise UserError(f"`{what}`: cannot write results under `{out}` ({e.strerror}); choose another folder") from None


def _load_dir(d: Path) -> Result:
    return load(d)  # DamagedResult (a ConfigError) names the folder and the file


@app.command("summary")
def summary_cmd(directory: Path = typer.Argument(..., help="A results folder.")) -> None:
    """The summary table of saved results."""
    console.print(summary_table(_load_dir(directory), str(directory)))


@app.command("compare")
def compare_cmd(directories: List[Path] = typer.Argument(..., help="Results folders; ratios are to the first.")) -> None:
    """Side-by-side summary of several runs, with ratios to the first."""
    from .report import compare_table

    runs = {str(d): _load_dir(d) for d in directories}
    console.print(comparison_table(compare_table(runs), "comparison (× = ratio to the first run)"))


@app.command("plot")
def plot_cmd(
    directories: List[Path] = typer.Argument(..., help="Results folders."),
    out: Path = typer.Option(Path("plots"), "-o", "--out", help="Folder for the PNG and SVG files."),
) -> None:
    """FCT CDFs, slowdown by size bucket, queue occupancy and link utilisation (PNG and SVG)."""
    from .plots import plot_all

    runs = {d.name or str(d): _load_dir(d) for d in directories}
    for label, r in runs.items():
        if not r.flows["finished"].any():
            err.print(f"note: no flow finished in {label}; its FCT and slowdown figures are empty", markup=False, highlight=False)
    for p in plot_all(runs, out):
        console.print(str(p))


@app.command("report")
def report_cmd(
    directories: List[Path] = typer.Argument(..., help="Results folders."),
    out: Path = typer.Option(Path("report.html"), "-o", "--out", help="The HTML file to write."),
) -> None:
    """One self-contained HTML page with the tables and figures."""
    from .report import write_report

    runs = {d.name or str(d): _load_dir(d) for d in directories}
    console.print(f"report: {write_report(runs, out)}")


@app.command("validate")
def validate_cmd(
    scenario: Path = typer.Argument(..., help="Scenario TOML file."),
    force: bool = typer.Option(False, "--force", help="Build the scenario even when the memory estimate exceeds the memory available."),
) -> None:
    """Parse and check a scenario without running it, and print what it will hold (memory estimate)."""
    from .results import estimate, validate

    _check_memory([(str(scenario), estimate(scenario))], force, show=True)
    validate(scenario)
    console.print(f"ok: {scenario}")


@app.command("schema")
def schema_cmd(
    markdown: bool = typer.Option(False, "--markdown", help="Print docs/records.md (Markdown) instead of a table."),
) -> None:
    """The record tables and their columns (type, unit, meaning), as the core declares them."""
    from .tables import markdown as records_markdown, schema

    if markdown:
        sys.stdout.write(records_markdown())
        return
    t = Table(title="record tables (docs/records.md)", title_justify="left")
    for c in ("table", "column", "type", "unit", "meaning"):
        t.add_column(c)
    for row in schema().itertuples(index=False):
        t.add_row(*(escape(v) for v in row))
    console.print(t)


BACKEND_HELP = "Where the runs go: local (a process pool here) or ray (a Ray cluster; the extra dcnlab[ray])."
ADDRESS_HELP = "With --backend ray: a running cluster (auto, HOST:PORT or ray://HOST:10001); default a new local one."


def _runs_progress(every_s: float = 2.0):
    """A progress callback for runners: `runs 12/40 (30 %), 35 s` on stderr, at most every `every_s`
    seconds and when a batch completes."""
    t0 = time.perf_counter()
    last = [0.0]

    def cb(done: int, total: int) -> None:
        now = time.perf_counter() - t0
        if done == total or now - last[0] >= every_s:
            last[0] = now
            err.print(f"runs {done}/{total} ({100 * done / max(total, 1):.0f} %), {now:.0f} s", highlight=False)

    return cb


def _runner(backend: str, jobs: int, address: Optional[str]):
    from .sweep import make_runner

    return make_runner(backend, jobs or None, address, progress=_runs_progress(), log=lambda m: err.print(m, highlight=False))


@app.command("sweep")
def sweep_cmd(
    base: Path = typer.Argument(..., help="Base scenario TOML file."),
    grid: List[str] = typer.Option([], "--grid", help="key=[v1,v2,…]; repeat for more keys."),
    seeds: Optional[int] = typer.Option(None, "--seeds", min=1, help="Seeds per combination (default 1; not with a grid over `seed`)."),
    jobs: int = typer.Option(0, "-j", "--jobs", min=0, help="Parallel runs (default: all cores)."),
    out: Path = typer.Option(Path("results/sweep"), "-o", "--out", help="Results folder (runs are cached here)."),
    set_: List[str] = typer.Option([], "--set", help="Override a key of the base scenario."),
    force: bool = typer.Option(False, "--force", help=FORCE_HELP),
    backend: str = typer.Option("local", "--backend", help=BACKEND_HELP),
    address: Optional[str] = typer.Option(None, "--address", help=ADDRESS_HELP),
) -> None:
    """Every combination of the grid × seeds, on all cores or a Ray cluster; one table with mean and 95% CI
    across seeds."""
    import itertools
    import os

    from .results import estimate
    from .sweep import parse_grid, sweep

    sc = override(FileScenario.open(base), _sets(set_))
    g = dict(parse_grid(s) for s in grid)
    # Every combination is counted before any is built; the runs that share the machine at once must fit
    # (on a cluster, one run per worker).
    base_dir = str(base.resolve().parent)
    combos = [dict(zip(g, c)) for c in itertools.product(*g.values())]
    ests = [(f"{base} " + " ".join(f"{k}={v}" for k, v in c.items()), estimate(override(sc, c), base_dir)) for c in combos]
    at_once = 1 if backend == "ray" else min(jobs or os.cpu_count() or 1, len(combos) * (seeds or 1))
    _check_memory(ests, force, at_once=at_once)
    _writable(out)
    runner = _runner(backend, jobs, address)
    t0 = time.perf_counter()
    try:
        runs, agg = sweep(
            sc, g, seeds=seeds, out=out, runner=runner, base_dir=base_dir,
            on_done=lambda todo, total: err.print(f"{todo} of {total} runs computed, {total - todo} from cache"),
        )
    finally:
        runner.close()
    t = Table(title=f"sweep: {len(runs)} runs in {time.perf_counter() - t0:.1f} s ({out})", title_justify="left")
    keys = list(g)
    show = ["all:fct_mean", "all:sd_mean", "all:sd_p99", "(0B, 100KB]:sd_p99", "(10MB, inf]:fct_mean"]
    for k in keys + ["runs"]:
        t.add_column(k)
    for c in show:
        t.add_column(c.replace(":", "\n"), justify="right")
    for _, row in agg.iterrows():
        cells = [str(row[k]) for k in keys] + [str(row["runs"])]
        for c in show:
            ci = row.get(c + " ±95%")
            cells.append(f"{row[c]:,.2f}" + (f" ± {ci:,.2f}" if ci == ci and ci is not None else ""))
        t.add_row(*cells)
    console.print(t)


@app.command("reproduce")
def reproduce_cmd(
    paper: str = typer.Argument(..., help=f"Which paper: {', '.join(PAPERS)}."),
    scale: str = typer.Option("small", "--scale", help="A preset of experiments/PAPER/scales.toml: small (minutes, for a laptop) or paper (full size)."),
    jobs: int = typer.Option(0, "-j", "--jobs", min=0, help="Parallel runs (default: all cores)."),
    out: Optional[Path] = typer.Option(None, "-o", "--out", help="Results folder (default results/PAPER)."),
    only: Optional[str] = typer.Option(None, "--only", help="Comma-separated experiments to run (default: all)."),
    backend: str = typer.Option("local", "--backend", help=BACKEND_HELP),
    address: Optional[str] = typer.Option(None, "--address", help=ADDRESS_HELP),
) -> None:
    """Run a paper's experiments, write its figures next to the paper's numbers, and an HTML report."""
    from . import reproduce

    _writable(out)
    names = [x.strip() for x in only.split(",") if x.strip()] if only else None
    try:
        reproduce.check(paper, scale, names)
    except reproduce.UnknownName as e:
        raise UserError(str(e)) from None
    runner = _runner(backend, jobs, address)
    try:
        reproduce.reproduce(paper, scale, out, log=lambda m: console.print(m), only=names, runner=runner)
    finally:
        runner.close()


@app.command("train")
def train_cmd(
    scenario: Path = typer.Argument(..., help="Scenario TOML with switch.controller = { kind = \"acc\" } and a `load` on its first traffic entry."),
    out: Path = typer.Option(..., "-o", "--out", help="The model file to write (and to continue from if it exists)."),
    episodes: int = typer.Option(12, "--episodes", help="Episodes (one run each, fresh seed)."),
    episode: str = typer.Option("200ms", "--episode", help="Simulated time per episode."),
    loads: str = typer.Option("0.3,0.5,0.7,0.9", "--loads", help="Loads the episodes cycle through."),
    workloads: str = typer.Option("web_search,data_mining,hadoop", "--workloads", help="Size distributions the episodes cycle through ('' keeps the scenario's)."),
    explore: float = typer.Option(0.6, "--explore", help="Share of the episodes over which ε decays from 1.0 to 0.05."),
    set_: List[str] = typer.Option([], "--set", help="Override a key of the scenario."),
) -> None:
    """Pre-train ACC's shared model offline over a pool of episodes (spec/acc.md §6) and write it."""
    from .train import train

    try:
        lv = [float(x) for x in loads.split(",") if x.strip()]
    except ValueError:
        raise ScenarioError("--loads", f"`{loads}` is not a list of numbers, e.g. 0.3,0.5,0.7,0.9") from None
    wl = [w.strip() for w in workloads.split(",") if w.strip()] or None
    sc = override(FileScenario.open(scenario), _sets(set_))

    def shown(e: int, row: dict) -> None:
        err.print(
            f"episode {e + 1}/{episodes}: load {row['load']:.1f} {row['workload']}, ε from {row['epsilon']:.2f}, {row['decisions']} decisions, "
            f"mean reward {row['mean_reward']:.3f}, mean loss {row['mean_loss']:.4f}, {row['wall_s']:.1f} s"
        )

    table = train(sc, out, episodes, episode, lv, wl, progress=shown, explore=explore)
    console.print(f"model written to {out} ({out.stat().st_size:,} bytes) after {len(table)} episodes")


@app.command("tune")
def tune_cmd(
    rate: str = typer.Option(..., "--rate", help="Link rate of the fabric, e.g. 10Gbps."),
    rtt: str = typer.Option(..., "--rtt", help="RTT samples in µs, one a line, or a CDF file (`rtt_us cumulative_probability`, data/rtt/ format)."),
    transport: str = typer.Option(..., "--transport", help="dctcp, ecn_star or dcqcn (RoCE over PFC)."),
    workload: str = typer.Option("web_search", "--workload", help="web_search, data_mining, hadoop, storage, google_rpc or a flow-size CDF file."),
    loads: str = typer.Option("0.3,0.6,0.9", "--loads", help="Loads of the leaf uplinks to verify at."),
    flows: int = typer.Option(2000, "--flows", min=1, help="Flows per run."),
    seeds: int = typer.Option(1, "--seeds", min=1, help="Seeds per candidate and load."),
    jobs: int = typer.Option(0, "-j", "--jobs", min=0, help="Parallel runs (default: all cores)."),
    out: Path = typer.Option(Path("results/tune"), "-o", "--out", help="Results folder (runs are cached here)."),
    no_verify: bool = typer.Option(False, "--no-verify", help="Print the settings by the rules only; simulate nothing."),
    lam: float = typer.Option(1.0, "--lam", help="λ of K = λ·C·RTT (1: ECN♯'s numbers; DCTCP's bound is 1/7)."),
    percentile: float = typer.Option(90.0, "--percentile", help="The high RTT percentile of \"Tail\" (ECN♯ §2.3: 90)."),
    tolerance: float = typer.Option(0.10, "--tolerance", help="How far above the best large-flow mean FCT a recommended setting may be."),
    fabric: str = typer.Option("8x8x16", "--fabric", help="SPINESxLEAVESxHOSTS_PER_LEAF of the verification leaf-spine."),
    link_delay: str = typer.Option("1us", "--link-delay", help="Propagation delay of every link of that fabric."),
    force: bool = typer.Option(False, "--force", help=FORCE_HELP),
    backend: str = typer.Option("local", "--backend", help=BACKEND_HELP),
    address: Optional[str] = typer.Option(None, "--address", help=ADDRESS_HELP),
) -> None:
    """ECN settings by the papers' rules from a link rate and an RTT distribution, verified by simulation."""
    from .results import estimate
    from .tune import tune
    from .tune.report import rules_table, stats_line, tradeoff_table

    _writable(out)

    def check(adv, todo) -> None:  # before anything is built
        ests = [(f"{lab['candidate']} at load {lab['load']:g}", estimate(sc, str(out.resolve()))) for sc, lab in todo]
        _check_memory(ests, force, at_once=1 if backend == "ray" else min(jobs or os.cpu_count() or 1, len(todo)))

    runner = _runner(backend, jobs, address)
    try:
        adv = tune(rate, rtt, transport, workload, loads, flows, seeds, out, runner, simulate=not no_verify, lam=lam,
                   percentile=percentile, tolerance=tolerance, fabric=fabric, link_delay=link_delay, on_plan=check)
    finally:
        runner.close()
    console.print(stats_line(adv), highlight=False)
    if adv.base_rtt_us is not None:
        console.print(f"verified on a {adv.fabric}; its own base RTT {adv.base_rtt_us:.2f} µs, the rest of each RTT is "
                      "extra delay at the sender, drawn per flow", highlight=False)
    console.print(rules_table(adv))
    if adv.table is not None:
        console.print(tradeoff_table(adv))
        console.print(f"recommended: {adv.recommended} — {adv.why}", highlight=False)
    else:
        console.print("not verified (--no-verify): nothing is recommended", highlight=False)
    console.print(f"{', '.join(str(f) for f in adv.files)} ({adv.wall_s:.1f} s)", highlight=False)


@app.command("demo")
def demo_cmd(out: Path = typer.Option(Path("results/demo"), "-o", "--out", help="Where records and the report go.")) -> None:
    """ECN♯ against DCTCP-RED-Tail and -AVG on the paper's 7→1 testbed with 3× RTT variation (web search,
    60 % load): the comparison table and an HTML report, in well under a minute."""
    from .reproduce.ecn_sharp.common import EXP, TESTBED_SCHEMES
    from .report import compare_table, write_report

    base = override(load_scenario(EXP / "testbed.toml"), {"traffic.0.load": 0.6})
    runs = {}
    for label in ("DCTCP-RED-Tail", "DCTCP-RED-AVG", "ECN#"):
        res = run_with_progress(override(base, {"switch.aqm": TESTBED_SCHEMES[label]}), str(EXP), label)
        res.save(out / label.replace("#", "sharp"))
        runs[label] = res
        console.print(summary_table(res, label))
    c = compare_table(runs, metrics=("fct_mean", "fct_p99"))
    console.print(comparison_table(c, "ECN♯ vs DCTCP-RED (× = ratio to Tail)"))
    page = write_report(runs, out / "report.html", title="dcnlab demo: ECN♯ vs DCTCP-RED under 3× RTT variation")
    console.print(f"report: {page}")


# typer's command-line errors (usage, bad option values) share this base class whichever click it bundles.
_CLICK_ERROR = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


def _one_line(msg: str) -> None:
    """`error: …` on one line; control characters from the user's input are shown escaped."""
    msg = "".join(c if c.isprintable() else repr(c)[1:-1] for c in msg)
    err.print(f"error: {msg}", markup=False, highlight=False, soft_wrap=True)


def main(argv: list[str] | None = None) -> int:
    try:
        rv = app(args=argv, prog_name="dcnlab", standalone_mode=False)
        return rv if isinstance(rv, int) else 0
    except SystemExit as e:  # our own exits (130 after Ctrl-C)
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except _CLICK_ERROR as e:  # usage errors: one line and where the help is
        if STATE["debug"]:
            raise
        ctx = getattr(e, "ctx", None)
        where = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
        _one_line(f"{e.format_message()}{where}")
        return getattr(e, "exit_code", 2)
    except (_core.ConfigError, UserError) as e:
        if STATE["debug"]:
            raise
        _one_line(str(e))
        return 2
    except OSError as e:
        if STATE["debug"]:
            raise
        _one_line(f"{e.strerror or e}: {e.filename}" if e.filename else str(e.strerror or e))
        return 2
    except KeyboardInterrupt:
        _one_line("interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())

def run_main() -> None:
    """Console-script entry point."""
    sys.exit(main())
