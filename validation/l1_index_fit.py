#!/usr/bin/env python3
"""The L1 set index of the H100 and H200, read off l1_index.cu's data (docs/model.md "L1
geometry"), and the summaries tests/l1_index.rs checks the configs against.

    validation/l1_index_fit.py tests/data/h100/micro [--write]

Reads l1_index_groups_carve8.csv.gz and l1_index_sets_carve8.csv.gz of that folder and prints:
  1. the groups: which chunks (64 lines) of 2 MiB page 0 join the base group (chunks 0, 16, ..,
     112), as residues of the chunk number mod 16; and per page 1-15, by how much its group
     labels are shifted, with the page-bit terms that explain the shifts;
  2. the sets: for each line x that joined the base group, the half (which four of the base
     chunks its set-mates belong to) and the within-group set, relative to the base chunks';
  3. whether the config's l1.set_index_masks (set-index bit i = parity of line & mask[i]; the
     config of the GPU the folder names) put every measured pair in one set and every measured
     chunk in or out of the base group as the GPU does.
Line bits 0-5 pick the line in its chunk, 6-13 the chunk in its page, 14-17 the page in its 32 MiB
block; above that the physical placement, which differs from run to run, decides (the configs
hash those bits). Only pages 0-15 are used: the measurements agree on them across runs.

--write writes l1_index_joins.csv (page, chunk, joins: pages 0-15) and l1_index_setmates.csv
(line pairs measured in one set) into the folder; tests/l1_index.rs reads them."""
import csv
import gzip
import sys
import tomllib

BASE = [0, 16, 32, 48, 64, 80, 96, 112]
BASES = {0: BASE, 1: [0, 16, 5, 48, 64, 80, 96, 112], 2: [112, 96, 80, 64, 48, 5, 16, 0],
         3: [16, 96, 0, 32, 64, 80, 112, 48], 4: [16, 96, 112, 0, 32, 64, 80, 48],
         5: [2, 18, 34, 50, 66, 82, 98, 114]}
THRASH = 256  # misses in the last pass: a ninth chunk in a group of eight misses 320 lines


def rows(folder, name):
    with gzip.open(f"{folder}/{name}.gz", "rt") as f:
        return list(csv.DictReader(f))


def joins(folder):
    """{(page, chunk): joins the base group} for the measured chunks of pages 0-15."""
    out = {}
    for r in rows(folder, "l1_index_groups_carve8.csv"):
        page, chunk = int(r["page"]), int(r["chunk"])
        if r["kind"] == "join" and page < 16:
            out[(page, chunk)] = int(r["misses_pass3"]) >= THRASH
    for j in range(8):  # the base chunks are in it by construction
        out[(0, 16 * j)] = True
    return out


def missed(bits_hex, n):
    out = []
    for w in range(0, len(bits_hex), 16):
        v = int(bits_hex[w:w + 16], 16)
        out += [(v >> b) & 1 for b in range(64)]
    return out[:n]


def setmates(folder):
    """[(x line, base line)]: pairs missing together in a test where one set thrashed (x and
    four base lines: 5 misses)."""
    pairs = []
    for r in rows(folder, "l1_index_sets_carve8.csv"):
        if int(r["misses_pass3"]) != 5:
            continue
        base = BASES[int(r["base"])]
        b = missed(r["missed_bits"], 513)
        x = int(r["chunk"]) * 64 + int(r["offset"])
        pairs += [(x, base[j] * 64 + i) for j in range(8) for i in range(64) if b[j * 64 + i]]
    return pairs


def parity(x):
    return bin(x).count("1") & 1


def main():
    folder = sys.argv[1]
    j = joins(folder)
    residues = sorted({c % 16 for (p, c), y in j.items() if p == 0 and y})
    print("page 0: chunks joining the base group, mod 16:", residues,
          "(all page-0 chunks agree:", all(y == (c % 16 in residues) for (p, c), y in j.items() if p == 0), ")")
    # A group function g(chunk bits 0-3) with kernel {0, 5, 9, 12}: g = (k1, k0^k2^k3).
    g = lambda k: ((k >> 1) & 1) * 2 + (parity(k & 0b1101))
    assert all(g(k) == 0 for k in residues), "kernel of the group function"
    shifts = {}
    for p in range(1, 16):
        joined = [c for c in range(16) if j[(p, c)]]
        shifts[p] = {g(c) for c in joined}
    print("pages 1-15: group shift", {p: sorted(s) for p, s in shifts.items()})
    ok = all(s == {(parity(p & 15) * 2) | parity(p & 12)} for p, s in shifts.items())
    print("shift = (p0^p1^p2^p3, p2^p3):", ok)
    # Within-group set and half, from the set-mates: line x and base line y share a set.
    pairs = setmates(folder)
    cls = {}
    for x, y in pairs:
        cls.setdefault(x >> 6, set()).add("A" if (y >> 6) in (0, 16, 96, 112) else "B")
    print("half of the x chunks (A: with chunk 0):", {c: "".join(sorted(s)) for c, s in sorted(cls.items())})
    config = "hw-configs/h200.toml" if "h200" in folder else "hw-configs/h100-sxm.toml"
    with open(config, "rb") as f:
        masks = tomllib.load(f)["l1"]["set_index_masks"]
    index = lambda line: sum(parity(line & m) << i for i, m in enumerate(masks))
    same = sum(index(x) == index(y) for x, y in pairs)
    print(f"{config} masks {[hex(m) for m in masks]}: {same} of {len(pairs)} measured set-mates share a set")
    jl = [(p, c, y) for (p, c), y in sorted(j.items())]
    base_group = index(0) >> 6 & 3
    agree = sum(((index(p * 16384 + c * 64) >> 6 & 3) == base_group) == y for p, c, y in jl)
    print(f"and {agree} of {len(jl)} chunks of pages 0-15 in the base group as measured")
    if "--write" in sys.argv:
        with open(f"{folder}/l1_index_joins.csv", "w") as f:
            f.write("page,chunk,joins\n")
            for p, c, y in jl:
                f.write(f"{p},{c},{int(y)}\n")
        with open(f"{folder}/l1_index_setmates.csv", "w") as f:
            f.write("x_line,base_line\n")
            for x, y in pairs:
                f.write(f"{x},{y}\n")


if __name__ == "__main__":
    main()
