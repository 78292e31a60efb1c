#!/usr/bin/env python3
"""Load runs of compiled kernels, read off their SASS (issue 13: warp issue order).

A warp issues instructions in order and only waits when one reads a register that a load still
has in flight. The loads issued between two such waits form a run: what the trace field
`[launch] loads_per_run` describes. For every function of `cuobjdump -sass` output this prints the
number of global loads and the length of each run, e.g.

    nvcc -O3 -arch=sm_90 -cubin -o s.cubin stencils.cu && cuobjdump -sass s.cubin > s.sass
    python3 validation/sass_runs.py s.sass

Simplifications: straight-line code (branches and loops end a run), every load issued before a
wait has returned after it (their latencies are alike), predicates ignored.
"""
import re
import sys


def functions(path):
    """{function name: [instruction text]} of one cuobjdump -sass listing."""
    current, out = None, {}
    for line in open(path):
        m = re.search(r"Function : (\S+)", line)
        if m:
            current = m.group(1)
            out[current] = []
            continue
        m = re.search(r"/\*[0-9a-f]{4}\*/\s+(.*?);", line)
        if m and current:
            out[current].append(m.group(1).strip())
    return out


def registers_read(operands):
    """Registers the source operands read (a .64 operand reads two)."""
    read = set()
    for part in operands:
        for m in re.finditer(r"\bR(\d+)(\.64)?\b", part):
            r = int(m.group(1))
            read.add(r)
            if m.group(2):
                read.add(r + 1)
    return read


def load_runs(instructions):
    """Lengths of the runs of loads between waits, in program order."""
    pending, runs, current = set(), [], 0
    for ins in instructions:
        ins = re.sub(r"^@!?U?P\w+\s+", "", ins)
        op = ins.split()[0]
        parts = ins[len(op):].split(",")
        is_load = op.startswith("LDG") or op.startswith("LD.") or op == "LD"
        # a store reads its data register as well as its address
        read = registers_read(parts if op.startswith("ST") else parts[1:])
        if (read & pending) or (op in ("EXIT", "BAR", "BRA") and pending):
            if current:
                runs.append(current)
            current, pending = 0, set()
        if is_load:
            current += 1
            width = 4 if ".128" in op else 2 if ".64" in op else 1
            first = int(re.search(r"R(\d+)", parts[0]).group(1))
            pending.update(range(first, first + width))
    if current:
        runs.append(current)
    return runs


def main():
    print("function,loads,runs,mean_run")
    for path in sys.argv[1:]:
        for name, ins in functions(path).items():
            runs = load_runs(ins)
            if runs:
                print(f"{name},{sum(runs)},{' '.join(map(str, runs))},{sum(runs) / len(runs):.2f}")


if __name__ == "__main__":
    main()
