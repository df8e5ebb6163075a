//! The agents' network: dense layers with ReLU, written out by hand so that a seed gives the same weights,
//! the same Q-values and the same training on every machine. Single precision (`f32`, the paper's budget
//! of 30 KB for the model reads as 4-byte values); every sum runs in one fixed order (no threads, no
//! fused multiply-add: Rust never contracts `a * b + c`), and the few functions beyond + − × ÷ go through
//! `libm`.
//!
//! Parameters live in one flat vector, layer by layer, each layer its weights `w[i·out + j]` (input `i`
//! to output `j`) then its biases: Adam, clipping, copies and the model file all see one slice.

use crate::rng::{self, Rng};

pub type F = f32;

/// A multilayer perceptron: `sizes = [inputs, hidden…, outputs]`, ReLU after every layer but the last.
#[derive(Clone, Debug, PartialEq)]
pub struct Mlp {
    sizes: Vec<usize>,
    pub p: Vec<F>,
}

/// Activations of one forward pass (`a[0]` the input, `a[l + 1]` the output of layer `l`), kept for the
/// backward pass.
#[derive(Clone, Debug, Default)]
pub struct Acts {
    a: Vec<Vec<F>>,
    d: Vec<F>,
    dx: Vec<F>,
    nz: Vec<usize>,
}

impl Acts {
    /// The network's output of the last forward pass.
    pub fn out(&self) -> &[F] {
        self.a.last().map(|v| v.as_slice()).unwrap_or(&[])
    }
}

/// Parameters of a network with these layer sizes.
pub fn n_params(sizes: &[usize]) -> usize {
    sizes.windows(2).map(|w| w[0] * w[1] + w[1]).sum()
}

/// Floating-point operations of one forward pass: a multiply and an add per weight (biases start the
/// sums; ReLU comparisons and the argmax are not counted).
pub fn flops(sizes: &[usize]) -> u64 {
    sizes.windows(2).map(|w| 2 * (w[0] * w[1]) as u64).sum()
}

impl Mlp {
    /// All parameters zero.
    pub fn zeros(sizes: &[usize]) -> Mlp {
        Mlp { sizes: sizes.to_vec(), p: vec![0.0; n_params(sizes)] }
    }

    /// He-uniform weights (`w ~ U(−√(6/fan_in), √(6/fan_in))`, He et al. 2015, the ReLU variant of
    /// Glorot's rule), zero biases, drawn in parameter order from `rng`.
    pub fn he_uniform(sizes: &[usize], rng: &mut Rng) -> Mlp {
        let mut m = Mlp::zeros(sizes);
        let mut off = 0;
        for w in sizes.windows(2) {
            let lim = libm::sqrt(6.0 / w[0] as f64);
            for k in 0..w[0] * w[1] {
                m.p[off + k] = ((2.0 * rng::unit(rng) - 1.0) * lim) as F;
            }
            off += w[0] * w[1] + w[1];
        }
        m
    }

    /// From layer sizes and a flat parameter vector (a model file); `None` if the lengths disagree.
    pub fn from_parts(sizes: Vec<usize>, p: Vec<F>) -> Option<Mlp> {
        (sizes.len() >= 2 && p.len() == n_params(&sizes)).then_some(Mlp { sizes, p })
    }

    pub fn sizes(&self) -> &[usize] {
        &self.sizes
    }

    pub fn inputs(&self) -> usize {
        self.sizes[0]
    }

    pub fn outputs(&self) -> usize {
        *self.sizes.last().unwrap()
    }

    /// Offset of layer `l`'s weights in `p` (its biases follow them).
    fn offset(&self, l: usize) -> usize {
        self.sizes[..=l].windows(2).map(|w| w[0] * w[1] + w[1]).sum()
    }

