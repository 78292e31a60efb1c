"""Which block shape? A code generator writes a kernel as text and ranks every 256-thread shape.

    pip install ./python && python examples/python/block_shapes.py   (about two minutes on 2 cores)
"""
import sys

import gputraffic

# A generated kernel: here the shipped 25-point star of radius 4, as text.
kernel = gputraffic.Kernel(gputraffic.show("star4"))
domain = (64, 64, 32) if "--quick" in sys.argv else (256, 128, 64)
ranking = gputraffic.rank(kernel, "all-256", hw="h200", domain=domain)
print(f"{'block':<10} {'time_us':>8} {'relative':>8} {'limiter':>8} {'DRAM_B/LUP':>10}")
for s in ranking["shapes"][:8]:
    block = "x".join(map(str, s["block"]))
    print(f"{block:<10} {s['predicted_s'] * 1e6:8.1f} {s['relative']:8.2f} "
          f"{s['limiter']:>8} {s['dram_bytes_per_lup']:10.2f}")
