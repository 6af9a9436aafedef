"""CUDA runtime logic that needs no GPU: layout helpers, the allocator over a fake driver, the
array constructor, the kernel cache keys, the elementwise template and the import graph's
layering. Runs in CI."""


import ast
import dataclasses
import gc
import hashlib
import json
import pathlib
import types

import numpy as np
import pytest

from arrayx.cuda.engine import allocator as al
from arrayx.cuda.engine import layout
from arrayx.cuda.engine.array import new_array
from arrayx.cuda.engine.layout import c_strides, is_c_contiguous


# ---- layout ------------------------------------------------------------------------------

def test_collapse_contiguous_to_1d():
    shape = (4, 5, 6)
    st = c_strides(shape)
    assert layout.collapse(shape, st, st) == ((120,), [(1,), (1,)])


def test_collapse_keeps_non_mergeable_dims():
    shape = (4, 5, 6)
    a = c_strides(shape)
    b = (0, 6, 1)  # broadcast along dim 0
    s, (sa, sb) = layout.collapse(shape, a, b)
    assert s == (4, 30) and sa == (30, 1) and sb == (0, 1)


def test_collapse_drops_unit_dims():
    s, (sa,) = layout.collapse((1, 7, 1), (99, 1, 5))
    assert s == (7,) and sa == (1,)


@pytest.mark.parametrize("shape,new", [((6, 4), (24,)), ((6, 4), (3, 2, 4)), ((2, 3, 4), (6, 4)),
                                       ((2, 3, 4), (2, 12)), ((1, 6), (6, 1)), ((0, 3), (3, 0))])
