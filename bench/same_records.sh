#!/bin/sh
# Run reference scenarios with two dcnlab-sim binaries and compare every record file both write (a
# refactor or a change off the path of these scenarios must leave them bit-identical).
# usage (from the repository root): bench/same_records.sh BASE_DCNLAB_SIM NEW_DCNLAB_SIM [SCENARIO …]
set -e
base=$1; new=$2; shift 2
[ $# -gt 0 ] || set -- experiments/demo.toml experiments/ecn_sharp/testbed.toml experiments/ecn_sharp/scheduler.toml \
    python/tests/issue_example.toml bench/incast_16to1.toml bench/callgrind/fattree_k8_websearch.toml \
    bench/callgrind/leaf_spine_128_websearch60.toml experiments/acdc/star.toml experiments/acdc/dumbbell.toml
tmp=$(mktemp -d)
status=0
for sc in "$@"; do
    n=$(echo "$sc" | tr '/.' '__')
    "$base" run "$sc" -o "$tmp/base-$n" >/dev/null 2>&1 || echo "base failed on $sc"
    "$new" run "$sc" -o "$tmp/new-$n" >/dev/null 2>&1 || echo "new failed on $sc"
    for f in "$tmp/base-$n"/*.csv; do
        g="$tmp/new-$n/$(basename "$f")"
        if ! cmp -s "$f" "$g"; then echo "DIFFERS: $sc $(basename "$f")"; status=1; fi
    done
    echo "compared $sc ($(ls "$tmp/base-$n"/*.csv | wc -l) tables)"
done
rm -rf "$tmp"
exit $status
