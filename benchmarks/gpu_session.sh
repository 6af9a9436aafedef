#!/usr/bin/env bash
# One device-machine session: GPU tests, the namespace tests on cuda:0, the conformance suite on
# cuda, and benchmarks. Run from the repo root on the GPU machine (the `run` tool) with
# carry=[".ew", ".aat"]:
#   STEPS="cuda ns conf bench" NS_TESTS="tests/test_statistical.py" BENCHES="reduce" \
#     bash benchmarks/gpu_session.sh
# .ew holds the wheels the image lacks (see ../shared/tools/gpu-wheels.sh: numpy<2.5 for
# numba-cuda, nvmath-python, cuda-cccl, hypothesis, ndindex, pytest-json-report, pytest-metadata)
# and kcache.txz, the kernel cache (filled without a GPU by `python -m arrayx.cuda.precompile
# --cc 9.0`, plus the kcache-new.tgz of earlier sessions; xz because it is a third of gzip's size
# and the carry is limited to 64 MiB); .aat is array-api-tests without its .git folders.
# Settings (environment):
#   STEPS      steps to run, any of: cuda (tests/cuda), ns (NS_TESTS on cuda:0 with host fallback
#              an error), conf (conformance/run.py --device cuda), bench (BENCHES)
#   CUDA_TESTS pytest selection for the cuda step (default tests/cuda)
#   NS_TESTS   pytest selection for the ns step (default: the whole namespace suite, tests/*.py)
#   BENCHES    benchmark names: benchmarks/<name>_bench.py, each run with --out $OUT
#   MAX_EXAMPLES, and *_TIMEOUT per step (seconds)
# Results go to $OUT as two archives (the `run` tool brings back few files): run.tgz with
# cuda-tests.log, ns-tests.log, conformance.log, cuda.json (conformance summary), bench-<name>.log
# and the benchmarks' json/md; kcache-new.tgz, the kernels compiled here (add them to
# .ew/kcache.txz so the next session starts warm). A summary is printed last.
set -o pipefail
FINAL_OUT=${OUT:-/tmp/out}; OUT=/tmp/gpu-session; mkdir -p "$OUT" "$FINAL_OUT"
STEPS=${STEPS:-cuda ns conf bench}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target .site .ew/*.whl \
  && export PYTHONPATH=$PWD:$PWD/.site:$PWD/benchmarks || exit 1
mkdir -p .kcache && tar xf .ew/kcache.txz -C .kcache && touch /tmp/kcache-marker
export ARRAYX_KERNEL_CACHE=$PWD/.kcache PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader \
  | tee "$OUT/nvidia-smi.txt"
python3 -c "import numpy, numba_cuda, hypothesis; print('numpy', numpy.__version__, 'numba-cuda', numba_cuda.__version__, 'hypothesis', hypothesis.__version__)"

summary() {  # pytest log -> failures and the final count line
  grep -E "^(FAILED|ERROR)" "$1" | cut -c1-220 | head -${2:-40}
  grep -E "(passed|failed|error)" "$1" | tail -1
}
declare -A SECONDS_OF
step_start() { T=$(date +%s); }
step_end() { SECONDS_OF[$1]=$(( $(date +%s) - T )); }

if [[ $STEPS == *cuda* ]]; then
  step_start
  timeout ${CUDA_TIMEOUT:-150} python3 -m pytest -q -p no:cacheprovider -n 8 --tb=short -rs \
    ${CUDA_TESTS:-tests/cuda} > "$OUT/cuda-tests.log" 2>&1
  step_end cuda
fi
if [[ $STEPS == *ns* ]]; then
  step_start
  ARRAYX_DEVICE=cuda ARRAYX_HOST_FALLBACK=error timeout ${NS_TIMEOUT:-200} python3 -m pytest -q \
    -p no:cacheprovider -n 8 --tb=short ${NS_TESTS:-tests/test_*.py} > "$OUT/ns-tests.log" 2>&1
  step_end ns
fi
if [[ $STEPS == *conf* ]]; then
  step_start
  rm -f /tmp/fallbacks
  ARRAYX_FALLBACK_REPORT=/tmp/fallbacks ARRAY_API_TESTS_DIR=$PWD/.aat timeout ${CONF_TIMEOUT:-220} \
    python3 conformance/run.py --device cuda --max-examples ${MAX_EXAMPLES:-100} --output "$OUT/cuda.json" \
    -- -n 8 -p fallback_report -q > "$OUT/conformance.log" 2>&1
  echo "== primitives that fell back to the host in the conformance run:" >> "$OUT/conformance.log"
  sort -u /tmp/fallbacks | tr '\n' ' ' >> "$OUT/conformance.log"
  step_end conf
fi
if [[ $STEPS == *bench* ]]; then
  for name in ${BENCHES:-}; do
    step_start
    timeout ${BENCH_TIMEOUT:-120} python3 "benchmarks/${name}_bench.py" --out "$OUT" \
      > "$OUT/bench-$name.log" 2>&1
    step_end "bench-$name"
  done
fi
(cd .kcache && find . -type f -newer /tmp/kcache-marker | tar czf "$FINAL_OUT/kcache-new.tgz" -T -)
tar czf "$FINAL_OUT/run.tgz" -C "$OUT" .

echo "== new kernels compiled here: $(tar tzf "$FINAL_OUT/kcache-new.tgz" | grep -c json)"
for s in "${!SECONDS_OF[@]}"; do echo "seconds $s: ${SECONDS_OF[$s]}"; done
[[ -f $OUT/cuda-tests.log ]] && { echo "== tests/cuda"; summary "$OUT/cuda-tests.log"; }
[[ -f $OUT/ns-tests.log ]] && { echo "== namespace tests on cuda"; summary "$OUT/ns-tests.log" 60; }
[[ -f $OUT/conformance.log ]] && { echo "== conformance"; grep -E "^(FAILED|ERROR)|^\[conformance\]" \
  "$OUT/conformance.log" | cut -c1-200 | tail -40; tail -2 "$OUT/conformance.log"; }
for name in ${BENCHES:-}; do
  echo "== bench $name"; grep -E "Error|Traceback" "$OUT/bench-$name.log" | head -5
  grep -v "^  " "$OUT/bench-$name.log" | tail -14
done
exit 0
