//! Double DQN (van Hasselt, Guez & Silver 2016) as acc.md §5 sets it out: for a minibatch of `(s, a, r, s')`
//!
//! ```text
//! a* ← argmax_a' Q_online(s', a')              # the online network picks
//! y  ← r + γ · Q_target(s', a*)                 # the target network evaluates (no terminal states)
//! loss ← mean Huber(Q_online(s, a) − y), δ = 1
//! Adam step on the online network, gradient global norm clipped at 10
//! every C steps: Q_target ← Q_online           # hard copy
//! ```
//!
//! The Q head is the full 1100-way output (one Q-value per grid setting) or the factored
//! "branching" head of acc.md §5: three heads (Kmin level, Kmax level, Pmax), Q = the sum of the three
//! chosen entries. Its greedy action is the valid setting (`Kmin ≤ Kmax`) of highest Q; acc.md's rule —
//! each head's own argmax, a `Kmin > Kmax` pair swapped — is kept as `branching_greedy = "swap"`: the
//! swapped pair is not the maximum, and it trapped training (experiments/acc/README.md, "Why training
//! was bimodal").

use super::grid::Grid;
use super::nn::{clip_global_norm, huber, Acts, Adam, Mlp, F};
use super::replay::{Replay, Transition};

/// How the network's outputs map to Q-values of grid actions.
#[derive(Clone, Debug, PartialEq)]
pub enum Head {
    /// One output per action.
    Full { actions: usize },
    /// `levels` Kmin outputs, `levels` Kmax outputs, `pmax` outputs; `swap`: the greedy action is each
    /// head's argmax with an invalid pair swapped (acc.md §5) instead of the best valid setting.
    Branching { grid: Grid, swap: bool },
}

impl Head {
    pub fn outputs(&self) -> usize {
        match self {
            Head::Full { actions } => *actions,
            Head::Branching { grid, .. } => 2 * grid.levels.len() + grid.pmax.len(),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Head::Full { .. } => "full",
            Head::Branching { .. } => "branching",
        }
    }

    /// Q(s, a) from the network's output for s.
    pub fn q(&self, out: &[F], a: usize) -> F {
        match self {
            Head::Full { .. } => out[a],
            Head::Branching { grid, .. } => {
                let (i, j, p) = grid.parts(a);
                let n = grid.levels.len();
                out[i] + out[n + j] + out[2 * n + p]
            }
        }
    }

    /// Add `g · ∂Q(s, a)/∂out` to `dout`.
    pub fn dq(&self, a: usize, g: F, dout: &mut [F]) {
        match self {
            Head::Full { .. } => dout[a] += g,
            Head::Branching { grid, .. } => {
                let (i, j, p) = grid.parts(a);
                let n = grid.levels.len();
                dout[i] += g;
                dout[n + j] += g;
                dout[2 * n + p] += g;
            }
        }
    }

    /// The greedy action (first maximum on ties). Branching: the valid (Kmin level ≤ Kmax level) pair of
    /// highest Kmin + Kmax entries — for each Kmax level j the best Kmin level up to j, a running maximum —
    /// and the best Pmax; with `swap`, each head's argmax, a Kmin above the Kmax swapped (acc.md §5).
    pub fn greedy(&self, out: &[F]) -> usize {
        match self {
            Head::Full { .. } => argmax(out),
            Head::Branching { grid, swap } => {
                let n = grid.levels.len();
                let p = argmax(&out[2 * n..]);
                if *swap {
                    let (i, j) = (argmax(&out[..n]), argmax(&out[n..2 * n]));
                    return grid.action(i.min(j), i.max(j), p);
                }
                let (mut best_i, mut best) = (0, (0, 0));
                let mut best_q = F::NEG_INFINITY;
                for j in 0..n {
                    if out[j] > out[best_i] {
                        best_i = j;
                    }
                    let q = out[best_i] + out[n + j];
                    if q > best_q {
                        best_q = q;
                        best = (best_i, j);
                    }
                }
                grid.action(best.0, best.1, p)
            }
        }
    }
}

pub fn argmax(v: &[F]) -> usize {
    let mut best = 0;
    for k in 1..v.len() {
        if v[k] > v[best] {
            best = k;
        }
    }
    best
}

