"""The random family's knobs, read at launch time (benchmarks/random_bench.py can set them)."""

# Threads a block: one Philox counter block (one 16-byte store of float32 or float64) a thread,
# no shared memory, so the usual size of memory-bound kernels.
BLOCK = 256
