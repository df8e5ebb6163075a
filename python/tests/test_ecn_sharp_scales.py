"""The ECN♯ scale presets and the bootstrap that sizes them (experiments/ecn_sharp/README.md, "Scales").
Fast: no simulation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dcnlab.reproduce import check, preset, scales
from dcnlab.reproduce.ecn_sharp import EXPERIMENTS
from dcnlab.reproduce.ecn_sharp.precision import _resample_idx, bootstrap, fct_values, flows_needed, run_precision


def test_bootstrap_mean_of_exponential_matches_the_normal_interval():
    # Mean of Exp(1), n = 10 000: half-width 1.96 · σ/√n = 0.0196 of the estimate.
    x = np.random.default_rng(1).exponential(1.0, 10_000)
    b = bootstrap(x, "mean", reps=2000, seed=3)
    assert b["lo"] < b["estimate"] < b["hi"]
    assert b["rel"] == pytest.approx(1.96 / np.sqrt(10_000) / b["estimate"], rel=0.15)


def test_bootstrap_p99_of_exponential_matches_the_quantile_interval():
    # p99 of Exp(1): q = ln 100, density 0.01 there; sd of the sample quantile √(p(1−p)/n) / f(q) gives a
    # relative half-width 1.96 · √(0.0099 / 10 000) / 0.01 / ln 100 = 0.0423.
    x = np.random.default_rng(2).exponential(1.0, 10_000)
    b = bootstrap(x, "p99", reps=2000, seed=4)
    assert b["estimate"] == pytest.approx(np.log(100), rel=0.08)
    assert b["rel"] == pytest.approx(1.96 * np.sqrt(0.0099 / 10_000) / 0.01 / np.log(100), rel=0.2)


def test_bootstrap_is_deterministic_and_degenerate_samples_have_no_width():
    x = np.random.default_rng(5).lognormal(0, 1, 3000)
    assert bootstrap(x, "p99", seed=7) == bootstrap(x, "p99", seed=7)
    assert bootstrap(x, "p99", seed=7) != bootstrap(x, "p99", seed=8)
    c = bootstrap(np.full(500, 42.0), "p99")
    assert (c["estimate"], c["lo"], c["hi"], c["rel"]) == (42.0, 42.0, 42.0, 0.0)
    assert np.isnan(bootstrap(np.array([]), "mean")["rel"])


def test_pooling_and_blocks():
    rng = np.random.default_rng(9)
    a, b = rng.exponential(1.0, 4000), rng.exponential(1.0, 4000)
    one, two = bootstrap(a, "mean", seed=1), bootstrap([a, b], "mean", seed=1)
    assert two["n"] == 8000 and two["estimate"] == pytest.approx(np.concatenate([a, b]).mean())
    # Twice the flows: the interval shrinks by about √2.
    assert two["rel"] == pytest.approx(one["rel"] / np.sqrt(2), rel=0.2)
    # A strongly autocorrelated sample (slow level changes): blocks see the dependence, single draws do not.
    level = np.repeat(rng.exponential(1.0, 40), 100)
    y = level + rng.exponential(0.1, 4000)
    assert bootstrap(y, "mean", block=100, seed=1)["rel"] > 2 * bootstrap(y, "mean", block=1, seed=1)["rel"]
    assert flows_needed(0.10, 1000) == 4000 and flows_needed(0.05, 1000) == 1000
    # A block is at most a tenth of the sample: 500 flows with blocks of 1000 resample ten runs of 50.
    idx = _resample_idx(np.random.default_rng(0), 500, 3, 1000)
    assert idx.shape == (3, 500) and (np.diff(idx.reshape(3, 10, 50), axis=2) == 1).all()


def test_run_precision_uses_finished_flows_of_each_bucket_after_warmup():
    rng = np.random.default_rng(3)
    n = 2000
    f = pd.DataFrame({"size": rng.choice([5e3, 50e3, 1e6, 20e6], n), "start_us": np.arange(n, dtype=float),
                      "fct_us": rng.exponential(100.0, n), "finished": rng.random(n) > 0.05})
    short = fct_values(f, 0, 100e3, warmup_us=500)
    sel = f[(f["start_us"] >= 500) & f["finished"] & (f["size"] <= 100e3)]
    assert len(short) == len(sel) and short.mean() == pytest.approx(sel["fct_us"].mean())
    p = run_precision([f], warmup_us=500, reps=200)
    assert set(p) == {"overall avg", "short avg", "short p99", "large avg"}
    assert p["short p99"]["estimate"] == pytest.approx(sel["fct_us"].quantile(0.99))
    assert p["large avg"]["n"] == int(((f["size"] > 10e6) & f["finished"] & (f["start_us"] >= 500)).sum())


@pytest.mark.parametrize("scale", ["small", "medium", "paper"])
def test_every_scale_has_every_experiment(scale):
    table = scales("ecn_sharp")
    assert set(table[scale]) == set(EXPERIMENTS), scale
    check("ecn_sharp", scale, None)
    for exp in EXPERIMENTS:
        p = preset("ecn_sharp", exp, scale)
        assert p["seeds"] >= 1
        for key in ("loads", "ns", "variations", "thresholds", "workloads"):
            if key in p:
                assert len(p[key]) >= 1, (scale, exp, key)
        if "flows" in p:
            counts = p["flows"].values() if isinstance(p["flows"], dict) else [p["flows"]]
            assert all(isinstance(c, int) and c > 0 for c in counts), (scale, exp)
            if isinstance(p["flows"], dict):
                assert set(p["workloads"]) <= set(p["flows"]), (scale, exp)