/// Learning hyper-parameters (acc.md §5 table).
#[derive(Clone, Debug, PartialEq)]
pub struct Hyper {
    pub gamma: F,
    pub lr: F,
    pub batch: usize,
    pub clip: F,
    pub huber_delta: F,
    /// Training steps between hard copies of the online network into the target network.
    pub target_sync: u64,
    /// n of n-step returns: every stored transition's reward is `r_t + γ r_{t+1} + … + γ^{n−1} r_{t+n−1}`
    /// and its next state `s_{t+n}` (`replay::NStep`), so the target bootstraps with γ^n.
    pub n_step: usize,
}

impl Hyper {
    /// The discount of the bootstrapped term, γ^n (exactly γ for n = 1).
    pub fn bootstrap(&self) -> F {
        (1..self.n_step.max(1)).fold(self.gamma, |d, _| d * self.gamma)
    }
}

/// An online network, its target network and its optimiser.
#[derive(Clone, Debug)]
pub struct Learner {
    pub online: Mlp,
    pub target: Mlp,
    pub(super) adam: Adam,
    grad: Vec<F>,
    pub steps: u64,
    acts: Acts,
    dout: Vec<F>,
    y: Vec<F>,
}

impl Learner {
    pub fn new(model: Mlp, lr: F) -> Learner {
        let n = model.p.len();
        let dout = vec![0.0; model.outputs()];
        Learner { target: model.clone(), online: model, adam: Adam::new(n, lr), grad: vec![0.0; n], steps: 0, acts: Acts::default(), dout, y: Vec::new() }
    }

    /// Replace both networks (a shared model pushed to the agent; the optimiser's moments are kept).
    pub fn set_weights(&mut self, model: &Mlp) {
        self.online.p.copy_from_slice(&model.p);
        self.target.p.copy_from_slice(&model.p);
    }

    /// The Double-DQN target of one transition: r + γ·Q_target(s', argmax_a' Q_online(s', a')).
    pub fn target_of(&mut self, t: &Transition, head: &Head, gamma: F) -> F {
        self.online.forward(t.s2, &mut self.acts);
        let a_star = head.greedy(self.acts.out());
        self.target.forward(t.s2, &mut self.acts);
        t.r + gamma * head.q(self.acts.out(), a_star)
    }

    /// One training step on the transitions `idx` of `mem`; returns the mean Huber loss.
    pub fn train(&mut self, mem: &Replay, idx: &[usize], head: &Head, h: &Hyper) -> F {
        // Targets first, all from the networks as they were before this step.
        let mut y = std::mem::take(&mut self.y);
        y.clear();
        for &k in idx {
            y.push(self.target_of(&mem.get(k), head, h.bootstrap()));
        }
        self.grad.iter_mut().for_each(|g| *g = 0.0);
        let scale = 1.0 / idx.len() as F;
        let mut loss = 0.0;
        for (n, &k) in idx.iter().enumerate() {
            let t = mem.get(k);
            self.online.forward(t.s, &mut self.acts);
            let (l, dl) = huber(head.q(self.acts.out(), t.a) - y[n], h.huber_delta);
            loss += l;
            self.dout.iter_mut().for_each(|g| *g = 0.0);
            head.dq(t.a, dl * scale, &mut self.dout);
            self.online.backward(&mut self.acts, &self.dout, &mut self.grad);
        }
        self.y = y;
        clip_global_norm(&mut self.grad, h.clip);
        self.adam.lr = h.lr;
        self.adam.step(&mut self.online.p, &self.grad);
        self.steps += 1;
        if self.steps % h.target_sync == 0 {
            self.target.p.copy_from_slice(&self.online.p);
        }
        loss * scale
    }

