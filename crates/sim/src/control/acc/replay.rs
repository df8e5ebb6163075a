//! Experience replay (Lin 1992; DQN): a ring of the newest `capacity` transitions `(s, a, r, s')`, sampled
//! uniformly (with replacement) from the agent's own seeded stream. States are stored flat, so the memory
//! grows only with what is stored, never to the capacity up front.

use super::nn::F;
use crate::rng::Rng;
use rand::RngCore;

#[derive(Clone, Debug)]
pub struct Replay {
    pub(super) dim: usize,
    pub(super) capacity: usize,
    /// `s` then `s'` of each slot.
    pub(super) states: Vec<F>,
    pub(super) actions: Vec<u32>,
    pub(super) rewards: Vec<F>,
    /// Slot the next push overwrites once full.
    pub(super) next: usize,
    /// Transitions ever pushed.
    pub pushed: u64,
}

/// A transition borrowed from a memory.
#[derive(Clone, Copy, Debug)]
pub struct Transition<'a> {
    pub s: &'a [F],
    pub a: usize,
    pub r: F,
    pub s2: &'a [F],
}

impl Replay {
    pub fn new(dim: usize, capacity: usize) -> Replay {
        assert!(capacity > 0);
        Replay { dim, capacity, states: Vec::new(), actions: Vec::new(), rewards: Vec::new(), next: 0, pushed: 0 }
    }

    pub fn len(&self) -> usize {
        self.actions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.actions.is_empty()
    }

    pub fn push(&mut self, t: Transition) {
        assert!(t.s.len() == self.dim && t.s2.len() == self.dim);
        if self.len() < self.capacity {
            self.states.extend_from_slice(t.s);
            self.states.extend_from_slice(t.s2);
            self.actions.push(t.a as u32);
            self.rewards.push(t.r);
        } else {
            let k = self.next;
            let st = &mut self.states[2 * k * self.dim..2 * (k + 1) * self.dim];
            st[..self.dim].copy_from_slice(t.s);
            st[self.dim..].copy_from_slice(t.s2);
            self.actions[k] = t.a as u32;
            self.rewards[k] = t.r;
        }
        self.next = (self.next + 1) % self.capacity;
        self.pushed += 1;
    }

    pub fn get(&self, k: usize) -> Transition<'_> {
        let st = &self.states[2 * k * self.dim..2 * (k + 1) * self.dim];
        Transition { s: &st[..self.dim], a: self.actions[k] as usize, r: self.rewards[k], s2: &st[self.dim..] }
    }

    /// The `n` newest transitions, oldest first.
    pub fn newest(&self, n: usize) -> impl Iterator<Item = Transition<'_>> {
        let len = self.len();
        let n = n.min(len);
        // The newest slot is next − 1 (mod len once full).
        (0..n).map(move |k| self.get((self.next + len - n + k) % len))
    }

    /// `n` slot indexes drawn uniformly with replacement: ⌊u·len⌋ for a 64-bit uniform u (Lemire's
    /// multiply-shift; bias below len/2⁶⁴).
    pub fn sample(&self, rng: &mut Rng, n: usize, out: &mut Vec<usize>) {
        out.clear();
        let len = self.len() as u128;
        assert!(len > 0, "sampling an empty replay memory");
        for _ in 0..n {
            out.push(((rng.next_u64() as u128 * len) >> 64) as usize);
        }
    }
}

/// n-step returns (Sutton 1988; as in Rainbow, Hessel et al. 2018): an agent's consecutive transitions
/// `(s_t, a_t, r_t, s_{t+1})` become `(s_t, a_t, r_t + γ r_{t+1} + … + γ^{n−1} r_{t+n−1}, s_{t+n})` once
/// n of them are in. A break in the sequence (a transition not stored) drops the ones waiting, so every
/// stored transition spans exactly n intervals and the target bootstraps with γ^n. n = 1 passes each
/// transition through unchanged (the same bits).
#[derive(Clone, Debug)]
pub struct NStep {
    n: usize,
    gamma: F,
    /// The waiting transitions' s_t, a_t and r_t, oldest first (states flat).
    s: std::collections::VecDeque<Vec<F>>,
    a: std::collections::VecDeque<usize>,
    r: std::collections::VecDeque<F>,
}

impl NStep {
    pub fn new(n: usize, gamma: F) -> NStep {
        assert!(n >= 1);
        NStep { n, gamma, s: Default::default(), a: Default::default(), r: Default::default() }
    }

