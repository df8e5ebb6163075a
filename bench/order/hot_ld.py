"""Write the linker script that groups the functions the benchmarks execute (crates/sim/link/hot.ld).

usage: python3 bench/order/hot_ld.py CALLGRIND.out [...] > crates/sim/link/hot.ld

Each profile is `valgrind --tool=callgrind --dump-instr=yes --compress-strings=no --compress-pos=no` of a
dcnlab binary (bench/order/update.sh). An instruction address there is the binary's own (an offset from its
load address); `nm -S` of the binary that ran names the function around it. Functions are listed by how many
profiles execute them (most first), then by name, so the code every benchmark runs is packed together.
"""

import bisect
import re
import subprocess
import sys
from collections import defaultdict


def functions(binary):
    out = subprocess.run(["nm", "-S", "--defined-only", binary], capture_output=True, text=True, check=True).stdout
    fns = []
    for line in out.splitlines():
        p = line.split()
        if len(p) == 4 and p[2] in "tT":
            fns.append((int(p[0], 16), int(p[1], 16), p[3]))
    fns.sort()
    return fns


def executed(profile):
    """The dcnlab binaries of one profile and the instruction addresses run in each."""
    addrs = defaultdict(set)
    obj = None
    with open(profile) as f:
        for line in f:
            if line.startswith("ob="):
                obj = line[3:].strip()
            elif line.startswith("0x") and obj and re.search(r"dcnlab-(sim|bench)$", obj):
                addrs[obj].add(int(line.split()[0], 16))
    return addrs


def main(profiles):
    seen = defaultdict(set)  # section pattern -> profiles that ran it
    size = {}
    nm = {}
    for i, prof in enumerate(profiles):
        for binary, addrs in executed(prof).items():
            if binary not in nm:
                nm[binary] = functions(binary)
            fns = nm[binary]
            starts = [f[0] for f in fns]
            for a in addrs:
                j = bisect.bisect_right(starts, a) - 1
                if j >= 0 and fns[j][0] <= a < fns[j][0] + fns[j][1]:
                    name = fns[j][2]
                    # Local functions that thin LTO promoted carry a `.llvm.<hash>` suffix of their build.
                    pat = re.sub(r"\.llvm\.\d+$", ".llvm.*", name)
                    seen[pat].add(i)
                    size[pat] = fns[j][1]
    if not seen:
        sys.exit("no dcnlab binary in these profiles")
    order = sorted(seen, key=lambda p: (-len(seen[p]), p))
    total = sum(size[p] for p in order)
    print("/* Written by bench/order/update.sh (bench/order/hot_ld.py): the %d functions, %d KB, that callgrind" % (len(order), total // 1024))
    print("   saw run in %d profiles of the benchmarks, most-shared first. crates/sim/build.rs links the" % len(profiles))
    print("   binaries with it. Regenerate after changing the toolchain or dependencies (their symbols' hashes");
    print("   change) or much of the packet path; a name that no longer exists groups nothing. */")
    print("SECTIONS\n{\n  .text.hot : {")
    for p in order:
        # A function LLVM takes for cold (`#[cold]`, as std's vector growth is) lies in `.text.unlikely.<name>`.
        print("    *(.text.%s .text.unlikely.%s)" % (p, p))
    print("  }\n}\nINSERT BEFORE .text;")


if __name__ == "__main__":
    main(sys.argv[1:])