    /// Forward pass of `x`; the output is `acts.out()`.
    pub fn forward(&self, x: &[F], acts: &mut Acts) {
        assert_eq!(x.len(), self.sizes[0], "network input size");
        let n = self.sizes.len();
        acts.a.resize(n, Vec::new());
        acts.a[0].clear();
        acts.a[0].extend_from_slice(x);
        let mut off = 0;
        for l in 0..n - 1 {
            let (inp, out) = (self.sizes[l], self.sizes[l + 1]);
            let w = &self.p[off..off + inp * out];
            let b = &self.p[off + inp * out..off + inp * out + out];
            let (lo, hi) = acts.a.split_at_mut(l + 1);
            let (x, y) = (&lo[l], &mut hi[0]);
            // y_j = b_j + Σ_i x_i w_ij, summed in i order (row by row, so the loop over j vectorises
            // without reordering any sum).
            y.clear();
            y.extend_from_slice(b);
            for (i, &xi) in x.iter().enumerate() {
                if xi == 0.0 {
                    continue;
                }
                for (yj, &wij) in y.iter_mut().zip(&w[i * out..(i + 1) * out]) {
                    *yj += xi * wij;
                }
            }
            if l + 2 < n {
                for v in y.iter_mut() {
                    *v = v.max(0.0); // ReLU
                }
            }
            off += inp * out + out;
        }
    }

    /// Backward pass after `forward`: adds d(loss)/d(parameters) to `grad`, given `dout` =
    /// d(loss)/d(output).
    pub fn backward(&self, acts: &mut Acts, dout: &[F], grad: &mut [F]) {
        let n = self.sizes.len();
        assert_eq!(dout.len(), self.sizes[n - 1]);
        assert_eq!(grad.len(), self.p.len());
        let Acts { a, d, dx, nz } = acts;
        d.clear();
        d.extend_from_slice(dout);
        for l in (0..n - 1).rev() {
            let (inp, out) = (self.sizes[l], self.sizes[l + 1]);
            let off = self.offset(l);
            let x = &a[l];
            let (gw, gb) = grad[off..off + inp * out + out].split_at_mut(inp * out);
            let w = &self.p[off..off + inp * out];
            // A Q head's gradient is non-zero at the taken action(s) only: then loop over those alone.
            nz.clear();
            nz.extend((0..out).filter(|&j| d[j] != 0.0));
            let sparse = nz.len() * 4 <= out;
            // ∂L/∂b_j = d_j;  ∂L/∂w_ij = x_i d_j
            for (g, &dj) in gb.iter_mut().zip(d.iter()) {
                *g += dj;
            }
            for (i, &xi) in x.iter().enumerate() {
                if xi == 0.0 {
                    continue;
                }
                let row = &mut gw[i * out..(i + 1) * out];
                if sparse {
                    nz.iter().for_each(|&j| row[j] += xi * d[j]);
                } else {
                    for (g, &dj) in row.iter_mut().zip(d.iter()) {
                        *g += xi * dj;
                    }
                }
            }
            if l == 0 {
                break;
            }
            // ∂L/∂x_i = Σ_j w_ij d_j (in j order), through the ReLU that made x (zero where it was cut).
            dx.clear();
            for (i, &xi) in x.iter().enumerate() {
                if xi > 0.0 {
                    let row = &w[i * out..(i + 1) * out];
                    let mut s: F = 0.0;
                    if sparse {
                        nz.iter().for_each(|&j| s += row[j] * d[j]);
                    } else {
                        for (&wij, &dj) in row.iter().zip(d.iter()) {
                            s += wij * dj;
                        }
                    }
                    dx.push(s);
                } else {
                    dx.push(0.0);
                }
            }
            std::mem::swap(d, dx);
        }
    }
}

/// Huber loss of the error `x` and its derivative: ½x² for |x| ≤ δ, δ(|x| − ½δ) beyond (Huber 1964, the
/// "smooth L1" of DQN).
pub fn huber(x: F, delta: F) -> (F, F) {
    if x.abs() <= delta {
        (0.5 * x * x, x)
    } else {
        (delta * (x.abs() - 0.5 * delta), if x > 0.0 { delta } else { -delta })
    }
}

/// Scale `g` so that its global L2 norm is at most `max`; returns the norm before clipping.
pub fn clip_global_norm(g: &mut [F], max: F) -> F {
    let mut s: f64 = 0.0;
    for &v in g.iter() {
        s += v as f64 * v as f64;
    }
    let norm = libm::sqrt(s) as F;
    if norm > max {
        let k = max / norm;
        for v in g.iter_mut() {
            *v *= k;
        }
    }
    norm
}

/// Adam (Kingma & Ba 2015, Algorithm 1):
///   m ← β1·m + (1 − β1)·g;  v ← β2·v + (1 − β2)·g²;  m̂ = m/(1 − β1^t);  v̂ = v/(1 − β2^t);
///   θ ← θ − lr·m̂/(√v̂ + ε)
#[derive(Clone, Debug)]
pub struct Adam {
    pub lr: F,
    pub beta1: F,
    pub beta2: F,
    pub eps: F,
    pub(super) m: Vec<F>,
    pub(super) v: Vec<F>,
    pub(super) t: u32,
}

