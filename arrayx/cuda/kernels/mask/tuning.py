"""The mask family's knobs."""

# Threads a block of the coordinates, compaction and scatter kernels: one element a thread, the
# usual size for memory-bound kernels with no shared memory.
BLOCK = 256
