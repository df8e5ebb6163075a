//! Training-state files (`save_train_state`, `train_state`): what the central learner of `shared` and
//! `from_scratch` has beyond its model — the target network, Adam's moments and step count, the count of
//! training steps (which times the target copies) and the global replay memory — so that offline
//! pre-training, whose episodes are separate runs (`dcnlab train`), keeps **one** global replay memory
//! and one learner across its episodes as acc.md §5–§6 describe, instead of starting each 200 ms episode
//! with an empty memory, fresh moments and a target network that is never copied (400 steps < C = 500).
//! The online network is the model (`model`/`save_model`), not repeated here.
//!
//! ```text
//! "DCNLAB-ACC-STATE\n"                 17 bytes
//! header length                        u32, little-endian
//! header                               JSON: format version, parameter count, state dimension, memory
//!                                      capacity and length, next slot, transitions pushed, learner
//!                                      steps, Adam's step count
//! target network, Adam m, Adam v       f32 little-endian, `params` each
//! memory states, rewards               f32 little-endian (2·dim·len, len)
//! memory actions                       u32 little-endian (len)
//! ```
//!
//! A reload restores every value bit for bit, so a training split into episodes stays deterministic.

use super::ddqn::Learner;
use super::model::{f32s, frame, put_f32s, unframe};
use super::nn::F;
use super::replay::Replay;
use serde::{Deserialize, Serialize};

const MAGIC: &[u8] = b"DCNLAB-ACC-STATE\n";
const VERSION: u32 = 1;

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Header {
    version: u32,
    params: usize,
    dim: usize,
    capacity: usize,
    len: usize,
    next: usize,
    pushed: u64,
    steps: u64,
    adam_t: u32,
}

/// The learner's state beside its online network, and its memory, checked when read.
#[derive(Clone, Debug)]
pub struct TrainState {
    target: Vec<F>,
    m: Vec<F>,
    v: Vec<F>,
    adam_t: u32,
    steps: u64,
    mem: Replay,
}

pub fn to_bytes(l: &Learner, mem: &Replay) -> Vec<u8> {
    let h = Header {
        version: VERSION,
        params: l.online.p.len(),
        dim: mem.dim,
        capacity: mem.capacity,
        len: mem.len(),
        next: mem.next,
        pushed: mem.pushed,
        steps: l.steps,
        adam_t: l.adam.t,
    };
    let mut out = frame(MAGIC, &h, 3 * h.params + mem.states.len() + 2 * mem.len());
    put_f32s(&mut out, &l.target.p);
    put_f32s(&mut out, &l.adam.m);
    put_f32s(&mut out, &l.adam.v);
    put_f32s(&mut out, &mem.states);
    put_f32s(&mut out, &mem.rewards);
    mem.actions.iter().for_each(|a| out.extend_from_slice(&a.to_le_bytes()));
    out
}

/// The state in `bytes`, for a network of `params` parameters, states of `dim` numbers and a memory of
/// `capacity` transitions (the scenario's; a file made for others is refused, naming the difference).
pub fn from_bytes(bytes: &[u8], params: usize, dim: usize, capacity: usize) -> Result<TrainState, String> {
    let (header, body) = unframe(bytes, MAGIC, "training-state")?;
    let h: Header = serde_json::from_slice(header).map_err(|e| format!("the training-state header is unreadable: {e}"))?;
    if h.version != VERSION {
        return Err(format!("training-state format version {}; this build reads version {VERSION}", h.version));
    }
    for (what, file, here) in [("network parameters", h.params, params), ("state inputs", h.dim, dim), ("replay capacity (global_replay)", h.capacity, capacity)] {
        if file != here {
            return Err(format!("the training state was made for {file} {what}; this scenario has {here}"));
        }
    }
    if h.len > h.capacity || h.next >= h.capacity.max(1) || (h.len < h.capacity && h.next != h.len % h.capacity) {
        return Err("the training-state header is inconsistent (memory length and next slot)".into());
    }
    let floats = 3 * h.params + 2 * h.dim * h.len + h.len;
    if body.len() != 4 * floats + 4 * h.len {
        return Err(format!("the training-state file holds {} bytes of values; its header needs {}", body.len(), 4 * (floats + h.len)));
    }
    let f = f32s(&body[..4 * floats]);
    let actions: Vec<u32> = body[4 * floats..].chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    let (p, s) = (h.params, 2 * h.dim * h.len);
    let mem = Replay {
        dim: h.dim,
        capacity: h.capacity,
        states: f[3 * p..3 * p + s].to_vec(),
        actions,
        rewards: f[3 * p + s..].to_vec(),
        next: h.next,
        pushed: h.pushed,
    };
    Ok(TrainState { target: f[..p].to_vec(), m: f[p..2 * p].to_vec(), v: f[2 * p..3 * p].to_vec(), adam_t: h.adam_t, steps: h.steps, mem })
}

