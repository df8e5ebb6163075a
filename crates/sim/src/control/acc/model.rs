//! Model files: a small self-describing binary that reloads bit for bit.
//!
//! ```text
//! "DCNLAB-ACC-MODEL\n"                 17 bytes
//! header length                        u32, little-endian
//! header                               JSON: format version, dtype, layer sizes, head, history,
//!                                      features, threshold levels (bytes), pmax levels, parameter count
//! parameters                           f32 little-endian, in `Mlp::p` order
//! ```
//!
//! The header lets a load refuse a model made for another state, network or action grid, naming what
//! differs.

use super::nn::{Mlp, F};
use super::{Params, FEATURES};
use serde::{Deserialize, Serialize};

const MAGIC: &[u8] = b"DCNLAB-ACC-MODEL\n";
const VERSION: u32 = 1;

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Header {
    version: u32,
    dtype: String,
    sizes: Vec<usize>,
    head: String,
    history: usize,
    features: usize,
    levels: Vec<u64>,
    pmax_levels: Vec<f64>,
    params: usize,
}

fn header(m: &Mlp, p: &Params) -> Header {
    Header {
        version: VERSION,
        dtype: "f32le".into(),
        sizes: m.sizes().to_vec(),
        head: p.head.name().into(),
        history: p.history,
        features: FEATURES,
        levels: p.grid.levels.clone(),
        pmax_levels: p.grid.pmax.clone(),
        params: m.p.len(),
    }
}

/// The framing both ACC file kinds share (this one and `train_state.rs`): `magic`, the JSON header's
/// length (u32, little-endian), the header, then the values.
pub(super) fn frame(magic: &[u8], header: &impl serde::Serialize, values: usize) -> Vec<u8> {
    let h = serde_json::to_vec(header).expect("a file header serialises");
    let mut out = Vec::with_capacity(magic.len() + 4 + h.len() + 4 * values);
    out.extend_from_slice(magic);
    out.extend_from_slice(&(h.len() as u32).to_le_bytes());
    out.extend_from_slice(&h);
    out
}

/// (the JSON header, the values' bytes) of a `frame`d file; `what` names the file kind in errors.
pub(super) fn unframe<'a>(bytes: &'a [u8], magic: &[u8], what: &str) -> Result<(&'a [u8], &'a [u8]), String> {
    let tag = String::from_utf8_lossy(&magic[..magic.len() - 1]);
    let rest = bytes.strip_prefix(magic).ok_or_else(|| format!("not a dcnlab ACC {what} file (it lacks the {tag} header)"))?;
    let short = || format!("the {what} file is cut short");
    let n = u32::from_le_bytes(rest.get(..4).ok_or_else(short)?.try_into().unwrap()) as usize;
    let header = rest.get(4..4 + n).ok_or_else(short)?;
    Ok((header, &rest[4 + n..]))
}

/// f32 values, little-endian, appended to `out`.
pub(super) fn put_f32s(out: &mut Vec<u8>, v: &[F]) {
    v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
}

/// Little-endian f32 values read back.
pub(super) fn f32s(bytes: &[u8]) -> Vec<F> {
    bytes.chunks_exact(4).map(|c| F::from_le_bytes(c.try_into().unwrap())).collect()
}

/// The file's bytes.
pub fn to_bytes(m: &Mlp, p: &Params) -> Vec<u8> {
    let mut out = frame(MAGIC, &header(m, p), m.p.len());
    put_f32s(&mut out, &m.p);
    out
}

