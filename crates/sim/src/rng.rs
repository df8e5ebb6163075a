//! Named random streams. Every component draws from its own generator, derived from the scenario seed
//! and the component's name, so that changing one component (an AQM, a transport) leaves every other
//! stream — above all the traffic stream — untouched (common random numbers across compared schemes).

use rand_pcg::Pcg64Mcg;

pub type Rng = Pcg64Mcg;

/// SplitMix64 finaliser: a fixed, well-mixed 64-bit hash.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a of a name; stable across machines and versions.
fn name_hash(name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The stream for component `name` with instance number `index`.
pub fn stream(seed: u64, name: &str, index: u64) -> Rng {
    let a = mix64(seed ^ mix64(name_hash(name)));
    let b = mix64(a ^ mix64(index.wrapping_add(0x5151)));
    let state = ((a as u128) << 64) | b as u128;
    Pcg64Mcg::new(state | 1)
}

/// Uniform f64 in [0, 1) from 53 random bits.
#[inline]
pub fn unit(rng: &mut Rng) -> f64 {
    use rand::RngCore;
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Test helper: run `f` on a stream and assert that it drew nothing from it (a draw that decides nothing
/// would shift every later decision of the seed); returns what `f` returned.
#[cfg(test)]
pub(crate) fn without_draw<T>(what: &str, f: impl FnOnce(&mut Rng) -> T) -> T {
    let mut rng = stream(0, "untouched", 0);
    let before = rng.clone();
    let out = f(&mut rng);
    assert!(rng == before, "{what} drew a random number");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_draw_catches_a_draw() {
        assert_eq!(without_draw("nothing", |_| 3), 3);
        let caught = std::panic::catch_unwind(|| without_draw("a draw", |r| unit(r)));
        assert!(caught.is_err());
    }
}