pub fn load(path: &str, params: usize, dim: usize, capacity: usize) -> Result<TrainState, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read the training state `{path}`: {e}"))?;
    from_bytes(&bytes, params, dim, capacity).map_err(|e| format!("`{path}`: {e}"))
}

pub fn save(path: &str, l: &Learner, mem: &Replay) -> Result<(), String> {
    std::fs::write(path, to_bytes(l, mem)).map_err(|e| format!("cannot write the training state to `{path}`: {e}"))
}

impl TrainState {
    /// Put the state into a learner (whose online network is the model it was saved beside) and return
    /// the memory.
    pub fn restore(self, l: &mut Learner) -> Replay {
        l.target.p.copy_from_slice(&self.target);
        l.adam.m = self.m;
        l.adam.v = self.v;
        l.adam.t = self.adam_t;
        l.steps = self.steps;
        self.mem
    }
}

#[cfg(test)]
mod tests {
    use super::super::ddqn::{Head, Hyper};
    use super::super::nn::Mlp;
    use super::super::replay::Transition;
    use super::*;

    fn setup() -> (Learner, Replay) {
        let mut rng = crate::rng::stream(5, "state-test", 0);
        let l = Learner::new(Mlp::he_uniform(&[3, 8, 4], &mut rng), 1e-2);
        let mut mem = Replay::new(3, 5);
        for k in 0..7 {
            let x = k as F;
            mem.push(Transition { s: &[x, 1.0, -x], a: k % 4, r: 0.1 * x, s2: &[x + 1.0, 0.0, 0.5] });
        }
        (l, mem)
    }

    fn h() -> Hyper {
        Hyper { gamma: 0.9, lr: 1e-2, batch: 4, clip: 10.0, huber_delta: 1.0, target_sync: 3, n_step: 1 }
    }

    /// Training straight on, and training split in two with the state written and read between the
    /// halves, give the same weights bit for bit; a split that drops the state (a fresh learner from the
    /// model alone, an empty memory) does not.
    #[test]
    fn a_split_training_resumes_bit_for_bit() {
        let head = Head::Full { actions: 4 };
        let idx = [0, 3, 4, 1];
        let (mut whole, mut mem) = setup();
        for _ in 0..5 {
            whole.train(&mem, &idx, &head, &h());
        }
        let (mut first, mem1) = setup();
        for _ in 0..2 {
            first.train(&mem1, &idx, &head, &h());
        }
        let bytes = to_bytes(&first, &mem1);
        let st = from_bytes(&bytes, first.online.p.len(), 3, 5).unwrap();
        let mut second = Learner::new(first.online.clone(), 1e-2);
        let mem2 = st.restore(&mut second);
        assert_eq!(mem2.len(), 5);
        assert_eq!((mem2.pushed, mem2.next), (7, 2));
        for _ in 0..3 {
            second.train(&mem2, &idx, &head, &h());
        }
        let bits = |m: &Mlp| m.p.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&second.online), bits(&whole.online));
        assert_eq!(bits(&second.target), bits(&whole.target));
        // The same split without the state: a different result.
        let mut fresh = Learner::new(first.online.clone(), 1e-2);
        for _ in 0..3 {
            fresh.train(&mem2, &idx, &head, &h());
        }
        assert_ne!(bits(&fresh.online), bits(&whole.online));
        // The memory keeps its ring order: the same newest transitions.
        mem.push(Transition { s: &[9.0, 9.0, 9.0], a: 1, r: 9.0, s2: &[0.0; 3] });
        let mut mem3 = from_bytes(&bytes, first.online.p.len(), 3, 5).unwrap().restore(&mut fresh);
        mem3.push(Transition { s: &[9.0, 9.0, 9.0], a: 1, r: 9.0, s2: &[0.0; 3] });
        let rows = |m: &Replay| m.newest(5).map(|t| (t.s.to_vec(), t.a, t.r.to_bits(), t.s2.to_vec())).collect::<Vec<_>>();
        assert_eq!(rows(&mem3), rows(&mem));
    }

    #[test]
    fn a_state_for_another_scenario_is_refused() {
        let (l, mem) = setup();
        let bytes = to_bytes(&l, &mem);
        let n = l.online.p.len();
        assert!(from_bytes(&bytes, n + 1, 3, 5).unwrap_err().contains("network parameters"));
        assert!(from_bytes(&bytes, n, 4, 5).unwrap_err().contains("state inputs"));
        assert!(from_bytes(&bytes, n, 3, 6).unwrap_err().contains("global_replay"));
        assert!(from_bytes(&bytes[..bytes.len() - 4], n, 3, 5).unwrap_err().contains("bytes of values"));
        assert!(from_bytes(b"DCNLAB-ACC-MODEL\n", n, 3, 5).unwrap_err().contains("not a dcnlab ACC training-state"));
    }
}
