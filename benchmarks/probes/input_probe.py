"""Does a reduction's single-call time depend on where its input came from? reduce_bench reads
a CuPy array imported through DLPack (random normal); latency_probe an arrayx array (uniform).
Session 4 saw the two disagree by 3-4% on the same code in the same call.

    python3 benchmarks/probes/input_probe.py      (on the GPU machine; about 20 s)

For sum and argmax of 2^28 float32, and CuPy's sum beside them, times one call (CUDA events,
median of 30 after warm-up, as harness.gpu_time does) on each input:
* cupy-normal: CuPy's random normal, imported (reduce_bench's input);
* arrayx-normal: the same values copied into arrayx's allocator;
* arrayx-uniform: uniform values built by arrayx (latency_probe's input);
* cupy-uniform: the same uniform values copied into CuPy's pool, imported.
Each input's pointer modulo 2 MiB is printed (page placement), and the whole table is run
twice, in opposite orders, so drift over time shows as a difference between the passes.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.dirname(HERE))

import numpy as np  # noqa: E402

from harness import Harness  # noqa: E402


def main():
    import cupy as cp

    import arrayx as xp
    from arrayx._registry import set_host_fallback
    set_host_fallback("error")
    H = Harness("reduction input probe")
    n = 1 << 28
    ceiling = H.copy_ceiling(n, 20)

    cp.random.seed(1)
    normal_cp = cp.random.standard_normal(n, dtype=cp.float32)
    uniform_xp = xp.asarray(np.random.default_rng(0).random(n, dtype=np.float32), device="cuda:0")
    uniform_cp = cp.array(cp.from_dlpack(uniform_xp), copy=True)
    cp.cuda.Device().synchronize()
    inputs = {"cupy-normal": xp.from_dlpack(normal_cp),
              "arrayx-normal": xp.asarray(xp.from_dlpack(normal_cp), copy=True),
              "arrayx-uniform": uniform_xp,
              "cupy-uniform": xp.from_dlpack(uniform_cp)}
    H.sync("arrayx")
    for name, arr in inputs.items():
        ptr = cp.from_dlpack(arr).data.ptr
        print(f"{name:16s} pointer % 2 MiB = {ptr % (2 << 20):8d}", flush=True)

    def cases(name, arr):
        as_cp = cp.from_dlpack(arr)
        return {"sum": ("arrayx", lambda: xp.sum(arr)),
                "argmax": ("arrayx", lambda: xp.argmax(arr)),
                "cupy sum": ("cupy", lambda: cp.sum(as_cp))}

    table = {}
    for pass_no, order in enumerate((list(inputs), list(reversed(inputs)))):
        for name in order:
            for case, (lib, fn) in cases(name, inputs[name]).items():
                ms = H.gpu_time(lib, fn, reps=30)
                ratio = n * 4 / (ms * 1e-3) / 1e12 / ceiling["tb_per_s"]
                table.setdefault((case, name), []).append((ms * 1e3, ratio))
    print(f"\ncopy ceiling {ceiling['tb_per_s']} TB/s; us (ratio to copy), pass 1 / pass 2")
    for (case, name), got in sorted(table.items()):
        cells = " / ".join(f"{us:7.1f} ({r:.3f})" for us, r in got)
        print(f"{case:9s} {name:16s} {cells}")


if __name__ == "__main__":
    main()
