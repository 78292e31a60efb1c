#!/usr/bin/env python3
"""Which L1 geometry explains the pointer chase of l1_geometry.cu? Replays every measured chain
through candidate caches (capacity, ways, set index, replacement) and prints, per candidate, how
far the simulated miss fraction is from the measured one: over the chains below capacity (<= 1920
lines, all hits on the GPU) and over the knee (1984, 2048, 2304 lines).

    validation/l1_geometry_fit.py tests/data/h200/micro/l1_geometry.csv

The miss fraction of a run is (cycles per load - hit) / (miss - hit), with hit and miss latency
the medians of the chains that surely hit (<= 1024 lines) and surely miss (>= 3072 lines).
tests/l1_geometry.rs replays the shipped configs the same way."""
import csv
import random
import statistics
import sys
from collections import OrderedDict


def fold(line, bits=7):
    x, rest = line, line >> bits
    while rest:
        x ^= rest
        rest >>= bits
    return x


INDEX = {
    "modulo": lambda line, sets: line % sets,
    "xor-fold": lambda line, sets: fold(line) % sets,
    # a pseudo-random index, like the simulator's "hash"
    "hash": lambda line, sets: (((line ^ (line >> 29)) * 0x9E3779B97F4A7C15) & (2**64 - 1)) * sets >> 64,
}


class LruSet:
    def __init__(self, ways):
        self.ways, self.lines = ways, OrderedDict()

    def access(self, line):
        if line in self.lines:
            self.lines.move_to_end(line)
            return True
        if len(self.lines) >= self.ways:
            self.lines.popitem(last=False)
        self.lines[line] = True
        return False


class PlruSet:
    """Tree pseudo-LRU as src/sim/cache.rs: a bit per node points towards the victim."""

    def __init__(self, ways):
        self.ways, self.tags, self.bits = ways, [None] * ways, [0] * (ways - 1)

    def _touch(self, way):
        node, lo, hi = 0, 0, self.ways
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if way < mid:
                self.bits[node], node, hi = 1, 2 * node + 1, mid
            else:
                self.bits[node], node, lo = 0, 2 * node + 2, mid

    def _victim(self):
        if None in self.tags:
            return self.tags.index(None)
        node, lo, hi = 0, 0, self.ways
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self.bits[node]:
                node, lo = 2 * node + 2, mid
            else:
                node, hi = 2 * node + 1, mid
        return lo

    def access(self, line):
        if line in self.tags:
            self._touch(self.tags.index(line))
            return True
        way = self._victim()
        self.tags[way] = line
        self._touch(way)
        return False


def chain(run):
    n, stride = int(run["lines"]), int(run["stride_bytes"]) // 128
    order = list(range(n))
    if run["experiment"] == "size_rand":
        random.Random(4242).shuffle(order)
    return [(1 << 20) + i * stride for i in order]


def simulated_misses(run, lines, ways, index, policy):
    sets = [(PlruSet if policy == "plru" else LruSet)(ways) for _ in range(lines // ways)]
    warm, steps = int(run["warm_steps"]), int(run["steps"])
    c, misses = chain(run), 0
    for t in range(warm + steps):
        line = c[t % len(c)]
        if not sets[INDEX[index](line, len(sets))].access(line) and t >= warm:
            misses += 1
    return misses / steps


def main(path):
    runs = list(csv.DictReader(open(path)))
    hit = statistics.median(float(r["cycles_per_load"]) for r in runs if int(r["lines"]) <= 1024)
    miss = statistics.median(float(r["cycles_per_load"]) for r in runs if int(r["lines"]) >= 3072)
    measured = lambda r: min(1.0, max(0.0, (float(r["cycles_per_load"]) - hit) / (miss - hit)))
    below = [r for r in runs if 1024 <= int(r["lines"]) <= 1920]
    knee = [r for r in runs if 1920 < int(r["lines"]) < 2560]
    print(f"hit {hit:.1f} cycles, miss {miss:.1f}; {len(below)} chains of 1024-1920 lines, {len(knee)} at the knee")
    print("| capacity | ways x sets | index | replacement | worst miss fraction <= 1920 lines | knee: mean / worst error |")
    print("|---|---|---|---|---|---|")
    for lines, ways, index, policy in [
        (2048, 4, "modulo", "lru"),  # the configs before this measurement
        (2048, 4, "hash", "lru"),
        (1920, 3, "xor-fold", "lru"),
        (1920, 15, "xor-fold", "lru"),
        (1984, 4, "xor-fold", "lru"),
        (1984, 4, "xor-fold", "plru"),
        (1984, 8, "xor-fold", "plru"),
        (1984, 16, "xor-fold", "plru"),
        (1984, 16, "xor-fold", "lru"),
        (1984, 16, "hash", "plru"),
        (2048, 16, "xor-fold", "plru"),
    ]:
        b = max(simulated_misses(r, lines, ways, index, policy) for r in below)
        e = [abs(simulated_misses(r, lines, ways, index, policy) - measured(r)) for r in knee]
        print(f"| {lines * 128 // 1024} KiB | {ways} x {lines // ways} | {index} | {policy} | {b:.2f} | "
              f"{statistics.mean(e):.2f} / {max(e):.2f} |", flush=True)
    # The fold step of the shipped index (src/sim/cache.rs XOR_FOLD_BITS) on the shipped geometry.
    print("\n| xor-fold step (248 KiB, 16 x 124, plru) | worst miss fraction <= 1920 lines | knee: mean / worst error |")
    print("|---|---|---|")
    for bits in [5, 6, 7, 8, 9, 10]:
        INDEX["xor-fold"] = lambda line, sets, bits=bits: fold(line, bits) % sets
        b = max(simulated_misses(r, 1984, 16, "xor-fold", "plru") for r in below)
        e = [abs(simulated_misses(r, 1984, 16, "xor-fold", "plru") - measured(r)) for r in knee]
        print(f"| {bits} bits | {b:.2f} | {statistics.mean(e):.2f} / {max(e):.2f} |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