/// The network in `bytes`, checked against the scenario's state, network and grid.
pub fn from_bytes(bytes: &[u8], p: &Params) -> Result<Mlp, String> {
    let (json, body) = unframe(bytes, MAGIC, "model")?;
    let h: Header = serde_json::from_slice(json).map_err(|e| format!("the model file's header is unreadable: {e}"))?;
    if h.version != VERSION || h.dtype != "f32le" {
        return Err(format!("model format version {} ({}); this build reads version {VERSION} (f32le)", h.version, h.dtype));
    }
    let want = header(&Mlp::zeros(&p.sizes), p);
    let differs = |what: &str, file: String, here: String| {
        Err(format!("the model was made for {what} = {file}; this scenario has {here} (set it to match, or train a new model)"))
    };
    if h.history != want.history || h.features != want.features {
        return differs("history", h.history.to_string(), want.history.to_string());
    }
    if h.head != want.head {
        return differs("head", h.head, want.head);
    }
    // The pmax list goes through JSON as decimal text: compare it to a far finer tolerance than any grid step.
    let same_pmax = h.pmax_levels.len() == want.pmax_levels.len()
        && h.pmax_levels.iter().zip(&want.pmax_levels).all(|(a, b)| (a - b).abs() <= 1e-12);
    if h.levels != want.levels || !same_pmax {
        return differs("levels / pmax_levels", format!("{:?} / {:?}", h.levels, h.pmax_levels), format!("{:?} / {:?}", want.levels, want.pmax_levels));
    }
    if h.sizes != want.sizes {
        return differs("layer sizes [inputs, hidden…, outputs]", format!("{:?}", h.sizes), format!("{:?}", want.sizes));
    }
    if body.len() != 4 * h.params || h.params != want.params {
        return Err(format!("the model file holds {} parameter bytes; {} parameters need {}", body.len(), want.params, 4 * want.params));
    }
    Ok(Mlp::from_parts(h.sizes, f32s(body)).expect("sizes checked"))
}

pub fn save(path: &str, m: &Mlp, p: &Params) -> Result<(), String> {
    std::fs::write(path, to_bytes(m, p)).map_err(|e| format!("cannot write the model to `{path}`: {e}"))
}

pub fn load(path: &str, p: &Params) -> Result<Mlp, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read the model `{path}`: {e}"))?;
    from_bytes(&bytes, p).map_err(|e| format!("`{path}`: {e}"))
}

#[cfg(test)]
mod tests {
    use super::super::nn::Acts;
    use super::*;

    fn params(extra: &str) -> Params {
        let c: super::super::Cfg = toml::from_str(extra).unwrap();
        c.resolve("switch.controller", 1500).unwrap()
    }

    #[test]
    fn save_load_gives_the_same_q_values_bit_for_bit() {
        let p = params("");
        let m = Mlp::he_uniform(&p.sizes, &mut crate::rng::stream(9, "acc", 0));
        let back = from_bytes(&to_bytes(&m, &p), &p).unwrap();
        assert_eq!(m.p.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), back.p.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
        let x: Vec<F> = (0..p.sizes[0]).map(|k| (k as F * 0.37).sin()).collect();
        let (mut a, mut b) = (Acts::default(), Acts::default());
        m.forward(&x, &mut a);
        back.forward(&x, &mut b);
        assert_eq!(a.out().len(), 1100);
        assert!(a.out().iter().zip(b.out()).all(|(u, v)| u.to_bits() == v.to_bits()));
        // Through a file too.
        let path = std::env::temp_dir().join(format!("dcnlab-acc-model-{}.bin", std::process::id()));
        let path = path.to_str().unwrap();
        save(path, &m, &p).unwrap();
        assert_eq!(load(path, &p).unwrap(), m);
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn a_model_for_another_scenario_is_refused_with_the_reason() {
        let p = params("");
        let m = Mlp::he_uniform(&p.sizes, &mut crate::rng::stream(9, "acc", 0));
        let bytes = to_bytes(&m, &p);
        assert!(from_bytes(&bytes, &params("history = 4")).unwrap_err().contains("history = 3"));
        assert!(from_bytes(&bytes, &params("hidden = [20, 20]")).unwrap_err().contains("layer sizes"));
        assert!(from_bytes(&bytes, &params("head = \"branching\"")).unwrap_err().contains("head = full"));
        assert!(from_bytes(&bytes, &params("pmax_levels = [0.5, 1.0]")).unwrap_err().contains("levels"));
        assert!(from_bytes(&bytes[..bytes.len() - 4], &p).unwrap_err().contains("parameter bytes"));
        assert!(from_bytes(b"hello", &p).unwrap_err().contains("not a dcnlab ACC model"));
    }
}
