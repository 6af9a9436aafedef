"""The elementwise family's knobs, read when a kernel is specialised or launched (so the probes in
benchmarks/probes/ can set them). The measurements behind each value: benchmarks/README.md,
"Elementwise: facts moved out of code comments"."""

# Threads a block on the vec and strided layouts: no other launch shape swept was faster.
BLOCK = 256
# 16-byte vectors a thread on the vec layout: 2 and 4 tie for add and lose for one-input ops.
VEC_UNROLL = 1

# The rows layout (template.py): taken for collapsed rows of at least ROWS_MIN_COLS elements
# (shorter rows leave most of a block idle: they take the strided layout); elements a thread
# moves when an operand rules out vectors (strided rows, unaligned views).
ROWS_MIN_COLS = 128
ROWS_UNROLL = 4
# 16-byte vectors a thread on the rows layout's vector variant (benchmarks/probes/rows_sweep.py).
ROWS_VEC_UNROLL = 1

# The transposing tile (benchmarks/probes/tile_sweep.py times candidates). Every value is part of
# the kernel's cache key (through tile_vector, tile_design and the index width), so changing one
# builds a new kernel.
TILE_ROWS = 64           # output rows of a tile: the length of each contiguous run it reads
TILE_COLS = 64           # output columns of a tile (input runs), a multiple of 32
TILE_THREADS = 256       # threads a tile; 128 was slower
TILE_VECTOR_BYTES = 16   # widest global access; below the itemsize, every access is one element
TILE_INDEX_32 = True     # 32-bit offsets while they fit (layout.index_bits), else 64-bit
TILE_WHOLE_PATH = False  # whole tiles skipping bounds checks lost on odd shapes, gained nothing else
TILE_SHARED_BYTES = 48 * 1024  # static shared memory a block may use
