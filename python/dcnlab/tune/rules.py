"""The papers' rules for ECN settings from a link rate and an RTT distribution, as pure functions.

Every threshold comes from ECN♯'s Eq. (1)–(2) (TCC 2022, §2.1 and §3.2): K = λ·C·RTT in bytes, or
T = K/C = λ·RTT as a sojourn time, where λ is set by the transport (ECN♯ §2.1: 1 for ECN*, which halves
its window on a mark; DCTCP 0.17 in theory). Which RTT goes in is the whole question the tool answers:
the mean ("AVG") or a high percentile ("Tail", the 90th: ECN♯ §2.3, "as suggested by [9]").

λ defaults to 1 for every transport: it is what ECN♯'s own numbers use with DCTCP hosts (§2.3: 250 KB at
the 90th-percentile RTT of 70–210 µs, 10 Gbps; "~100 KB" at the mean; §5.2: ins_target 200 µs, pst_target
85 µs), and what this project's reproductions use. DCTCP's analysis only bounds it from below,
K > C·RTT/7 (Alizadeh et al., SIGCOMM 2010, §3.4; `spec/aqm.md` §2): `dctcp_floor` gives that bound and
the advisor flags a setting under it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..rtt import threshold_bytes

# ECN♯ §2.3: the percentile of "current practice" ("e.g., 90th percentile [9]").
TAIL_PERCENTILE = 90.0
LAMBDA = 1.0
TRANSPORTS = ("dctcp", "ecn_star", "dcqcn")


@dataclass(frozen=True)
class RttStats:
    """An RTT distribution reduced to what the rules read (µs)."""

    min_us: float
    mean_us: float
    tail_us: float
    max_us: float
    percentile: float = TAIL_PERCENTILE


@dataclass(frozen=True)
class Candidate:
    """One setting to verify: its name, the AQM table in scenario-key form (`switch.aqm`), and how each
    number was derived (rule and source), for the table and the report."""

    name: str
    aqm: dict
    rule: str
    source: str
    notes: list[str] = field(default_factory=list)


def sojourn_us(rtt_us: float, lam: float = LAMBDA) -> float:
    """ECN♯ Eq. (2): the sojourn-time threshold T = λ·RTT (µs)."""
    return lam * rtt_us


def dctcp_floor(rtt_us: float, rate_bps: float) -> float:
    """DCTCP's lower bound on K for full throughput, C·RTT/7 in bytes (Alizadeh et al. 2010, §3.4,
    "K > (C × RTT)/7"; `spec/aqm.md` §2)."""
    return rate_bps * rtt_us * 1e-6 / 8.0 / 7.0


def dctcp_red(stats: RttStats, rate_bps: float, lam: float = LAMBDA) -> dict[str, float]:
    """DCTCP-RED's K (bytes) by ECN♯ Eq. (1) at the mean RTT ("AVG") and at the tail percentile ("Tail"),
    the two settings ECN♯ §2.3 and §5.1 compare."""
    return {"AVG": threshold_bytes(stats.mean_us, rate_bps, lam), "Tail": threshold_bytes(stats.tail_us, rate_bps, lam)}


def ecn_sharp(stats: RttStats, lam: float = LAMBDA) -> dict[str, float]:
    """ECN♯'s rule of thumb, §3.4 (µs): ins_target by Eq. (2) at a high-percentile RTT; pst_interval
    "around the high percentile RTT"; pst_target "larger than or equal to λ × mean RTT" (its least
    value is used)."""
    return {"ins_target": sojourn_us(stats.tail_us, lam), "pst_target": sojourn_us(stats.mean_us, lam),
            "pst_interval": stats.tail_us}


def tcn(stats: RttStats, lam: float = LAMBDA) -> float:
    """TCN's sojourn threshold (µs): T = λ·RTT (Bai et al., CoNEXT 2016; `spec/aqm.md` §5) at the high
    percentile — the "current practice" ECN♯ §3.5 compares against."""
    return sojourn_us(stats.tail_us, lam)


# DCQCN's RED (`spec/aqm.md` §3). Neither the DCQCN paper's text nor ECN♯ gives a rule from the RTT; ECN♯
# §5.4.4 says only that DCQCN's parameters are "derived based on high percentile RTTs". The rule here is
# this project's reading of that sentence (`reproduce/ecn_sharp/dcqcn.py`): Kmax at the Tail (or AVG)
# threshold of Eq. (1), Kmin and Pmax as the DCQCN paper's commonly cited setting (5 KB, 1 %).
DCQCN_KMIN = 5_000.0
DCQCN_PMAX = 0.01


def dcqcn_red(stats: RttStats, rate_bps: float, lam: float = LAMBDA) -> dict[str, dict[str, float]]:
    """DCQCN RED (Kmin, Kmax in bytes; Pmax) with Kmax = λ·C·RTT at the mean ("AVG") and at the tail
    percentile ("Tail"); Kmin 5 KB and Pmax 1 % (DCQCN paper as quoted in `spec/aqm.md` §3)."""
    k = dctcp_red(stats, rate_bps, lam)
    return {n: {"kmin": min(DCQCN_KMIN, v), "kmax": v, "pmax": DCQCN_PMAX} for n, v in k.items()}


def dcqcn_red_hpcc(rate_bps: float) -> dict[str, float]:
    """HPCC's ns-3 DCQCN setting, linear in the link rate and blind to the RTT: Kmin = 100 KB·C/25G,
    Kmax = 400 KB·C/25G, Pmax = 20 % (`simulation/run.py` and `mix/config.txt`; `spec/aqm.md` §3)."""
    s = rate_bps / 25e9
    return {"kmin": 100_000.0 * s, "kmax": 400_000.0 * s, "pmax": 0.2}


def dcqcn_ecn_sharp(stats: RttStats, rate_bps: float, lam: float = LAMBDA) -> dict[str, float]:
    """ECN♯ for DCQCN (§3.5, §5.4.4): the instantaneous part becomes DCQCN's probabilistic ramp in time
    units — ins_target = Kmin/C, ins_max = Kmax/C (the Tail RED), ins_pmax = Pmax —, the persistent part
    is the §3.4 rule (µs)."""
    red = dcqcn_red(stats, rate_bps, lam)["Tail"]
    sharp = ecn_sharp(stats, lam)
    to_us = 8e6 / rate_bps
    return {"ins_target": red["kmin"] * to_us, "ins_max": red["kmax"] * to_us, "ins_pmax": red["pmax"],
            "pst_target": sharp["pst_target"], "pst_interval": sharp["pst_interval"]}


def size_key(b: float) -> str:
    """Bytes as a scenario size, exact to the byte: 275000 → "275KB", 171250 → "171.25KB"."""
    n = max(int(round(b)), 1)
    if n < 1000:
        return f"{n}B"
    return f"{n // 1000}KB" if n % 1000 == 0 else f"{n / 1000:.3f}".rstrip("0").rstrip(".") + "KB"


def time_key(us: float) -> str:
    """µs as a scenario time, to the nanosecond: 220.0299 → "220.03us"."""
    return f"{max(us, 0.001):.3f}".rstrip("0").rstrip(".") + "us"


def candidates(stats: RttStats, rate_bps: float, transport: str, lam: float = LAMBDA) -> list[Candidate]:
    """The settings the papers' rules give for this transport, in a fixed order (the table's)."""
    p = f"p{stats.percentile:g}"
    C = f"{rate_bps / 1e9:g} Gbps"
    lam_s = f"{lam:g}·" if lam != 1 else ""
    if transport in ("dctcp", "ecn_star"):
        k = dctcp_red(stats, rate_bps, lam)
        sh = ecn_sharp(stats, lam)
        out = [
            Candidate("DCTCP-RED-AVG", {"kind": "dctcp_red", "threshold": size_key(k["AVG"])},
                      f"K = {lam_s}C·RTT_mean = {lam_s}{C} × {stats.mean_us:.1f} µs", "ECN♯ Eq. (1), §2.3 (AVG)"),
            Candidate("DCTCP-RED-Tail", {"kind": "dctcp_red", "threshold": size_key(k["Tail"])},
                      f"K = {lam_s}C·RTT_{p} = {lam_s}{C} × {stats.tail_us:.1f} µs", "ECN♯ Eq. (1), §2.3 (Tail, current practice)"),
            Candidate("ECN#", {"kind": "ecn_sharp", "ins_target": time_key(sh["ins_target"]),
                               "pst_target": time_key(sh["pst_target"]), "pst_interval": time_key(sh["pst_interval"])},
                      f"ins_target = {lam_s}RTT_{p}, pst_target = {lam_s}RTT_mean, pst_interval = RTT_{p}", "ECN♯ §3.4"),
            Candidate("TCN", {"kind": "tcn", "threshold": time_key(tcn(stats, lam))},
                      f"T = {lam_s}RTT_{p}", "TCN (CoNEXT 2016) T = λ·RTT; ECN♯ §3.5"),
        ]
        if transport == "dctcp":
            # DCTCP's bound, at the same RTT as each threshold: K = λ·C·RTT is under it exactly when λ < 1/7.
            for c, rtt in ((out[0], stats.mean_us), (out[1], stats.tail_us)):
                c.notes.append(f"DCTCP's bound C·RTT/7 = {size_key(dctcp_floor(rtt, rate_bps))}"
                               + (": K is below it, throughput may suffer" if lam < 1 / 7 else ""))
        return out
    if transport == "dcqcn":
        red = dcqcn_red(stats, rate_bps, lam)
        hp = dcqcn_red_hpcc(rate_bps)
        sh = dcqcn_ecn_sharp(stats, rate_bps, lam)

        def red_aqm(r: dict) -> dict:
            return {"kind": "red", "kmin": size_key(r["kmin"]), "kmax": size_key(r["kmax"]), "pmax": r["pmax"], "non_ect": "pass"}

        return [
            Candidate("DCQCN-RED-AVG", red_aqm(red["AVG"]), f"Kmax = {lam_s}C·RTT_mean, Kmin 5 KB, Pmax 1 %",
                      "ECN♯ Eq. (1) + DCQCN paper's Kmin/Pmax (this project's rule)"),
            Candidate("DCQCN-RED-Tail", red_aqm(red["Tail"]), f"Kmax = {lam_s}C·RTT_{p}, Kmin 5 KB, Pmax 1 %",
                      "ECN♯ §5.4.4 \"based on high percentile RTTs\" (this project's rule)"),
            Candidate("DCQCN-RED-HPCC", red_aqm(hp), "Kmin 100 KB, Kmax 400 KB, Pmax 20 % at 25 Gbps, linear in C",
                      "HPCC ns-3 config (spec/aqm.md §3)"),
            Candidate("DCQCN+ECN#", {"kind": "ecn_sharp", "ins_target": time_key(sh["ins_target"]),
                                     "ins_max": time_key(sh["ins_max"]), "ins_pmax": sh["ins_pmax"],
                                     "pst_target": time_key(sh["pst_target"]), "pst_interval": time_key(sh["pst_interval"])},
                      f"ramp Kmin/C…{lam_s}RTT_{p} at 1 %, pst_target = {lam_s}RTT_mean, pst_interval = RTT_{p}",
                      "ECN♯ §3.5 (probabilistic instantaneous part) + §3.4"),
        ]
    raise ValueError(f"unknown transport `{transport}`; use one of: {', '.join(TRANSPORTS)}")

