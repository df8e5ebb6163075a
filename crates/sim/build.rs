//! Links the binaries (`dcnlab-sim`, `dcnlab-bench`) with the code a run executes grouped first: the linker
//! script `link/hot.ld`, written by `bench/order/update.sh` from callgrind profiles of the benchmarks, puts
//! those functions in one output section ahead of `.text`. The kernel maps a binary's code in whole
//! folios around each page a run touches; with that code spread over the binary nearly all of its 2.2 MB
//! `.text` is resident in every run, grouped about half of it (`bench/README.md`, 2026-12-08). Only where
//! the linker takes GNU-style scripts (Linux); `DCNLAB_NO_CODE_ORDER=1` links without it. Names the script
//! lists that a build does not have (another toolchain, other dependencies) group nothing and cost nothing.

fn main() {
    println!("cargo:rerun-if-changed=link/hot.ld");
    println!("cargo:rerun-if-env-changed=DCNLAB_NO_CODE_ORDER");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux");
    if linux && std::env::var_os("DCNLAB_NO_CODE_ORDER").is_none() {
        let script = std::path::Path::new(&std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it")).join("link/hot.ld");
        println!("cargo:rustc-link-arg-bins=-T");
        println!("cargo:rustc-link-arg-bins={}", script.display());
    }
}
