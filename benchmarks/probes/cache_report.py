"""What a kernel cache folder cost to fill: compile seconds by kernel group (issue 23).

    python3 benchmarks/probes/cache_report.py FOLDER [--newer-than FILE] [--top 25] [--names OUT]

Reads the metadata the compiler writes beside each image (``compile_seconds``, written since
compiler revision 2's metadata gained it; older entries count as unknown). A group is the
kernel's family and operation with dtypes dropped and the layout kept (``ew_add_*_vec``,
``scan_sum_*_vv32r``...), so the table says which templates a cold run spends its time in.
``--newer-than`` counts only entries newer than a marker file (what one run compiled);
``--names`` writes the kernel names, one a line, for choosing what the package ships.
"""

from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import re

_DTYPE = re.compile(r"(^|_)s?(bool|u?int(8|16|32|64)|float(16|32|64)|complex(64|128))(?=_|$)")


def group_of(name: str) -> str:
    """``ew_add_float32_sfloat32_to_float32_vec4x1`` -> ``ew_add_*_to_*_vec``."""
    head = _DTYPE.sub(r"\1*", name)
    head = re.sub(r"(\*_)+\*", "*", head)
    return re.sub(r"(\d+|x\d+)+", "", head).rstrip("_")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder")
    p.add_argument("--newer-than", help="count only entries newer than this file")
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--names", help="write the kernel names here, one a line")
    a = p.parse_args()
    since = os.path.getmtime(a.newer_than) if a.newer_than else None
    seconds, counts, names, unknown = collections.Counter(), collections.Counter(), [], 0
    for path in glob.glob(os.path.join(a.folder, "*.json")):
        if since is not None and os.path.getmtime(path) <= since:
            continue
        try:
            with open(path) as f:
                meta = json.load(f)
        except (OSError, ValueError):
            continue
        name = meta.get("name", "?")
        names.append(name)
        g = group_of(name)
        counts[g] += 1
        if "compile_seconds" in meta:
            seconds[g] += meta["compile_seconds"]
        else:
            unknown += 1
    total = sum(seconds.values())
    print(f"{len(names)} kernels, {total:.0f} compile seconds in all"
          f"{f', {unknown} without a recorded time' if unknown else ''}")
    print(f"{'group':60s} {'kernels':>8s} {'seconds':>9s} {'share':>6s}")
    for g, s in seconds.most_common(a.top):
        print(f"{g[:60]:60s} {counts[g]:8d} {s:9.1f} {s / max(total, 1e-9):6.1%}")
    if a.names:
        with open(a.names, "w") as f:
            f.write("\n".join(sorted(names)) + "\n")


if __name__ == "__main__":
    main()
