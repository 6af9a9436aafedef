#!/usr/bin/env bash
# One device-machine session for CUDA linear algebra and FFT: GPU tests, then the benchmarks.
# Prepare here, without a GPU: the wheels (numpy<2.5 and nvmath-python, see gpu-wheels.sh) in
# .whl, and the kernel cache:  ARRAYX_KERNEL_CACHE=$PWD/.kcache python benchmarks/linalg_precompile.py
# Run from the repo root on the GPU machine (the `run` tool, carry=[".whl", ".kcache"]):
#   bash benchmarks/linalg_session.sh
# Logs and results go to $OUT (pytest.log, bench.log, linalg-*.json/md, kcache.tgz); the
# primitives that fell back to the host and a short table are printed last.
set -o pipefail
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target .site .whl/*.whl \
  && export PYTHONPATH=$PWD:$PWD/.site || exit 1
export ARRAYX_KERNEL_CACHE=$PWD/.kcache PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/nvidia-smi.txt"
python3 -c "import numpy, nvmath, cupy, torch; print('numpy', numpy.__version__, 'nvmath', nvmath.__version__, 'cupy', cupy.__version__, 'torch', torch.__version__)" 2>&1 | tee "$OUT/versions.txt"
T0=$(date +%s)
# -v --tb=short: each test's outcome is logged as it ends, so a run cut by the timeout still says
# which tests failed.
ARRAYX_DEVICE=cuda timeout "${PYTEST_TIMEOUT:-110}" python3 -m pytest -v --tb=short -p no:cacheprovider \
  --maxfail="${MAXFAIL:-30}" -W "default::arrayx._registry.HostFallbackWarning" \
  tests/cuda/test_linalg_gpu.py tests/test_linalg.py tests/test_fft.py ${PYTEST_ARGS:-} \
  > "$OUT/pytest.log" 2>&1
T1=$(date +%s)
timeout "${BENCH_TIMEOUT:-100}" python3 benchmarks/linalg_bench.py --out "$OUT" \
  --budget "${BENCH_BUDGET:-70}" > "$OUT/bench.log" 2>&1
T2=$(date +%s)
tar czf "$OUT/kcache.tgz" .kcache 2>/dev/null
echo "pytest $((T1-T0)) s, bench $((T2-T1)) s"
echo "== pytest failures"; grep -E " (FAILED|ERROR)( |$)" "$OUT/pytest.log" | cut -c1-160 | head -40
grep -E "^E  " "$OUT/pytest.log" | cut -c1-200 | head -30
echo "== host fallbacks (primitive names)"
grep -o "'[a-z_]*' is not implemented on cuda" "$OUT/pytest.log" | sort | uniq -c
echo "== pytest summary"; grep -cE " PASSED" "$OUT/pytest.log"; tail -1 "$OUT/pytest.log"
echo "== bench"; grep -E "Error|error|Traceback" "$OUT/bench.log" | head -8; sed -n '/^| item/,$p' "$OUT/bench.log"
