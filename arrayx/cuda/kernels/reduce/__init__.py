"""The reduction kernel family: sum, prod, max, min, mean, all, any and argmax/argmin, the
NaN-ignoring nansum, nanprod, nanmax, nanmin, nanmean, nanargmax and nanargmin, and the moments
var, std, nanvar and nanstd (one pass each: ``reduction.py``).

Three kernel templates (``source.py``), each specialised per (reduction, input dtype, result
dtype, variant, vector width), never per shape; shapes and strides are arguments. The host
(``plans.py``) collapses the input into kept and reduced dims and picks one:

* ``contig`` (row reduce, and the all-reduce as its one-row case): the reduced elements of every
  output are one contiguous run of K (``x.sum(axis=-1)``, ``x.T.sum(axis=0)``, ``x.sum()``). A
  group of T lanes (1, 32 or 256 by K) owns a row, 256 // T rows a block. Rows are read with
  16-byte vector loads (with the LOAD_HINT cache qualifier for real dtypes) where the element
  pointer allows it; each row's unaligned head (offset views) and its tail take scalar loads.
* ``column`` (reduced axis strided, kept axis contiguous: ``x.sum(axis=0)`` of C-order ``x``):
  each lane owns N adjacent columns (one vector), the 8 warps of a block interleave the reduced
  rows, shared memory combines them.
* ``general``: any other layout; T lanes interleave an output's reduced index space, decoding
  each index into a strided offset.

Few long rows, or few column tiles, are split over S blocks each, and every reduction is still
one launch (as CUDA's threadFenceReduction sample, CUB's single-pass reductions and PyTorch; a
second launch costs more than the fold): each block writes its partial accumulator (every part,
in its register type) to a scratch area, fences (``membar.gl``), and one thread takes a ticket
(``atom.global.add``) on its group's counter (the group: the output row, or the column tile,
the S blocks contribute to). The block that draws ticket S - 1 is the last of its group; it
fences again and folds the group's S partials in a fixed order (so the result does not depend
on which block came last), reading them with ``ld.global.cg`` (L2: L1 is not coherent across
SMs), stores the final value, and puts the counter back to 0. Memory order: a writer's stores
precede its fence, its fence precedes its ticket; the last ticket reads every earlier ticket's
write (one atomic counter), so each writer's fence synchronises with the last block's fence,
which precedes (through ``bar.sync``) every load of the fold. The counters and the partials
live in a per-stream scratch buffer (``host.py``): launches on one stream run one after another
(a graph captures them as a chain), and each launch leaves its counters at 0, so nothing is
reset per call.

float32 sums are a tree: each thread adds into one accumulator per vector lane, lanes are added
pairwise, then warp shuffles and shared memory, then the fold of the split partials; the error
is comparable to NumPy's pairwise sum. What each reduction accumulates: ``reduction.py``; the
knobs: ``tuning.py``.
"""

from .host import SPLIT_SCRATCH, argreduce, moments, reduce  # noqa: F401  (the family's API)
from .source import precompile_specs  # noqa: F401

PRIMITIVES = {"reduce": reduce, "argreduce": argreduce, "moments": moments}