impl Adam {
    /// PyTorch's defaults but the learning rate: β1 = 0.9, β2 = 0.999, ε = 1e-8.
    pub fn new(n: usize, lr: F) -> Adam {
        Adam { lr, beta1: 0.9, beta2: 0.999, eps: 1e-8, m: vec![0.0; n], v: vec![0.0; n], t: 0 }
    }

    pub fn step(&mut self, p: &mut [F], g: &[F]) {
        assert_eq!(p.len(), self.m.len());
        self.t += 1;
        let bc1 = 1.0 - libm::powf(self.beta1, self.t as F);
        let bc2 = 1.0 - libm::powf(self.beta2, self.t as F);
        for k in 0..p.len() {
            self.m[k] = self.beta1 * self.m[k] + (1.0 - self.beta1) * g[k];
            self.v[k] = self.beta2 * self.v[k] + (1.0 - self.beta2) * g[k] * g[k];
            let mh = self.m[k] / bc1;
            let vh = self.v[k] / bc2;
            p[k] -= self.lr * mh / (libm::sqrtf(vh) + self.eps);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 2 → 2 → 1 network with every parameter set by hand.
    fn tiny() -> Mlp {
        // layer 0: w = [[1, −1], [2, 0.5]] (rows = inputs), b = [0, 0.5]; layer 1: w = [[1], [−2]], b = [0.25]
        Mlp::from_parts(vec![2, 2, 1], vec![1.0, -1.0, 2.0, 0.5, 0.0, 0.5, 1.0, -2.0, 0.25]).unwrap()
    }

    #[test]
    fn sizes_count_parameters_and_flops() {
        // The default network: 18 inputs, {20, 40, 40, 20}, 1100 Q-values.
        let s = [18, 20, 40, 40, 20, 1100];
        assert_eq!(n_params(&s), 18 * 20 + 20 + 20 * 40 + 40 + 40 * 40 + 40 + 40 * 20 + 20 + 20 * 1100 + 1100);
        assert_eq!(n_params(&s), 26_780);
        assert_eq!(flops(&s), 2 * (360 + 800 + 1600 + 800 + 22_000));
    }

    #[test]
    fn forward_by_hand() {
        let m = tiny();
        let mut a = Acts::default();
        // x = (1, 1): hidden pre = (1 + 2 + 0, −1 + 0.5 + 0.5) = (3, 0) → ReLU (3, 0); out = 0.25 + 3 = 3.25
        m.forward(&[1.0, 1.0], &mut a);
        assert_eq!(a.out(), &[3.25]);
        // x = (−1, 0): hidden pre = (−1, 1.5) → (0, 1.5); out = 0.25 − 3 = −2.75 (the ReLU cuts the first)
        m.forward(&[-1.0, 0.0], &mut a);
        assert_eq!(a.out(), &[-2.75]);
    }

    #[test]
    fn backward_by_hand_and_against_finite_differences() {
        let m = tiny();
        let mut a = Acts::default();
        m.forward(&[-1.0, 0.0], &mut a);
        let mut g = vec![0.0; m.p.len()];
        m.backward(&mut a, &[1.0], &mut g);
        // out = b2 + w2·h, h = (0, 1.5): ∂/∂w2 = h, ∂/∂b2 = 1; through the live unit 1 only:
        // ∂/∂w_i1 = x_i·w2_1 = (−1·−2, 0) = (2, 0), ∂/∂b1_1 = −2; the dead unit 0 gets nothing.
        assert_eq!(g, vec![0.0, 2.0, 0.0, 0.0, 0.0, -2.0, 0.0, 1.5, 1.0]);
        // Deeper random networks: the gradient matches central differences (f64 reference), with a dense
        // output gradient and with a one-hot one (a Q head's: the sparse path).
        let mut rng = crate::rng::stream(5, "nn-test", 0);
        for dout in [vec![1.0, -0.5], vec![0.0, 0.0, 0.0, 0.0, 0.0, 0.75, 0.0, 0.0]] {
            let m = Mlp::he_uniform(&[3, 4, 4, dout.len()], &mut rng);
            let x = [0.3, -0.7, 0.9];
            let mut a = Acts::default();
            m.forward(&x, &mut a);
            let mut g = vec![0.0; m.p.len()];
            m.backward(&mut a, &dout, &mut g);
            let f = |mm: &Mlp| {
                let mut a = Acts::default();
                mm.forward(&x, &mut a);
                a.out().iter().zip(&dout).map(|(&o, &d)| o as f64 * d as f64).sum::<f64>()
            };
            for k in 0..m.p.len() {
                let h = 1e-2;
                let (mut up, mut dn) = (m.clone(), m.clone());
                up.p[k] += h;
                dn.p[k] -= h;
                let num = (f(&up) - f(&dn)) / (2.0 * h as f64);
                assert!((num - g[k] as f64).abs() < 1e-3, "param {k}: numeric {num}, backprop {}", g[k]);
            }
            assert!(g.iter().filter(|v| **v != 0.0).count() > 10);
        }
    }

    #[test]
    fn huber_on_both_sides_of_delta() {
        // Inside: ½x², slope x.
        assert_eq!(huber(0.5, 1.0), (0.125, 0.5));
        assert_eq!(huber(-1.0, 1.0), (0.5, -1.0));
        // Outside: δ(|x| − ½δ), slope ±δ — a squared loss would give 4.5 and 3.
        assert_eq!(huber(3.0, 1.0), (2.5, 1.0));
        assert_eq!(huber(-3.0, 1.0), (2.5, -1.0));
        // Another δ: x = 3, δ = 2: 2·(3 − 1) = 4, slope 2.
        assert_eq!(huber(3.0, 2.0), (4.0, 2.0));
    }

    #[test]
    fn adam_first_steps_by_hand() {
        let mut p = vec![1.0f32, -2.0];
        let mut opt = Adam::new(2, 0.1);
        opt.step(&mut p, &[0.5, -4.0]);
        // t = 1: m = 0.1g, v = 0.001g², m̂ = g, v̂ = g², step = lr·g/(|g| + ε) = ±0.1 (ε negligible).
        assert!((p[0] - 0.9).abs() < 1e-6 && (p[1] + 1.9).abs() < 1e-6, "{p:?}");
        // t = 2 with g = (0.5, 1): by hand in f64.
        let g2 = [0.5f64, 1.0];
        let g1 = [0.5f64, -4.0];
        let want: Vec<f64> = (0..2)
            .map(|k| {
                let m = 0.9 * (0.1 * g1[k]) + 0.1 * g2[k];
                let v = 0.999 * (0.001 * g1[k] * g1[k]) + 0.001 * g2[k] * g2[k];
                let (mh, vh) = (m / (1.0 - 0.81), v / (1.0 - 0.999f64 * 0.999));
                [0.9, -1.9][k] - 0.1 * mh / (vh.sqrt() + 1e-8)
            })
            .collect();
        opt.step(&mut p, &[0.5, 1.0]);
        for k in 0..2 {
            assert!((p[k] as f64 - want[k]).abs() < 1e-5, "param {k}: {} vs {}", p[k], want[k]);
        }
        // Without bias correction the first step would be lr·0.1g/(√0.001|g|) ≈ 0.316·lr: not 0.1.
    }

    #[test]
    fn clipping_scales_to_the_global_norm() {
        let mut g = vec![3.0f32, 4.0];
        assert_eq!(clip_global_norm(&mut g, 10.0), 5.0);
        assert_eq!(g, vec![3.0, 4.0]);
        assert_eq!(clip_global_norm(&mut g, 1.0), 5.0);
        assert!((g[0] - 0.6).abs() < 1e-7 && (g[1] - 0.8).abs() < 1e-7, "{g:?}");
    }

    #[test]
    fn he_uniform_is_seeded_and_bounded() {
        let s = [18, 20, 40];
        let a = Mlp::he_uniform(&s, &mut crate::rng::stream(1, "acc", 0));
        let b = Mlp::he_uniform(&s, &mut crate::rng::stream(1, "acc", 0));
        let c = Mlp::he_uniform(&s, &mut crate::rng::stream(2, "acc", 0));
        assert_eq!(a.p.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), b.p.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
        assert_ne!(a, c);
        let lim = (6.0f32 / 18.0).sqrt();
        assert!(a.p[..360].iter().all(|w| w.abs() <= lim) && a.p[..360].iter().any(|w| w.abs() > 0.9 * lim));
        assert!(a.p[360..380].iter().all(|&b| b == 0.0), "biases start at zero");
    }
}
