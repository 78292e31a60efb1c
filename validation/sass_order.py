#!/usr/bin/env python3
"""The global loads of one compiled stencil, in issue order and split into runs, as stencil offsets.

For writing a trace in the order of its compiled code (`ends_run = true` on the last load of a
run, docs/trace-format.md). The runs are sass_runs.py's; each load's address is followed back to
the base register of the function's first load through `IADD3 Rd, P, Rs, imm, RZ` steps, and its
byte offset from that base is written as (dx, dy, dz) for the given row pitch and plane size (in
elements):

    python3 validation/sass_order.py FILE.sass FUNCTION PITCH PLANE [ELEMENT_BYTES]

prints one line per load: run, dx, dy, dz.
"""
import re
import sys

from sass_runs import functions, load_runs


def loads_in_order(instructions):
    """[(run index, byte offset from the first load's base)] of every global load."""
    runs = load_runs(instructions)
    run_of = [i for i, n in enumerate(runs) for _ in range(n)]
    offset_of_register, loads = {}, []
    for ins in instructions:
        ins = re.sub(r"^@!?U?P\w+\s+", "", ins)
        m = re.match(r"IADD3 R(\d+), P\d, R(\d+), (-?0x[0-9a-f]+), RZ$", ins)
        if m and int(m.group(2)) in offset_of_register:
            offset_of_register[int(m.group(1))] = offset_of_register[int(m.group(2))] + int(m.group(3), 16)
            continue
        m = re.match(r"LDG\S* R\d+, (?:desc\[UR\d+\])?\[R(\d+)(?:\.64)?(?:\+UR\d+)?(?:\+(-?0x[0-9a-f]+))?\]", ins)
        if m:
            base = int(m.group(1))
            if not offset_of_register:
                offset_of_register[base] = 0
            if base not in offset_of_register:
                sys.exit(f"load from an untracked base register: {ins}")
            loads.append(offset_of_register[base] + int(m.group(2) or "0", 16))
    if len(loads) != len(run_of):
        sys.exit(f"{len(loads)} loads parsed, {len(run_of)} in runs")
    return list(zip(run_of, loads))


def stencil_offset(byte_offset, pitch, plane, element_bytes):
    """(dx, dy, dz) of a byte offset, each of the three the nearest to zero."""
    elements, rest = divmod(byte_offset, element_bytes)
    assert rest == 0, byte_offset
    dz = round(elements / plane)
    dy = round((elements - dz * plane) / pitch)
    return elements - dz * plane - dy * pitch, dy, dz


def main():
    path, name, pitch, plane = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    element_bytes = int(sys.argv[5]) if len(sys.argv) > 5 else 8
    instructions = functions(path)[name]
    print("run,dx,dy,dz")
    for run, offset in loads_in_order(instructions):
        print(run, *stencil_offset(offset, pitch, plane, element_bytes), sep=",")


if __name__ == "__main__":
    main()
