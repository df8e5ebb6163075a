#!/bin/sh
# Regenerate crates/sim/link/hot.ld, the order the binaries' code is linked in (bench/order/README.md):
# callgrind profiles of the shortened benchmarks 1-3 (dcnlab-bench --one) and of the incast written out by
# dcnlab-sim run, then the functions they execute, grouped first. About three minutes, after a first build
# of its own target folder.
# usage (from the repository root): bench/order/update.sh
set -e
# Profiled unordered, in a target folder of its own: valgrind attributes the code of a binary linked with
# a .text.hot to no function. The symbols are the same as those of `cargo build --release --bins`.
bins=target/order-profile/release
DCNLAB_NO_CODE_ORDER=1 cargo build --release --bins --target-dir target/order-profile
tmp=$(mktemp -d)
cg() { out=$1; shift; valgrind --tool=callgrind --dump-instr=yes --compress-strings=no --compress-pos=no \
    --callgrind-out-file="$tmp/$out" "$@" >"$tmp/$out.log" 2>&1 || { cat "$tmp/$out.log"; exit 1; }; }
for s in fattree_k8_websearch leaf_spine_128_websearch60 incast_16to1; do
    echo "profiling $s" >&2
    cg "bench-$s.out" "$bins/dcnlab-bench" --one "bench/callgrind/$s.toml"
done
echo "profiling dcnlab-sim run bench/incast_16to1.toml" >&2
cg sim-incast.out "$bins/dcnlab-sim" run bench/incast_16to1.toml -o "$tmp/records"
python3 bench/order/hot_ld.py "$tmp"/*.out > crates/sim/link/hot.ld
rm -rf "$tmp"
head -3 crates/sim/link/hot.ld
echo "wrote crates/sim/link/hot.ld; rebuild (cargo build --release --bins) to link with it" >&2
