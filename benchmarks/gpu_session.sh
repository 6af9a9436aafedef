#!/usr/bin/env bash
# One device-machine session for the CUDA runtime: GPU tests, then every runtime benchmark.
# Run from the repo root on the GPU machine (the `run` tool), with carry=[".whl", ".kcache"]:
#   bash benchmarks/gpu_session.sh
# Logs and results go to $OUT (pytest.log, bench.log, runtime-*.json/md, kcache.tgz); a short
# table is printed last.
set -o pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target .site .whl/*.whl \
  && export PYTHONPATH=$PWD:$PWD/.site || exit 1
export ARRAYX_KERNEL_CACHE=$PWD/.kcache PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv | tee "$OUT/nvidia-smi.txt"
python3 -c "import numpy, numba, numba_cuda, cuda.bindings; print('numpy', numpy.__version__, 'numba', numba.__version__, 'numba-cuda', numba_cuda.__version__, 'cuda-bindings', cuda.bindings.__version__)" 2>&1 | tee "$OUT/versions.txt"
T0=$(date +%s)
timeout ${PYTEST_TIMEOUT:-240} python3 -m pytest -q -p no:cacheprovider -rs tests/cuda ${PYTEST_ARGS:-} 2>&1 | tee "$OUT/pytest.log" | tail -40
T1=$(date +%s)
timeout ${BENCH_TIMEOUT:-300} python3 benchmarks/runtime_bench.py --out "$OUT" ${BENCH_ARGS:-} 2>&1 | tee "$OUT/bench.log" | grep -v "^  " | tail -60
T2=$(date +%s)
tar czf "$OUT/kcache.tgz" .kcache 2>/dev/null
echo "pytest $((T1-T0)) s, bench $((T2-T1)) s"
echo "== pytest summary"; tail -3 "$OUT/pytest.log"
