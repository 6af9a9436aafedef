"""Host overhead of the namespace on the CPU device: arrayx.add against numpy.add.

    python benchmarks/cpu_overhead.py            # prints a table, writes benchmarks/results/

Targets (issue 2): at most 3 us more than NumPy for 10 float64 elements; at most 5% more for 10^6.
"""

import datetime
import json
import pathlib
import platform
import timeit

import numpy as np

import arrayx as xp


def best_per_call(fn, number):
    return min(timeit.repeat(fn, number=number, repeat=7)) / number


def main():
    rows = []
    for n, number in ((10, 200_000), (1_000_000, 300)):
        rng = np.random.default_rng(0)
        a, b = rng.random(n), rng.random(n)
        x, y = xp.asarray(a, device="cpu"), xp.asarray(b, device="cpu")
        t_np = best_per_call(lambda: np.add(a, b), number)
        t_fn = best_per_call(lambda: xp.add(x, y), number)
        t_op = best_per_call(lambda: x + y, number)
        rows.append({"elements": n, "numpy_us": t_np * 1e6, "arrayx_add_us": t_fn * 1e6,
                     "arrayx_operator_us": t_op * 1e6, "extra_us": (t_fn - t_np) * 1e6,
                     "ratio": t_fn / t_np})
    result = {"benchmark": "cpu_overhead", "date": datetime.date.today().isoformat(),
              "machine": f"{platform.machine()} {platform.processor() or ''}".strip(),
              "python": platform.python_version(), "numpy": np.__version__, "arrayx": xp.__version__,
              "rows": rows}
    out = pathlib.Path(__file__).parent / "results" / f"cpu_overhead_{result['date']}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"{'elements':>10} {'numpy us':>10} {'xp.add us':>10} {'x+y us':>10} {'extra us':>9} {'ratio':>6}")
    for r in rows:
        print(f"{r['elements']:>10} {r['numpy_us']:>10.2f} {r['arrayx_add_us']:>10.2f} "
              f"{r['arrayx_operator_us']:>10.2f} {r['extra_us']:>9.2f} {r['ratio']:>6.3f}")
    print(f"written to {out}")


if __name__ == "__main__":
    main()