    /// Q-values of `s` under the online network.
    pub fn q_values<'a>(&'a mut self, s: &[F]) -> &'a [F] {
        self.online.forward(s, &mut self.acts);
        self.acts.out()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hyper() -> Hyper {
        Hyper { gamma: 0.5, lr: 0.1, batch: 2, clip: 10.0, huber_delta: 1.0, target_sync: 2, n_step: 1 }
    }

    /// A linear network 2 inputs → 3 Q-values: Q = W^T s + b.
    fn linear(w: [F; 6], b: [F; 3]) -> Mlp {
        let mut p = w.to_vec();
        p.extend_from_slice(&b);
        Mlp::from_parts(vec![2, 3], p).unwrap()
    }

    #[test]
    fn double_dqn_target_of_a_hand_built_batch() {
        // Online: Q(s') for s' = (1, 0) is row 0 of W = (1, 3, 2) → a* = 1.
        // Target: row 0 = (5, 0.5, 4) → Q_target(s', a*) = 0.5.
        let mut l = Learner::new(linear([1.0, 3.0, 2.0, 0.0, 0.0, 0.0], [0.0; 3]), 0.1);
        l.target = linear([5.0, 0.5, 4.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0]);
        let head = Head::Full { actions: 3 };
        let t = Transition { s: &[0.0, 1.0], a: 2, r: 1.0, s2: &[1.0, 0.0] };
        // y = 1 + 0.5 · 0.5 = 1.25. Plain DQN (max of the target) would give 1 + 0.5·5 = 3.5; the online
        // network evaluating its own choice 1 + 0.5·3 = 2.5; the target choosing and the online evaluating
        // 1 + 0.5·1 = 1.5.
        assert_eq!(l.target_of(&t, &head, 0.5), 1.25);
        // s' = (0, 2), biases in play: online row 1 = (0, 0, 1), b = (1, 0, 0) → Q_online = (1, 0, 2), a* = 2;
        // target row 1 = (1, 1, −1), b = 0 → Q_target = (2, 2, −2): y = 0.25 + 0.9·(−2) (max of target: 2).
        let mut l = Learner::new(linear([0.0, 0.0, 0.0, 0.0, 0.0, 1.0], [1.0, 0.0, 0.0]), 0.1);
        l.target = linear([0.0, 0.0, 0.0, 1.0, 1.0, -1.0], [0.0; 3]);
        let t = Transition { s: &[0.0, 0.0], a: 0, r: 0.25, s2: &[0.0, 2.0] };
        assert_eq!(l.target_of(&t, &head, 0.9), 0.25 + 0.9 * -2.0);
    }

    #[test]
    fn an_n_step_transition_bootstraps_with_gamma_to_the_n() {
        // Both networks: Q(s') = 1 for every action (bias 1, no weights). One step on one transition whose
        // reward is already the 3-step return R = 2: the target is R + γ³·1 = 2 + 0.125 at γ = 0.5 (γ·1
        // would give 2.5, and the loss would differ).
        let head = Head::Full { actions: 3 };
        let mut mem = Replay::new(2, 4);
        mem.push(Transition { s: &[0.0, 0.0], a: 1, r: 2.0, s2: &[0.0, 0.0] });
        let h = Hyper { gamma: 0.5, n_step: 3, ..hyper() };
        assert_eq!((h.bootstrap(), Hyper { n_step: 1, ..hyper() }.bootstrap()), (0.125, 0.5));
        let mut l = Learner::new(linear([0.0; 6], [1.0; 3]), 0.1);
        // Q(s, a) = 1, y = 2.125: error −1.125, Huber (δ = 1) 1.125 − 0.5 = 0.625.
        assert_eq!(l.train(&mem, &[0], &head, &h), 0.625);
    }

    #[test]
    fn one_training_step_by_hand() {
        // Q = W^T s + b, W = 0, b = 0 for both networks: every target is r (the next Q is 0).
        let head = Head::Full { actions: 3 };
        let mut l = Learner::new(linear([0.0; 6], [0.0; 3]), 0.1);
        let mut mem = Replay::new(2, 10);
        mem.push(Transition { s: &[1.0, 0.0], a: 0, r: 0.5, s2: &[0.0, 0.0] });
        mem.push(Transition { s: &[0.0, 1.0], a: 2, r: -3.0, s2: &[0.0, 0.0] });
        let loss = l.train(&mem, &[0, 1], &head, &hyper());
        // Errors Q − y = (−0.5, 3): Huber (0.125, 2.5), mean 1.3125. Gradients (mean): ∂/∂q = (−0.25, 0.5):
        // w00 −0.25, b0 −0.25, w12 +0.5, b2 +0.5 — Adam's first step moves each by lr·sign = ±0.1.
        assert_eq!(loss, 1.3125);
        let p = &l.online.p;
        let want = [0.1, 0.0, 0.0, 0.0, 0.0, -0.1, 0.1, 0.0, -0.1];
        for k in 0..9 {
            assert!((p[k] - want[k]).abs() < 1e-6, "param {k}: {} (all {p:?})", p[k]);
        }
        // The target network is synced every 2 steps: not yet, then yes.
        assert_eq!(l.target.p, vec![0.0; 9]);
        l.train(&mem, &[0, 1], &head, &hyper());
        assert_eq!(l.target.p, l.online.p);
    }

    #[test]
    fn branching_greedy_is_the_best_valid_setting() {
        // Kmin entries (0, 0, 5), Kmax (1, 0, 0.5), Pmax (0, 2). Each head's argmax is Kmin level 2, Kmax
        // level 0: swapped, (0, 2) with Q = 0 + 0.5 + 2 = 2.5. The best valid pair is (2, 2): 5 + 0.5 + 2.
        let grid = Grid::new(vec![10, 20, 30], vec![0.5, 1.0]).unwrap();
        let head = Head::Branching { grid: grid.clone(), swap: false };
        let out = [0.0, 0.0, 5.0, 1.0, 0.0, 0.5, 0.0, 2.0];
        let a = head.greedy(&out);
        assert_eq!(grid.parts(a), (2, 2, 1));
        // It is the maximum over every valid setting, on random outputs too.
        let mut rng = crate::rng::stream(11, "ddqn-test", 0);
        for _ in 0..200 {
            let out: Vec<F> = (0..8).map(|_| crate::rng::unit(&mut rng) as F).collect();
            let best = (0..grid.len()).map(|b| head.q(&out, b)).fold(F::NEG_INFINITY, F::max);
            assert_eq!(head.q(&out, head.greedy(&out)), best, "{out:?}");
        }
        // acc.md's swap rule, kept as an option, gives the lower-valued setting.
        let swap = Head::Branching { grid: grid.clone(), swap: true };
        assert_eq!(grid.parts(swap.greedy(&out)), (0, 2, 1));
        assert_eq!(swap.q(&out, swap.greedy(&out)), 2.5);
    }

    #[test]
    fn branching_head_sums_three_entries_and_swaps() {
        let grid = Grid::new(vec![10, 20, 30], vec![0.5, 1.0]).unwrap();
        let head = Head::Branching { grid: grid.clone(), swap: true };
        assert_eq!(head.outputs(), 8);
        // Kmin outputs (0, 0, 5), Kmax (1, 0, 0), Pmax (0, 2): greedy Kmin level 2 > Kmax level 0 → swapped.
        let out = [0.0, 0.0, 5.0, 1.0, 0.0, 0.0, 0.0, 2.0];
        let a = head.greedy(&out);
        assert_eq!(grid.parts(a), (0, 2, 1));
        // Q of that (valid) action: Kmin level 0 (0) + Kmax level 2 (0) + pmax 1 (2) = 2.
        assert_eq!(head.q(&out, a), 2.0);
        let mut d = vec![0.0; 8];
        head.dq(a, 1.5, &mut d);
        assert_eq!(d, vec![1.5, 0.0, 0.0, 0.0, 0.0, 1.5, 0.0, 1.5]);
    }

    #[test]
    fn training_reduces_the_error_on_a_fixed_batch() {
        let head = Head::Full { actions: 4 };
        let mut rng = crate::rng::stream(3, "ddqn-test", 0);
        let mut l = Learner::new(Mlp::he_uniform(&[3, 8, 4], &mut rng), 1e-2);
        let mut mem = Replay::new(3, 10);
        mem.push(Transition { s: &[1.0, 0.0, 0.5], a: 1, r: 1.0, s2: &[0.0, 1.0, 0.5] });
        mem.push(Transition { s: &[0.0, 1.0, 0.5], a: 3, r: 0.0, s2: &[1.0, 0.0, 0.5] });
        let h = Hyper { gamma: 0.0, lr: 1e-2, batch: 2, clip: 10.0, huber_delta: 1.0, target_sync: 100, n_step: 1 };
        let first = l.train(&mem, &[0, 1], &head, &h);
        let mut last = first;
        for _ in 0..300 {
            last = l.train(&mem, &[0, 1], &head, &h);
        }
        assert!(last < 1e-3 && last < first / 10.0, "loss {first} → {last}");
    }
}
