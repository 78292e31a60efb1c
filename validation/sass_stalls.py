#!/usr/bin/env python3
"""The cycles a warp spends on its own instructions, read off the compiled code (issue 53, item 3;
docs/model.md "Delay", `[timing] own_cycles_per_instruction`).

Every SASS instruction of sm_70 and later carries control bits that ptxas sets: among them a
stall count, the cycles the warp's scheduler waits after issuing it before it may issue the
warp's next instruction (bits 41-44 of the instruction's second 64-bit word; the variable-latency
waits of loads go through scoreboards instead, which the time model's rounds of loads stand for).
Alone, a warp issues an instruction no faster than that: its own path takes the sum of its
instructions' stall counts, at least one cycle each. This compiles each source (`.cu` with nvcc,
`.ptx` with ptxas; sm_90) and prints, per kernel, its instructions (NOPs and the branch to itself
after the last EXIT left out) and their mean stall count, then the median over the kernels:

    python3 validation/sass_stalls.py FILE.cu|FILE.ptx ... [--sm 90]

needs nvcc or ptxas and nvdisasm on the PATH (scripts/install-nvcc.sh). The kernels of
`validation/*.cu` and tests/data/ptx/stencils.ptx (the dev set's stencils), 2026-12-07:
tests/data/h200/sass_stalls.txt. The mean is over the code, not over the instructions a launch
executes (a loop body counts once): the one constant the time model takes is the median over
many kernels.
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile

INSTRUCTION = re.compile(r"\s*/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;\s*/\* 0x[0-9a-f]{16} \*/")
CONTROL = re.compile(r"\s*/\* 0x([0-9a-f]{16}) \*/\s*$")
FUNCTION = re.compile(r"\s*\.text\.(\S+):")


def stall_counts(cubin):
    """Kernel name -> [(opcode, stall cycles)] in code order, from `nvdisasm -hex`."""
    text = subprocess.run(["nvdisasm", "-hex", cubin], capture_output=True, text=True, check=True).stdout
    kernels, name, pending = {}, None, None
    for line in text.splitlines():
        if m := FUNCTION.match(line):
            name, pending = m.group(1), None
            kernels[name] = []
        elif name and (m := INSTRUCTION.match(line)):
            words = m.group(1).split()
            pending = words[1] if words[0].startswith("@") else words[0]
        elif name and pending and (m := CONTROL.match(line)):
            kernels[name].append((pending.split(".")[0], (int(m.group(1), 16) >> 41) & 0xF))
            pending = None
    for name, code in kernels.items():
        # after the last EXIT only the branch to itself that ends every function is left
        last_exit = max((i for i, (op, _) in enumerate(code) if op == "EXIT"), default=len(code) - 1)
        kernels[name] = [(op, s) for op, s in code[:last_exit + 1] if op != "NOP"]
    return kernels


def compile_cubin(source, sm, folder):
    cubin = os.path.join(folder, os.path.basename(source) + ".cubin")
    if source.endswith(".ptx"):
        command = ["ptxas", f"-arch=sm_{sm}", "-o", cubin, source]
    else:
        command = ["nvcc", "-O3", f"-arch=sm_{sm}", "-cubin", "-o", cubin, source]
    subprocess.run(command, check=True, capture_output=True)
    return cubin


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    sm = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--sm=")), "90")
    if not args:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    means = []
    with tempfile.TemporaryDirectory() as folder:
        for source in args:
            for name, code in sorted(stall_counts(compile_cubin(source, sm, folder)).items()):
                if not code:
                    continue
                mean = statistics.mean(s for _, s in code)
                means.append(mean)
                print(f"{os.path.basename(source):22} {name[:48]:48} instructions {len(code):5}  mean stall {mean:5.2f}")
    print(f"{len(means)} kernels: median of the kernels' mean stall {statistics.median(means):.2f} cycles an instruction "
          f"(quartiles {statistics.quantiles(means, n=4)[0]:.2f}-{statistics.quantiles(means, n=4)[2]:.2f}, "
          f"range {min(means):.2f}-{max(means):.2f})")


if __name__ == "__main__":
    main()
