"""§5.2.2 (`spec/tcd.md` §7.3): the InfiniBand realistic workload — I/O and MPI messages on a leaf-spine
with credit flow control (one data VL of `vl_buffer`), D-mod-k routing, IB CC and IB CC + TCD.

Roles: in every rack `io_servers_per_rack` hosts drawn at random are I/O servers; then `io_client_frac` of
all hosts, drawn from the rest, are I/O clients; every remaining host is both an MPI client and an MPI
server. `messages` messages arrive as one Poisson stream whose rate makes the offered load `load` × the
summed host link capacity; a share `io_frac` of them (exactly, drawn at random) are I/O messages from a
random I/O client to a random I/O server, sizes uniform over `io_sizes`; the rest go from a random MPI
host to another random MPI host, `mpi_small` with probability `mpi_small_p`, else uniform over
`mpi_sizes`. The list is drawn with numpy from `seed`, so every scheme runs the same messages. Each
message is its own RDMA queue pair (the transport has no persistent or in-order message mode).

Metric: average message completion time (MCT = the flow's FCT) overall and per size; paper: IB CC + TCD
improves the overall average 1.22× and 512 KB messages 1.5× over IB CC."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import numpy as np
import pandas as pd

from ...sweep import Runner, cached_result
from .. import preset
from ..common import imgs, plt, run_jobs, savefig, table
from .common import EXP, PAPER, out_path

FECN = {"kind": "ib_fecn", "threshold": "4KB"}
# Scheme → (transport, AQM of the one data VL). "no CC": IB CC's transport with a switch that never marks
# FECN, so CCTI stays 0 and nothing is paced — the reference without congestion control.
SCHEMES: dict[str, tuple[dict, dict]] = {
    "no CC": ({"kind": "rdma", "cc": "ib_cc"}, {"kind": "droptail"}),
    "IB CC": ({"kind": "rdma", "cc": "ib_cc"}, FECN),
    "IB CC+TCD": ({"kind": "rdma", "cc": "ib_cc", "tcd": True}, {"kind": "tcd", "ce": FECN}),
}
PAPER_GAIN = {"all": 1.22, 512_000: 1.5}  # IB CC MCT / IB CC+TCD MCT (§5.2.2)

_UNITS = {"B": 1, "KB": 1_000, "MB": 1_000_000, "GB": 1_000_000_000, "KiB": 1024, "MiB": 1 << 20}
_RATE = {"bps": 1, "Kbps": 1e3, "Mbps": 1e6, "Gbps": 1e9}


def _size(v, field: str) -> int:
    if isinstance(v, int) and not isinstance(v, bool) and v > 0:
        return v
    m = re.fullmatch(r"\s*([0-9.]+)\s*([A-Za-z]+)\s*", str(v))
    if not m or m.group(2) not in _UNITS or float(m.group(1)) <= 0:
        raise ValueError(f"`{field}`: `{v}` is not a positive size (e.g. \"512KB\")")
    return int(round(float(m.group(1)) * _UNITS[m.group(2)]))


def _rate(v, field: str) -> float:
    m = re.fullmatch(r"\s*([0-9.]+)\s*([A-Za-z]+)\s*", str(v))
    if not m or m.group(2) not in _RATE or float(m.group(1)) <= 0:
        raise ValueError(f"`{field}`: `{v}` is not a positive rate (e.g. \"40Gbps\")")
    return float(m.group(1)) * _RATE[m.group(2)]


def check(p: dict) -> None:
    """One clear error naming the preset key that is wrong."""
    for k in ("spines", "leaves", "hosts_per_leaf", "messages", "io_servers_per_rack", "seed"):
        if k not in p:
            raise ValueError(f"ib preset: `{k}` is missing")
        if not isinstance(p[k], int) or isinstance(p[k], bool) or p[k] < (0 if k == "seed" else 1):
            raise ValueError(f"ib preset: `{k}` must be a positive integer, got {p[k]!r}")
    if p["io_servers_per_rack"] >= p["hosts_per_leaf"]:
        raise ValueError(f"ib preset: `io_servers_per_rack` ({p['io_servers_per_rack']}) must be below "
                         f"`hosts_per_leaf` ({p['hosts_per_leaf']})")
    for k, lo, hi in (("load", 0, 1), ("io_frac", 0, 1), ("io_client_frac", 0, 1), ("mpi_small_p", 0, 1)):
        if not isinstance(p.get(k), (int, float)) or isinstance(p.get(k), bool) or not lo < p[k] <= hi:
            raise ValueError(f"ib preset: `{k}` must be a number in ({lo}, {hi}], got {p.get(k)!r}")
    n = p["leaves"] * p["hosts_per_leaf"]
    n_io = p["leaves"] * p["io_servers_per_rack"]
    n_cl = int(round(p["io_client_frac"] * n))
    if n - n_io - n_cl < 2:
        raise ValueError(f"ib preset: `io_client_frac` {p['io_client_frac']} leaves {n - n_io - n_cl} MPI hosts "
                         f"of {n} (need 2)")
    for k in ("io_sizes", "mpi_sizes"):
        if not isinstance(p.get(k), list) or not p[k]:
            raise ValueError(f"ib preset: `{k}` must be a non-empty list of sizes")
        for i, v in enumerate(p[k]):
            _size(v, f"{k}[{i}]")
    _size(p.get("mpi_small"), "mpi_small")
    _rate(p.get("link_rate"), "link_rate")
    if p.get("load_reference", "hosts") not in ("hosts", "io"):
        raise ValueError(f"ib preset: `load_reference` must be \"hosts\" or \"io\", got {p['load_reference']!r}")
    for i, v in enumerate(p.get("load_references", [])):
        if v not in ("hosts", "io"):
            raise ValueError(f"ib preset: `load_references[{i}]` must be \"hosts\" or \"io\", got {v!r}")
    for s in p.get("schemes", []):
        if s not in SCHEMES:
            raise ValueError(f"ib preset: `schemes`: unknown scheme `{s}`; one of {', '.join(SCHEMES)}")


def roles(p: dict) -> np.ndarray:
    """Per host: "io_server", "io_client" or "mpi" (drawn from `seed`)."""
    rng = np.random.default_rng([p["seed"], 1])
    h, n = p["hosts_per_leaf"], p["leaves"] * p["hosts_per_leaf"]
    role = np.full(n, "mpi", dtype=object)
    for leaf in range(p["leaves"]):
        role[leaf * h + rng.choice(h, p["io_servers_per_rack"], replace=False)] = "io_server"
    rest = np.flatnonzero(role == "mpi")
    role[rng.choice(rest, int(round(p["io_client_frac"] * n)), replace=False)] = "io_client"
    return role


def mean_size(p: dict) -> float:
    io = np.mean([_size(v, "io_sizes") for v in p["io_sizes"]])
    mpi = p["mpi_small_p"] * _size(p["mpi_small"], "mpi_small") + (1 - p["mpi_small_p"]) * np.mean(
        [_size(v, "mpi_sizes") for v in p["mpi_sizes"]])
    return p["io_frac"] * io + (1 - p["io_frac"]) * mpi


def message_rate(p: dict, role: np.ndarray) -> float:
    """Messages per second. `load_reference = "hosts"` (spec §7.3's [DEFAULT]): the offered bytes are
    `load` × the summed capacity of every host — which loads the I/O clients and servers far above their
    links, since I/O carries ~96 % of the bytes; `"io"`: the I/O bytes are `load` × the smaller of the
    I/O clients' and the I/O servers' summed capacity (the `access` convention of `traffic.poisson`)."""
    c = _rate(p["link_rate"], "link_rate") / 8
    if p.get("load_reference", "hosts") == "hosts":
        return p["load"] * len(role) * c / mean_size(p)
    io = np.mean([_size(v, "io_sizes") for v in p["io_sizes"]])
    hosts = min((role == "io_client").sum(), (role == "io_server").sum())
    return p["load"] * hosts * c / (p["io_frac"] * io)


def offered(p: dict, msgs: pd.DataFrame) -> dict:
    """Offered load per role, as a fraction of the role's summed link capacity (sent and received)."""
    role = roles(p)
    c = _rate(p["link_rate"], "link_rate") / 8 * 1e-6  # bytes per µs
    span = float(msgs["start_us"].max())
    out = {}
    for r in ("io_client", "io_server", "mpi"):
        hosts = np.flatnonzero(role == r)
        out[f"{r}_tx_load"] = float(msgs.loc[msgs["src"].isin(hosts), "size"].sum()) / (len(hosts) * c * span)
        out[f"{r}_rx_load"] = float(msgs.loc[msgs["dst"].isin(hosts), "size"].sum()) / (len(hosts) * c * span)
    out["total_load"] = float(msgs["size"].sum()) / (len(role) * c * span)
    return out


def messages(p: dict) -> pd.DataFrame:
    """The message list (src, dst, size, start_us, kind), deterministic for the preset and its `seed`."""
    check(p)
    role = roles(p)
    rng = np.random.default_rng([p["seed"], 2])
    n_msg, n = p["messages"], len(role)
    servers, clients, mpi = (np.flatnonzero(role == r) for r in ("io_server", "io_client", "mpi"))
    io = np.zeros(n_msg, dtype=bool)
    io[rng.choice(n_msg, int(round(p["io_frac"] * n_msg)), replace=False)] = True
    src = np.where(io, rng.choice(clients, n_msg), rng.choice(mpi, n_msg))
    dst = np.where(io, rng.choice(servers, n_msg), -1)
    # MPI destination: uniform over the other MPI hosts.
    k = rng.integers(0, len(mpi) - 1, n_msg)
    pos = np.searchsorted(mpi, src)
    dst = np.where(io, dst, mpi[np.where(k >= pos, k + 1, k)])
    io_sizes = np.array([_size(v, "io_sizes") for v in p["io_sizes"]])
    mpi_sizes = np.array([_size(v, "mpi_sizes") for v in p["mpi_sizes"]])
    small = rng.random(n_msg) < p["mpi_small_p"]
    size = np.where(io, rng.choice(io_sizes, n_msg),
                    np.where(small, _size(p["mpi_small"], "mpi_small"), rng.choice(mpi_sizes, n_msg)))
    rate = message_rate(p, role)
    start_us = np.cumsum(rng.exponential(1e6 / rate, n_msg))
    return pd.DataFrame({"src": src, "dst": dst, "size": size, "start_us": start_us,
                         "kind": np.where(io, "io", "mpi")})


def scenario(scheme: str, p: dict, msgs: pd.DataFrame) -> dict:
    transport, aqm = (copy.deepcopy(x) for x in SCHEMES[scheme])
    transport |= copy.deepcopy(p.get("transport", {}))
    link = {"rate": p["link_rate"], "delay": p.get("link_delay", "1us")}
    flows = [{"src": int(s), "dst": int(d), "size": f"{int(z)}B", "start": f"{t:.4f}us", "tag": k}
             for s, d, z, t, k in zip(msgs["src"], msgs["dst"], msgs["size"], msgs["start_us"], msgs["kind"])]
    sc = {
        "name": f"tcd ib {scheme}",
        "seed": p["seed"],
        "stop": {"all_flows_done": True, "max_time": p["max_time"]},
        "topology": {"kind": "leaf_spine", "spines": p["spines"], "leaves": p["leaves"],
                     "hosts_per_leaf": p["hosts_per_leaf"], "host_link": link, "fabric_link": link},
        "switch": {"mtu": p.get("mtu", 1044), "ecmp": "d_mod_k", "credit": {"vl_buffer": p["vl_buffer"]}, "aqm": aqm},
        "host": {"transport": transport},
        "traffic": [{"kind": "flows", "list": flows}],
        "record": {"pauses": False},
    }
    if p.get("trace_tags"):
        sc["record"] |= {"trace_tags": p["trace_tags"], "trace_interval": p.get("trace_interval", "20us")}
    return sc


def stats(job) -> dict:
    r = cached_result(job)
    f, ports = r.flows, r.ports
    done = f[f["finished"]]
    row = {"messages": len(f), "unfinished": int((~f["finished"]).sum()), "mct_all_us": done["fct_us"].mean(),
           "mct_io_us": done.loc[done["tag"] == "io", "fct_us"].mean(),
           "mct_mpi_us": done.loc[done["tag"] == "mpi", "fct_us"].mean()}
    for z, g in done.groupby("size"):
        row[f"mct_{int(z)}"] = g["fct_us"].mean()
    row |= {"ce_marks": int(f["ce_marks"].sum()), "ue_marks": int(f["ue_marks"].sum()),
            "undetermined_frac": float(((f["ue_marks"] > 0) & (f["ce_marks"] == 0)).mean()),
            "credit_stall_ms": float(ports["credit_stall_us"].sum()) / 1e3,
            "end_ms": float(f["finish_us"].max()) / 1e3 if "finish_us" in f else float("nan"),
            "wall_s": r.meta.get("wall_s"), "cache": job[2]}
    return row


def size_table(raw: pd.DataFrame) -> pd.DataFrame:
    """One row per size (and "all", "io", "mpi"): mean MCT (µs) per scheme and the IB CC / IB CC+TCD ratio."""
    cols = [c for c in raw.columns if c.startswith("mct_")]
    t = raw.set_index("scheme")[cols].T
    t.index = [c.removeprefix("mct_").removesuffix("_us") for c in cols]
    order = ["all", "io", "mpi"] + sorted([i for i in t.index if i.isdigit()], key=int)
    t = t.loc[order]
    if {"IB CC", "IB CC+TCD"} <= set(t.columns):
        t["IB CC / IB CC+TCD"] = t["IB CC"] / t["IB CC+TCD"]
    t.insert(0, "size", t.index)
    return t.reset_index(drop=True)


def run(p: dict, out: str | Path, runner: Runner | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(one row per scheme, one row per message size) for preset `p`."""
    check(p)
    out = out_path(out)
    jobs, loads = [], {}
    for ref in p.get("load_references", [p.get("load_reference", "hosts")]):
        q = p | {"load_reference": ref}
        msgs = messages(q)
        loads[ref] = offered(q, msgs)
        jobs += [(scenario(s, q, msgs), {"load_reference": ref, "scheme": s}) for s in p["schemes"]]
    raw = run_jobs(jobs, out, EXP, runner, fn=stats)
    raw = raw.assign(**{k: [loads[r][k] for r in raw["load_reference"]] for k in next(iter(loads.values()))})
    raw.drop(columns=["cache"]).to_csv(out / "ib_runs.csv", index=False)
    sizes = pd.concat([size_table(g).assign(load_reference=ref) for ref, g in raw.groupby("load_reference", sort=False)],
                      ignore_index=True)
    sizes.to_csv(out / "ib_mct.csv", index=False)
    return raw, sizes


def ib(scale: str = "small", out: str | Path = "results/tcd", runner: Runner | None = None, **overrides):
    return run(preset(PAPER, "ib", scale, **overrides), out, runner)


def plot(sizes: pd.DataFrame, out) -> list[Path]:
    pyplot = plt()
    schemes = [c for c in sizes.columns if c in SCHEMES]
    refs = list(dict.fromkeys(sizes["load_reference"]))
    fig, axes = pyplot.subplots(len(refs), 1, figsize=(10, 3.5 * len(refs)), squeeze=False)
    for ax, ref in zip(axes[:, 0], refs):
        g = sizes[sizes["load_reference"] == ref]
        x = np.arange(len(g))
        w = 0.8 / max(len(schemes), 1)
        for k, s in enumerate(schemes):
            ax.bar(x + k * w, g[s], w, label=s)
        ax.set_yscale("log")
        ax.set_xticks(x + 0.4 - w / 2, g["size"])
        ax.set_ylabel("mean MCT (µs)")
        ax.set_title(f"InfiniBand realistic workload (load reference: {ref}): mean MCT by size", fontsize=9)
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3, axis="y")
    return [savefig(fig, out, "ib_mct")]


def section(p: dict, out: Path, runner: Runner) -> list[str]:
    raw, sizes = run(p, out, runner)
    n = p["leaves"] * p["hosts_per_leaf"]
    return [f"<h2>InfiniBand realistic workload (§5.2.2)</h2><p>{n} hosts ({p['leaves']} leaves × {p['hosts_per_leaf']}, "
            f"{p['spines']} spines, {p['link_rate']}), credit flow control with one data VL of {p['vl_buffer']}, "
            f"D-mod-k, {p['messages']} messages ({p['io_frac']:.0%} I/O), load {p['load']}. Paper: IB CC+TCD improves "
            "the average MCT 1.22× overall and 1.5× for 512 KB messages over IB CC.</p>",
            table(raw.drop(columns=["cache"])), table(sizes)] + imgs(plot(sizes, out))
