"""Which kernels two shipped archives (arrayx/cuda/prebuilt/sm_<cc>.zip) compile differently,
without a GPU: for a change to kernel sources meant to keep the machine code (one made to
compile faster), every kernel in both archives should have the same code.

    python benchmarks/probes/shipped_diff.py OLD.zip NEW.zip [--list N]

Kernels are matched by name (the spec name inside the entry's mangled symbol; keys differ,
since they hash the sources). Two cubins have the same code when their ``.text.*`` sections
(the SASS, with the register count in the section header's flags and info) are byte-identical;
symbol names, which numba numbers per process, are not compared. Prints the counts, the names
of up to --list kernels that differ, and exits 1 when any does.
"""

from __future__ import annotations

import argparse
import json
import re
import struct
import sys
import zipfile

_SPEC_NAME = re.compile(r"_3e(\d+)")


def spec_name(entry: str) -> str:
    """The kernel's spec name from its mangled entry (numba writes it length-prefixed)."""
    m = _SPEC_NAME.search(entry)
    return entry[m.end():m.end() + int(m.group(1))] if m else entry


def archive_cubins(path: str) -> dict:
    """{spec name: cubin bytes} of every kernel in a shipped archive."""
    out = {}
    with zipfile.ZipFile(path) as archive:
        for bundle in archive.namelist():
            data = archive.read(bundle)
            head = data.index(b"\n")
            body = data[head + 1:]
            for offset, size, entry in json.loads(data[:head]).values():
                out[spec_name(entry)] = body[offset:offset + size]
    return out


def text_sections(cubin: bytes) -> list:
    """(flags, info, bytes) of each ``.text.*`` section of an ELF64 cubin, in section order."""
    shoff, = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)

    def header(i):
        name, _, flags, _, offset, size, _, info = struct.unpack_from(
            "<IIQQQQII", cubin, shoff + i * shentsize)
        return name, flags, info, offset, size
    strtab_offset = header(shstrndx)[3]
    sections = []
    for i in range(shnum):
        name, flags, info, offset, size = header(i)
        end = cubin.index(b"\0", strtab_offset + name)
        if cubin[strtab_offset + name:end].startswith(b".text."):
            sections.append((flags, info, cubin[offset:offset + size]))
    return sections


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--list", type=int, default=20)
    a = ap.parse_args()
    old, new = archive_cubins(a.old), archive_cubins(a.new)
    both = sorted(old.keys() & new.keys())
    differ = [n for n in both if text_sections(old[n]) != text_sections(new[n])]
    print(f"{len(both)} kernels in both archives, {len(differ)} with other code; "
          f"{len(old.keys() - new.keys())} only in the old, {len(new.keys() - old.keys())} "
          f"only in the new")
    for name in differ[:a.list]:
        print("  differs:", name)
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
