#!/usr/bin/env bash
# One device-machine session for the CUDA elementwise family (issue 4): GPU tests, the namespace
# tests and the conformance suite on cuda:0, then the bandwidth benchmark. Run from the repo root
# on the GPU machine (the `run` tool) with carry=[".ew", ".aat"]:
#   bash benchmarks/gpu_session_elementwise.sh
# .ew holds the wheels the image lacks (numpy<2.5 for numba-cuda, pytest-json-report,
# pytest-metadata, ndindex, hypothesis) and kcache.tgz (the kernel cache filled without a GPU by
# `python -m arrayx.cuda.precompile --cc 9.0`); .aat is array-api-tests without its .git folders.
# STEPS selects steps (default "gpu ns conf bench"). Results go to $OUT (at most 8 files:
# tests.log, conformance.log, bench.log, cuda.json, elementwise-*.json/md, kcache-new.tgz with the
# kernels compiled here).
set -o pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
STEPS=${STEPS:-gpu ns conf bench}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target .site .ew/*.whl \
  && export PYTHONPATH=$PWD:$PWD/.site:$PWD/benchmarks || exit 1
mkdir -p .kcache && tar xzf .ew/kcache.tgz -C .kcache && touch /tmp/kcache-marker
export ARRAYX_KERNEL_CACHE=$PWD/.kcache PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
python3 -c "import numpy, numba_cuda, hypothesis; print('numpy', numpy.__version__, 'numba-cuda', numba_cuda.__version__, 'hypothesis', hypothesis.__version__)"
T0=$(date +%s)
if [[ $STEPS == *gpu* ]]; then
  timeout ${GPU_TIMEOUT:-100} python3 -m pytest -q -p no:cacheprovider -x tests/cuda/test_gpu.py \
    2>&1 | tee -a "$OUT/tests.log" | tail -4
fi
T1=$(date +%s)
if [[ $STEPS == *ns* ]]; then
  ARRAYX_DEVICE=cuda ARRAYX_HOST_FALLBACK=error timeout ${NS_TIMEOUT:-130} python3 -m pytest -q \
    -p no:cacheprovider -n 8 --tb=short tests/test_elementwise.py tests/test_creation.py \
    tests/test_dtypes.py tests/test_properties.py 2>&1 | tee -a "$OUT/tests.log" \
    | grep -E "^(FAILED|ERROR)|passed|failed" | tail -30
fi
T2=$(date +%s)
if [[ $STEPS == *conf* ]]; then
  rm -f /tmp/fallbacks
  ARRAYX_FALLBACK_REPORT=/tmp/fallbacks ARRAY_API_TESTS_DIR=$PWD/.aat timeout ${CONF_TIMEOUT:-220} \
    python3 conformance/run.py --device cuda --max-examples ${MAX_EXAMPLES:-100} --output "$OUT/cuda.json" \
    -- -n 8 -p fallback_report -q 2>&1 | tee "$OUT/conformance.log" | grep -E "^(FAILED|ERROR)|^\[conformance\]" | tail -40
  echo "== primitives that fell back to the host in the conformance run:" | tee -a "$OUT/conformance.log"
  sort -u /tmp/fallbacks | tr '\n' ' ' | tee -a "$OUT/conformance.log"; echo
fi
T3=$(date +%s)
if [[ $STEPS == *bench* ]]; then
  timeout ${BENCH_TIMEOUT:-100} python3 benchmarks/elementwise_bench.py --out "$OUT" 2>&1 \
    | tee "$OUT/bench.log" | grep -v "^  " | tail -20
fi
T4=$(date +%s)
(cd .kcache && find . -type f -newer /tmp/kcache-marker | tar czf "$OUT/kcache-new.tgz" -T -)
echo "new kernels compiled here: $(tar tzf "$OUT/kcache-new.tgz" | grep -c json)"
echo "seconds: gpu $((T1-T0)) ns $((T2-T1)) conf $((T3-T2)) bench $((T4-T3))"
