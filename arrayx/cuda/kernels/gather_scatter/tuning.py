"""The gather/scatter family's tuning knobs (history in benchmarks/README.md)."""

BLOCK = 256       # threads per block of every gather, scatter and check kernel
ND_UNROLL = 4     # elements per thread on the nd layout: 4 index loads, then 4 data loads in flight
VEC_ELEMENTS = 8  # indices per thread on the vec layout: 8 random reads in flight hide their latency
