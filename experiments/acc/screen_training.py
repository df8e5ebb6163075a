"""Screen ACC training variants on check_closed.toml (experiments/acc/README.md, "Why training was
bimodal"): train a model per discount and training seed as check_trained does (20 × 200 ms, the
offline column), by default with the bottleneck port's agent alone, then run it frozen on validation
seeds 21 and 22 (500 ms); print its mean reward, slowdown, T, D and the two settings it uses most.

    .venv/bin/python experiments/acc/screen_training.py '{"n_step": 3}' '{"carry": true, "single": false}'

Argument 1: controller keys added to the agents' (JSON); argument 2: keyword arguments of `main`."""
import hashlib, json, sys, time
from pathlib import Path
import numpy as np
from dcnlab.scenario import FileScenario, get, override
from dcnlab.train import train
from dcnlab.reproduce import preset
from dcnlab.reproduce.acc.common import EXP, PAPER
from dcnlab.reproduce.acc.check import scenario, stats
from dcnlab.sweep import cached_result
from dcnlab.scenario import scenario_hash

BOT = [{"node": "sw0", "port": 8}]
def main(extra, gammas=(0.9, 0.99), seeds=(100, 200, 300), episodes=20, episode="200ms", val=(21, 22),
         stop="500ms", out="results/acc/screen", single=True, carry=False):
    p = preset(PAPER, "check_trained", "small")
    p["stop"] = stop
    out = Path(out); out.mkdir(parents=True, exist_ok=True)
    base = {"kind": "acc", "head": "branching"} | ({"ports": BOT} if single else {})
    for g in gammas:
        for ts in seeds:
            ctl = base | {"gamma": g} | extra
            spec = {"ctl": ctl, "seed": ts, "episodes": episodes, "episode": episode} | ({"carry": 1} if carry else {})
            path = out / f"m_{hashlib.sha1(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:12]}.bin"
            t0 = time.time()
            if not path.is_file():
                sc = FileScenario.open(EXP / p["scenario"]).with_overrides({"switch.controller": ctl, "seed": ts})
                train(sc, path, episodes, episode, loads=[1.0], workloads=None, carry_state=carry)
            tt = time.time() - t0
            rows = []
            for vs in val:
                acc = {k: v for k, v in ctl.items() if k not in ("kind",)} | {"training": "none"}
                sc = scenario("ACC", vs, p | {"model": str(path)}, acc)
                sc = override(sc, {"record.controller_steps": True})
                job = (sc, str(EXP), str(out / "runs" / scenario_hash(sc)))
                st = stats(job)
                r = cached_result(job)
                cs = r.controller_steps
                cs = cs[(cs["node"] == "sw0") & (cs["port"] == 8)] if "node" in cs else cs
                top = cs["action"].value_counts(normalize=True).head(2)
                rows.append((st["reward"], st["slowdown"], st["T"], st["D"], "; ".join(f"{a} {v:.0%}" for a, v in top.items())))
            rw = np.mean([r[0] for r in rows]); sd = np.mean([r[1] for r in rows])
            print(f"{json.dumps(extra)} carry={carry} single={single} g={g} ts={ts}: reward {rw:.3f} slowdown {sd:.2f} T {np.mean([r[2] for r in rows]):.3f} D {np.mean([r[3] for r in rows]):.3f} | {rows[0][4]} | train {tt:.0f}s", flush=True)

if __name__ == "__main__":
    kw = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
    main(json.loads(sys.argv[1]), **kw)
