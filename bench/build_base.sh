#!/bin/sh
# Build a baseline commit's binaries once, apart from this tree, and print the path of its dcnlab-bench:
# bench-results/base-<commit>/src is `git archive <commit>`, bench-results/base-<commit>/target its own
# cargo target folder. usage (from the repository root): bench/build_base.sh [COMMIT]   (default 0fb7fca)
set -e
commit=$(git rev-parse --verify --quiet "${1:-0fb7fca}^{commit}") || { echo "error: no commit ${1:-0fb7fca}" >&2; exit 2; }
short=$(git rev-parse --short=12 "$commit")
dir=bench-results/base-$short
exe=$dir/target/release/dcnlab-bench
if [ ! -x "$exe" ]; then
    echo "building $short's dcnlab-bench in $dir (once; later runs reuse it)" >&2
    rm -rf "$dir/src"
    mkdir -p "$dir/src"
    git archive "$commit" | tar -x -C "$dir/src"
    # From inside the copy, so that its own cargo configuration applies.
    # The whole workspace's features, as `cargo build --release` resolves them: the same symbols, so that
    # the code order of crates/sim/link/hot.ld applies to this build as to the tree's (bench/order/README.md).
    (cd "$dir/src" && cargo build --release --bins --target-dir ../target) >&2
fi
echo "$exe"