    /// Add the newest transition; store the n-step one it completes, if any, in `mem`.
    pub fn push(&mut self, t: Transition, mem: &mut Replay) -> bool {
        self.s.push_back(t.s.to_vec());
        self.a.push_back(t.a);
        self.r.push_back(t.r);
        if self.r.len() < self.n {
            return false;
        }
        // R = r_t + γ (r_{t+1} + γ (…)), newest first: for n = 1 exactly r_t.
        let mut ret = self.r[self.n - 1];
        for k in (0..self.n - 1).rev() {
            ret = self.r[k] + self.gamma * ret;
        }
        let s = self.s.pop_front().expect("n ≥ 1 waiting");
        let a = self.a.pop_front().expect("n ≥ 1 waiting");
        self.r.pop_front();
        mem.push(Transition { s: &s, a, r: ret, s2: t.s2 });
        true
    }

    /// The sequence broke: drop what waits.
    pub fn clear(&mut self) {
        self.s.clear();
        self.a.clear();
        self.r.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(v: F) -> ([F; 2], [F; 2]) {
        ([v, v], [v + 0.5, v + 0.5])
    }

    #[test]
    fn ring_keeps_the_newest_capacity() {
        let mut m = Replay::new(2, 3);
        for k in 0..5 {
            let (s, s2) = t(k as F);
            m.push(Transition { s: &s, a: k, r: k as F * 10.0, s2: &s2 });
        }
        assert_eq!(m.len(), 3);
        assert_eq!(m.pushed, 5);
        let mut kept: Vec<usize> = (0..3).map(|k| m.get(k).a).collect();
        kept.sort();
        assert_eq!(kept, vec![2, 3, 4]);
        let newest: Vec<(usize, F, F)> = m.newest(2).map(|x| (x.a, x.r, x.s2[1])).collect();
        assert_eq!(newest, vec![(3, 30.0, 3.5), (4, 40.0, 4.5)]);
    }

    #[test]
    fn n_step_returns_by_hand() {
        // Rewards 1, 2, 3, 4, 5 on states 0 → 1 → … → 5, γ = 0.5, n = 3.
        let mut m = Replay::new(1, 10);
        let mut ns = NStep::new(3, 0.5);
        let stored: Vec<bool> = (0..5).map(|k| ns.push(Transition { s: &[k as F], a: k, r: (k + 1) as F, s2: &[(k + 1) as F] }, &mut m)).collect();
        assert_eq!(stored, vec![false, false, true, true, true]);
        // (s0, a0, 1 + 0.5·2 + 0.25·3 = 2.75, s3), (s1, a1, 2 + 1.5 + 1 = 4.5, s4), (s2, a2, 3 + 2 + 1.25 = 6.25, s5).
        let got: Vec<(F, usize, F, F)> = m.newest(3).map(|t| (t.s[0], t.a, t.r, t.s2[0])).collect();
        assert_eq!(got, vec![(0.0, 0, 2.75, 3.0), (1.0, 1, 4.5, 4.0), (2.0, 2, 6.25, 5.0)]);
        // A break drops the waiting two: the next stored transition needs three new ones.
        ns.clear();
        let again: Vec<bool> = (0..3).map(|k| ns.push(Transition { s: &[k as F], a: 0, r: 0.0, s2: &[0.0] }, &mut m)).collect();
        assert_eq!(again, vec![false, false, true]);
        // n = 1: each transition as it is, bit for bit.
        let mut one = Replay::new(1, 4);
        let mut ns1 = NStep::new(1, 0.9);
        assert!(ns1.push(Transition { s: &[7.0], a: 2, r: -0.0, s2: &[8.0] }, &mut one));
        let t = one.get(0);
        assert_eq!((t.s[0], t.a, t.r.to_bits(), t.s2[0]), (7.0, 2, (-0.0 as F).to_bits(), 8.0));
    }

    #[test]
    fn sampling_is_uniform_and_seeded() {
        let mut m = Replay::new(1, 100);
        for k in 0..4 {
            m.push(Transition { s: &[k as F], a: k, r: 0.0, s2: &[0.0] });
        }
        let mut rng = crate::rng::stream(1, "replay-test", 0);
        let mut idx = Vec::new();
        m.sample(&mut rng, 40_000, &mut idx);
        let mut count = [0usize; 4];
        idx.iter().for_each(|&i| count[i] += 1);
        assert!(count.iter().all(|&c| (9_500..10_500).contains(&c)), "{count:?}");
        let mut again = Vec::new();
        m.sample(&mut crate::rng::stream(1, "replay-test", 0), 40_000, &mut again);
        assert_eq!(idx, again);
    }
}
