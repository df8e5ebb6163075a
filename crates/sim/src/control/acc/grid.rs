//! ACC's action space (spec/acc.md §3): 55 threshold pairs × 20 marking probabilities = 1100 RED settings
//! per port (the paper's joint space is written `{55 × 20}^ports`). Thresholds come from a ladder of
//! levels, fine for small values and coarse for large ones; a pair is `Kmin = L[i], Kmax = L[j]`,
//! `i ≤ j` (`i == j` is a step at that level), so ten levels give 10·11/2 = 55 pairs. Action
//! `a = pair · P + p`, pairs enumerated by `i` then `j ≥ i`.

/// Default levels (bytes): the ladder 20 KB · 2^n up to 640 KB, then the coarse MB steps of the reading
/// notes. [DEFAULT, acc.md §3]
pub const LEVELS: [u64; 10] = [20_000, 40_000, 80_000, 160_000, 320_000, 640_000, 1_000_000, 2_000_000, 5_000_000, 10_000_000];

/// Default marking probabilities: 0.05, 0.10, …, 1.00. [DEFAULT, acc.md §3]
pub fn default_pmax() -> Vec<f64> {
    (1..=20).map(|k| k as f64 / 20.0).collect()
}

/// One RED setting.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Setting {
    pub kmin: u64,
    pub kmax: u64,
    pub pmax: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Grid {
    /// Threshold levels in bytes, strictly increasing.
    pub levels: Vec<u64>,
    /// Marking probabilities, strictly increasing, in (0, 1].
    pub pmax: Vec<f64>,
    /// Level indexes `(i, j)` of each pair, `i ≤ j`.
    pairs: Vec<(usize, usize)>,
}

impl Grid {
    /// A grid over `levels` and `pmax`; an error says what is wrong with either list.
    pub fn new(levels: Vec<u64>, pmax: Vec<f64>) -> Result<Grid, (&'static str, String)> {
        if levels.is_empty() || levels.windows(2).any(|w| w[0] >= w[1]) || levels[0] == 0 {
            return Err(("levels", "give positive sizes in increasing order, e.g. [\"20KB\", \"40KB\", …]".into()));
        }
        if levels.len() > 64 {
            return Err(("levels", format!("{} levels: at most 64", levels.len())));
        }
        if pmax.is_empty() || pmax.windows(2).any(|w| w[0] >= w[1]) || !pmax.iter().all(|&p| p > 0.0 && p <= 1.0) {
            return Err(("pmax_levels", "give probabilities in (0, 1] in increasing order, e.g. [0.05, 0.1, …, 1.0]".into()));
        }
        let n = levels.len();
        let pairs = (0..n).flat_map(|i| (i..n).map(move |j| (i, j))).collect();
        Ok(Grid { levels, pmax, pairs })
    }

    /// The default grid of acc.md §3 (1100 settings).
    pub fn paper() -> Grid {
        Grid::new(LEVELS.to_vec(), default_pmax()).unwrap()
    }

    /// Number of actions.
    pub fn len(&self) -> usize {
        self.pairs.len() * self.pmax.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Level indexes `(i, j)` and probability index `p` of action `a`.
    pub fn parts(&self, a: usize) -> (usize, usize, usize) {
        let (i, j) = self.pairs[a / self.pmax.len()];
        (i, j, a % self.pmax.len())
    }

    /// The action with `Kmin = L[i]`, `Kmax = L[j]` (`i ≤ j`) and `pmax[p]`.
    pub fn action(&self, i: usize, j: usize, p: usize) -> usize {
        debug_assert!(i <= j && j < self.levels.len() && p < self.pmax.len());
        let n = self.levels.len();
        // Pairs before row i: n + (n − 1) + … + (n − i + 1) = i·n − i(i − 1)/2.
        let pair = i * n - i * (i.saturating_sub(1)) / 2 + (j - i);
        pair * self.pmax.len() + p
    }

    pub fn setting(&self, a: usize) -> Setting {
        let (i, j, p) = self.parts(a);
        Setting { kmin: self.levels[i], kmax: self.levels[j], pmax: self.pmax[p] }
    }

    /// Where `bytes` sits on the level ladder, as a (fractional) level index in [0, levels − 1]: exact on
    /// a level, linear between two, clamped outside. A queue's initial static setting is rarely on the
    /// ladder; this keeps the state's `ECN_c` feature meaningful for it.
    pub fn level_position(&self, bytes: u64) -> f64 {
        let l = &self.levels;
        if bytes <= l[0] {
            return 0.0;
        }
        for k in 1..l.len() {
            if bytes <= l[k] {
                return (k - 1) as f64 + (bytes - l[k - 1]) as f64 / (l[k] - l[k - 1]) as f64;
            }
        }
        (l.len() - 1) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_grid_has_1100_settings_all_with_kmin_at_most_kmax() {
        let g = Grid::paper();
        assert_eq!(g.len(), 1100);
        let all: Vec<Setting> = (0..g.len()).map(|a| g.setting(a)).collect();
        assert!(all.iter().all(|s| s.kmin <= s.kmax && s.pmax > 0.0 && s.pmax <= 1.0));
        // Every (Kmin ≤ Kmax, pmax) combination exactly once: 55 distinct pairs, each with 20 probabilities.
        let mut keys: Vec<(u64, u64, u64)> = all.iter().map(|s| (s.kmin, s.kmax, (s.pmax * 100.0).round() as u64)).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), 1100);
        let mut pairs: Vec<(u64, u64)> = all.iter().map(|s| (s.kmin, s.kmax)).collect();
        pairs.dedup();
        assert_eq!(pairs.len(), 55);
        assert_eq!(g.setting(0), Setting { kmin: 20_000, kmax: 20_000, pmax: 0.05 });
        assert_eq!(g.setting(1099), Setting { kmin: 10_000_000, kmax: 10_000_000, pmax: 1.0 });
        // Layout a = pair·20 + p, pairs by i then j: pair 1 is (20 KB, 40 KB).
        assert_eq!(g.setting(20 + 3), Setting { kmin: 20_000, kmax: 40_000, pmax: 0.2 });
    }

    #[test]
    fn action_and_parts_are_inverse() {
        let g = Grid::paper();
        for a in 0..g.len() {
            let (i, j, p) = g.parts(a);
            assert!(i <= j);
            assert_eq!(g.action(i, j, p), a);
        }
    }

    #[test]
    fn level_position_is_exact_on_levels_and_linear_between() {
        let g = Grid::paper();
        assert_eq!(g.level_position(20_000), 0.0);
        assert_eq!(g.level_position(5_000), 0.0);
        assert_eq!(g.level_position(640_000), 5.0);
        assert_eq!(g.level_position(30_000), 0.5);
        assert_eq!(g.level_position(1_500_000), 6.5);
        assert_eq!(g.level_position(20_000_000), 9.0);
    }

    #[test]
    fn bad_lists_are_refused() {
        assert_eq!(Grid::new(vec![40, 20], default_pmax()).unwrap_err().0, "levels");
        assert_eq!(Grid::new(vec![], default_pmax()).unwrap_err().0, "levels");
        assert_eq!(Grid::new(vec![20, 40], vec![0.0, 0.5]).unwrap_err().0, "pmax_levels");
        assert_eq!(Grid::new(vec![20, 40], vec![0.5, 1.5]).unwrap_err().0, "pmax_levels");
        assert_eq!(Grid::new(vec![20, 40, 80], vec![0.5, 1.0]).unwrap().len(), 6 * 2);
    }
}