@pytest.mark.parametrize("perm", [False, True])
def test_reshape_strides_match_numpy(shape, new, perm):
    base = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    a = base.T if perm else base
    new = new[::-1] if perm else new
    st_el = tuple(s // 8 for s in a.strides)
    got = layout.reshape_strides(a.shape, st_el, new)
    try:
        v = a.view()
        v.shape = new  # raises when a copy would be needed
        expect = tuple(s // 8 for s in v.strides)
    except AttributeError:
        expect = None
    if expect is None:
        assert got is None
    elif a.size:
        # equal where the dimension is > 1 (strides of unit dims are arbitrary)
        assert got is not None
        assert all(g == e for g, e, n in zip(got, expect, new) if n > 1)


def test_broadcast_strides():
    assert layout.broadcast_strides((3, 1), (1, 1), (2, 3, 4)) == (0, 1, 0)


def test_index_bits():
    assert layout.index_bits(1000, (1000,), (1,)) == 32
    assert layout.index_bits(2**31, (2**31,), (1,)) == 64
    assert layout.index_bits(10, (10,), (2**30,)) == 64


def test_vector_width_and_launch():
    assert layout.vector_width(4) == 4 and layout.vector_width(1) == 16
    assert layout.vector_width(16) == 1 and layout.vector_width(4, 8, 1) == 2
    assert layout.launch_1d(1000, 256) == (4, 256)
    assert layout.launch_1d(10, 256) == (1, 32)


def test_contiguity():
    assert is_c_contiguous((2, 3), (3, 1))
    assert not is_c_contiguous((2, 3), (1, 2))
    assert is_c_contiguous((2, 1, 3), (3, 99, 1))
    assert is_c_contiguous((0, 3), (7, 7))


# ---- allocator over a fake driver --------------------------------------------------------

class FakeDriver:
    def __init__(self, capacity):
        self.capacity = capacity
        self.used = 0
        self.live = {}
        self.next = 1 << 20
        self.allocs = 0

    def alloc(self, n):
        if self.used + n > self.capacity:
            raise al.OutOfDeviceMemory()
        p = self.next
        self.next += n + 4096
        self.live[p] = n
        self.used += n
        self.allocs += 1
        return p

    def free(self, p):
        self.used -= self.live.pop(p)


def make(capacity=1 << 30, reclaim=None):
    f = FakeDriver(capacity)
    return f, al.Allocator(0, capacity, f.alloc, f.free, reclaim=reclaim)


def test_size_classes():
    assert al.round_size(1) == 8 and al.round_size(8) == 8
    assert al.round_size(9) == 16 and al.round_size(17) == 32
    assert al.round_size(16383) == 16384 and al.round_size(16385) == 32768
    assert al.round_size(100000) == 7 * 16384


def test_cache_reuse_and_stats():
    f, a = make()
    p, s = a.alloc(4000)
    assert s == 4096 and a.active == 4096
    a.free(p, s)
    assert a.stats()["active"] == 0 and a.stats()["cached"] == 4096
    p2, s2 = a.alloc(3000)  # same class
    assert p2 == p and f.allocs == 1 and a.n_cache_hits == 1
    a.free(p2, s2)
    a.clear_cache()
    assert f.used == 0 and a.reserved == 0


def test_small_pool():
    f, a = make()
    ptrs = [a.alloc(8) for _ in range(3000)]
    assert f.allocs == 2  # two 16 KiB slabs of 2048 slots
    assert len({p for p, _ in ptrs}) == 3000
    for p, s in ptrs:
        a.free(p, s)
    assert a.stats()["active"] == 0
    a.clear_cache()
    assert f.used == 0


def test_large_best_fit_bounded_waste():
    f, a = make()
    p, s = a.alloc(10 * 16384)
    a.free(p, s)
    q, t = a.alloc(9 * 16384)  # within two pages: reused
    assert q == p and t == 10 * 16384
    a.free(q, t)
    r, u = a.alloc(3 * 16384)  # far smaller: not reused
    assert r != p


def test_peak_and_reset():
    f, a = make()
    x = a.alloc(1 << 20)
    y = a.alloc(1 << 20)
    a.free(*x)
    assert a.stats()["peak"] == 2 << 20 and a.stats()["active"] == 1 << 20
    a.reset_peak()
    assert a.peak == 1 << 20
    a.free(*y)


def test_oom_frees_cache_then_retries():
    f, a = make(capacity=64 << 20)
    a.memory_limit = 1 << 40  # only the (fake) driver limits
    blocks = [a.alloc(16 << 20) for _ in range(3)]
    for b in blocks:
        a.free(*b)  # 48 MiB cached
    p, s = a.alloc(40 << 20)  # driver OOM -> cache freed -> retry succeeds
    assert a.n_oom_recoveries == 1 and s == 40 << 20
    a.free(p, s)


def test_oom_raises_memory_error_and_recovers():
    f, a = make(capacity=64 << 20)
    a.memory_limit = 1 << 40
    with pytest.raises(MemoryError, match=r"cannot allocate .*\(107374182400 bytes"):
        a.alloc(100 << 30)
    p, s = a.alloc(1 << 20)  # the next allocation works
    assert a.stats()["active"] == s
    a.free(p, s)


def test_memory_limit_reclaims_queued_work_first():
    held = []

    def reclaim(wait):
        while held:
            a.free(*held.pop())

    f, a = make(capacity=1 << 30, reclaim=reclaim)
    a.set_memory_limit(64 << 20)
    held.append(a.alloc(48 << 20))  # held by "queued work"
    p, s = a.alloc(48 << 20)  # over the limit -> reclaim -> reuse
    assert not held and a.stats()["active"] == s
    a.free(p, s)
    with pytest.raises(MemoryError, match="memory limit"):
        a.alloc(65 << 20)


def test_cache_limit_trims_oldest():
    f, a = make()
    a.set_cache_limit(3 << 20)
    bs = [a.alloc(1 << 20) for _ in range(5)]
    for b in bs:
        a.free(*b)
    a.stats()
    assert a.cached <= 3 << 20
    assert bs[0][0] not in a._lru and bs[-1][0] in a._lru


def test_loop_returns_to_start():
    f, a = make()
    start = a.active
    for i in range(10000):
        x = a.alloc(4000 + (i % 7) * 100)
        y = a.alloc(4000)
        a.free(*x)
        a.free(*y)
    assert a.stats()["active"] == start and f.allocs <= 4


# ---- the array constructor ---------------------------------------------------------------

def test_new_array_takes_a_size_class_and_gives_it_back():
    f, a = make()
    x = new_array(3, (4, 5), np.dtype("float32"), a)
    assert (x.shape, x.strides, x.size, x.offset, x.c_contig) == ((4, 5), (5, 1), 20, 0, True)
    assert x.ptr == x.buffer.ptr and x.device_index == x.buffer.device_index == 3
    assert x.buffer.nbytes == x.nbytes == 80 and x.buffer.size == al.round_size(80)
    y = new_array(3, (4, 5), np.dtype("float32"), a, 20)  # the element count given
    assert y.strides == (5, 1) and y.ptr != x.ptr
    assert a.stats()["active"] == 2 * al.round_size(80)
    del x
    assert a.stats()["active"] == al.round_size(80)  # x's block is back, y's still out


def test_new_array_of_no_elements_allocates_nothing():
    f, a = make()
    x = new_array(0, (3, 0), np.dtype("int64"), a)
    assert x.size == 0 and x.ptr == 0 and x.strides == (1, 1) and f.allocs == 0
    del x
    assert a.stats()["active"] == 0


# ---- streams' scratch over a fake driver --------------------------------------------------

class FakeStreamDriver:
    """The driver calls a Stream with no queued work makes; handles are reused once destroyed,
    as the driver may."""

    CUstream = int

    class CUstream_flags:
        CU_STREAM_NON_BLOCKING = types.SimpleNamespace(value=1)

    def __init__(self):
        self.free_handles = [0x5000]
        self.destroyed = []

    def cuStreamCreate(self, flags):
        return 0, self.free_handles.pop()

    def cuStreamSynchronize(self, handle):
        return (0,)

    def cuStreamDestroy(self, handle):
        self.destroyed.append(handle)
        self.free_handles.append(handle)
        return (0,)


@pytest.fixture
def fake_streams(monkeypatch):
    from arrayx.cuda.engine import driver as driver_api
    from arrayx.cuda.engine import runtime
    driver = FakeStreamDriver()
    device = types.SimpleNamespace(index=0)
    monkeypatch.setattr(driver_api, "_driver", driver)
    monkeypatch.setattr(runtime, "get_device", lambda index=0: device)
    yield runtime, driver
    gc.collect()  # the test's streams are finalised with the fake driver, not a later one


def test_a_stream_on_a_reused_handle_starts_with_no_scratch(fake_streams):
    runtime, driver = fake_streams
    first = runtime.Stream(0)
    first.scratch["family"] = object()
    handle = first.ptr
    del first
    gc.collect()  # a stream and its encoder refer to each other
    assert driver.destroyed == [handle]
    second = runtime.Stream(0)
    assert second.ptr == handle and second.scratch == {}


def test_wrappers_of_one_foreign_stream_share_scratch_while_one_lives(fake_streams):
    runtime, driver = fake_streams
    first = runtime.Stream.external(0, 0x77)
    first.scratch["family"] = area = object()
    second = runtime.Stream.external(0, 0x77)
    assert second.scratch["family"] is area and second.encoder is first.encoder
    assert runtime.Stream.external(0, 0x78).scratch == {}
    del first, second
    gc.collect()
    assert runtime.Stream.external(0, 0x77).scratch == {}
    assert 0x77 not in driver.destroyed  # not arrayx's to destroy


# ---- kernel template and cache key -------------------------------------------------------

def test_cache_key_depends_on_everything():
    from arrayx.cuda.engine import compiler
    from arrayx.cuda.kernels.elementwise import kernel_spec
    from arrayx.cuda.kernels.elementwise.ops import binary_op
    f32 = np.dtype("float32")
    s1 = kernel_spec("add", binary_op("add", f32), ("a", "a"), (f32, f32), "vec", 4, 2)
    s2 = kernel_spec("subtract", binary_op("subtract", f32), ("a", "a"), (f32, f32), "vec", 4, 2)
    keys = {compiler.cache_key(s1, (9, 0)), compiler.cache_key(s2, (9, 0)),
            compiler.cache_key(s1, (8, 0)), compiler.cache_key(s1, (9, 0), debug=True)}
    assert len(keys) == 4
    assert compiler.cache_key(s1, (9, 0)) == compiler.cache_key(s1, (9, 0))
    bounded = dataclasses.replace(s1, launch_bounds=(256, 5))
    assert compiler.cache_key(bounded, (9, 0)) not in keys
    # an unbounded spec's key is the one it had before launch bounds existed
    exports = compiler.device_exports()
    helpers = {module: exports[names[0]][1] for module, names in compiler.helpers_used(s1.source).items()}
    h = hashlib.sha256(json.dumps([s1.source, s1.entry, list(s1.argtypes), [9, 0],
                                   compiler.versions(), False, helpers]).encode()).hexdigest()
    assert compiler.cache_key(s1, (9, 0)) == h


def test_device_exports_read_by_pattern_equal_a_parse_of_the_modules():
    """device_exports reads each device module's __all__ and relative imports by pattern (a
    process's first kernel key waits for it); a full parse must find the same."""
    import ast
    from arrayx.cuda.engine import compiler
    exports, imports = {}, {}
    for path in sorted(pathlib.Path(compiler._DEVICE_DIR).glob("*.py")):
        if path.name == "__init__.py":
            continue
        tree = ast.parse(path.read_text())
        imports[path.stem] = sorted({n.module for n in ast.walk(tree)
                                     if isinstance(n, ast.ImportFrom) and n.level == 1})
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__"
                                                    for t in node.targets):
                exports.update((name, path.stem) for name in ast.literal_eval(node.value))
    got = compiler.device_exports()
    assert {name: module for name, (module, _) in got.items()} == exports and exports
    for module, deps in imports.items():  # the pattern's imports: the ones each digest covers
        text = (pathlib.Path(compiler._DEVICE_DIR) / f"{module}.py").read_text()
        assert sorted(set(compiler._RELATIVE_IMPORT.findall(text))) == deps


def test_precompiled_kernels_are_unique_valid_python():
    """Every kernel precompile.py builds (all the run time can pick below 2**31 elements) has a
    unique name and parses; the count stays per function, dtype and layout, not per shape."""
    from arrayx.cuda.precompile import specs
    all_specs = specs()
    names = [s.name for s in all_specs]
    assert len(names) == len(set(names))
    assert len(names) < 10000  # about 8800: the elementwise layouts (vec, strided, rows, tile) are most
    for s in all_specs:
        compile(s.source, s.name, "exec")


# ---- layering of the import graph ----------------------------------------------------------

_PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "arrayx"
# Namespace modules: the backends below them must not import them (arrayx/_backend.py is the
# contract they import instead).
_NAMESPACE = ("arrayx._array_object", "arrayx._indexing", "arrayx._namespace", "arrayx.linalg",
              "arrayx.fft")


def _is_namespace(module: str) -> bool:
    if module.startswith("arrayx._") and module.endswith("_functions"):
        return True
    return any(module == m or module.startswith(m + ".") for m in _NAMESPACE)


def _import_graph():
    """module -> the arrayx modules it imports, at any level (function-local imports count)."""
    paths = {}
    for p in _PACKAGE.rglob("*.py"):
        parts = list(p.relative_to(_PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        paths[".".join(parts)] = p
    graph = {}
    for mod, p in paths.items():
        package = mod if p.name == "__init__.py" else mod.rpartition(".")[0]
        deps = set()
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = package
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                if node.level:
                    base = base + "." + node.module if node.module else base
                else:
                    base = node.module
                targets = [base + "." + a.name if base + "." + a.name in paths else base
                           for a in node.names]
            else:
                continue
            for t in targets:
                while t and t not in paths:
                    t = t.rpartition(".")[0]
                if t and t != mod:
                    deps.add(t)
        graph[mod] = deps
    return graph


def _cycles(graph, prefix):
    """The strongly connected components of more than one module among modules under prefix."""
    sub = {m: {d for d in ds if d.startswith(prefix)} for m, ds in graph.items() if m.startswith(prefix)}
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(sub[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(sub):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle_inside_the_cuda_engine():
    cycles = _cycles(_import_graph(), "arrayx.cuda.engine")
    assert not cycles, cycles


def test_the_engine_imports_nothing_above_it():
    graph = _import_graph()
    above = {m: sorted(d for d in deps if not d.startswith("arrayx.cuda.engine"))
             for m, deps in graph.items() if m.startswith("arrayx.cuda.engine")}
    assert not {m: d for m, d in above.items() if d}


def test_no_import_cycle_inside_the_cuda_backend():
    cycles = _cycles(_import_graph(), "arrayx.cuda")
    assert not cycles, cycles


@pytest.mark.parametrize("backend", ["arrayx.cpu", "arrayx.cuda"])
def test_backends_import_no_namespace_module(backend):
    graph = _import_graph()
    found = {m: sorted(d for d in deps if _is_namespace(d))
             for m, deps in graph.items() if m == backend or m.startswith(backend + ".")}
    assert not {m: d for m, d in found.items() if d}


def test_flush_waits_for_a_submission_another_thread_has_begun(monkeypatch):
    """A thread's flush (before its copy, library call or event) must return only after the
    launches it recorded are on the stream, even when another thread has already taken them off
    the queue and is still capturing them: before, flush saw the queue empty and returned, so a
    cuFFT call or a device-to-host copy could overtake the kernels producing its input (one
    thread's hfft came back all wrong on the H200)."""
    import threading
    from arrayx.cuda.engine import encoder as enc_mod
    stream = types.SimpleNamespace(device=None, device_index=-1, handle=None)
    enc = enc_mod.Encoder(stream)
    enc.deferred = []
    capturing, release, order = threading.Event(), threading.Event(), []

    def slow_submit(d):  # what _submit_graph does: take the launches, then capture and launch
        launches, enc.deferred = enc.deferred, []
        capturing.set()
        release.wait(5)
        order.append(("launched", len(launches)))

    monkeypatch.setattr(enc, "_submit_deferred", slow_submit)
    monkeypatch.setattr(enc_mod, "driver", lambda: None)
    enc.deferred.append("a recorded launch")
    def commit_elsewhere():  # another thread's commit: the lock held through the submission
        with enc.lock:
            slow_submit(None)

    other = threading.Thread(target=commit_elsewhere)
    other.start()
    assert capturing.wait(5)
    flushing = threading.Thread(target=lambda: (enc.flush(), order.append(("flushed",))))
    flushing.start()
    flushing.join(0.2)
    release.set()
    other.join(5)
    flushing.join(5)
    assert order == [("launched", 1), ("flushed",)]


# ---- work beside the first context -------------------------------------------------------

def test_beside_first_context_prepares_here_runs_on_a_helper_once(monkeypatch):
    import threading
    from arrayx.cuda.engine import runtime
    seen = []

    def prepare():
        seen.append(("prepare", threading.current_thread()))
        return lambda: seen.append(("work", threading.current_thread()))

    def missing():
        raise ImportError("a library that is not installed")

    monkeypatch.setattr(runtime, "beside_first_context",
                        [missing, prepare, lambda: (lambda: 1 / 0), prepare])
    monkeypatch.setattr(runtime, "_beside_started", False)
    helper = runtime._start_beside_first_context()
    helper.join()
    here = threading.current_thread()
    assert [(what, thread is here) for what, thread in seen] == \
        [("prepare", True), ("prepare", True), ("work", False), ("work", False)]
    assert runtime._start_beside_first_context() is None  # once a process


def test_the_package_registers_the_library_loads():
    import arrayx.cuda  # noqa: F401
    from arrayx.cuda.engine import runtime
    from arrayx.cuda.libraries import load_all
    assert [prepare() for prepare in runtime.beside_first_context] == [load_all]
