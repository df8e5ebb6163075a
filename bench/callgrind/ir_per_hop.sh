#!/bin/sh
# Instructions per packet-hop of a dcnlab-sim build on the shortened benchmarks (bench/callgrind/README.md).
# usage: bench/callgrind/ir_per_hop.sh [DCNLAB_SIM_BINARY] [SCENARIO.toml ...]   (from the repository root)
set -e
bin=${1:-target/release/dcnlab-sim}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- bench/callgrind/fattree_k8_websearch.toml bench/callgrind/leaf_spine_128_websearch60.toml bench/callgrind/incast_16to1.toml
tmp=$(mktemp -d)
for s in "$@"; do
    valgrind --tool=callgrind --callgrind-out-file="$tmp/callgrind.out" "$bin" run "$s" >"$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
    ir=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$tmp/log")
    hops=$(sed -n 's/.* \([0-9]*\) packet-hops.*/\1/p' "$tmp/log")
    awk -v s="$s" -v ir="$ir" -v h="$hops" 'BEGIN { printf "%-52s %15.0f Ir %11.0f packet-hops %8.1f Ir/hop\n", s, ir, h, ir / h }'
done
rm -rf "$tmp"
