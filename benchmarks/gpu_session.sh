#!/usr/bin/env bash
# One device-machine session: GPU tests, the namespace tests on cuda:0, the conformance suite on
# cuda, and benchmarks (optionally A/B against an older checkout). Run from the repo root on the
# GPU machine (the `run` tool) with carry=[".ew", ".aat"] (plus the BASELINE folder for A/B):
#   STEPS="cuda ns conf bench" NS_TESTS="tests/test_statistical.py" BENCHES="reduce scan" \
#     [BASELINE=.base] bash benchmarks/gpu_session.sh
# .ew holds the wheels the image lacks (see ../shared/tools/gpu-wheels.sh: numpy<2.5 for
# numba-cuda, cuda-cccl, hypothesis, ndindex, pytest-json-report, pytest-metadata; the script also
# downloads nvmath-python, which arrayx no longer uses)
# and, optionally, kcache.txz, the kernel cache (filled without a GPU by `python -m
# arrayx.cuda.precompile --cc 9.0`, plus the kcache-new.tgz of earlier sessions; xz because it is
# a third of gzip's size and the carry is limited to 64 MiB). Without kcache.txz the session
# starts with an empty cache and compiles what it launches. .aat is array-api-tests without its
# .git folders.
# Settings (environment):
#   STEPS      steps to run, any of: cuda (tests/cuda), ns (NS_TESTS on cuda:0 with host fallback
#              an error), conf (conformance/run.py --device cuda), coldconf (the conformance
#              suite on an empty kernel cache, then again on what it filled: cuda-cold.json,
#              cuda-warm.json, their logs, cache-<run>.txt (cache_report.py by template) and
#              compiled-<run>.txt (the names of the kernels each compiled)), coldstart
#              (coldstart_bench.py --repeats 2, COLDSTART_TIMEOUT s), firstproc
#              (probes/library_load_probe.py, default and lazy, with the page cache dropped and
#              then warm, each FIRSTPROC_TIMEOUT s), bench (BENCHES)
#   CUDA_TESTS pytest selection for the cuda step (default tests/cuda)
#   NS_TESTS   pytest selection for the ns step (default: the whole namespace suite, tests/*.py)
#   BENCHES    benchmark names: benchmarks/<name>_bench.py (elementwise reduce scan indexing sort
#              linalg runtime), each run with --out (see below)
#   BASELINE   A/B mode for the bench step: a folder in the working tree holding an older
#              checkout (e.g. `git archive <commit> --prefix=.base/ | tar x`, optionally with
#              the commit in .base/COMMIT), carried to the GPU machine. Each benchmark then runs
#              twice in this call: first the baseline's own <BASELINE>/benchmarks/<name>_bench.py
#              with PYTHONPATH=<BASELINE> (each bench script puts its own checkout first on
#              sys.path, so the current script would import the current arrayx), then the
#              current one. The other steps run the current tree only.
#   AB_TOLERANCE  A/B: flag arrayx rows whose new/base time ratio exceeds 1 + this (default 0.05)
#   COMMIT     the current tree's commit, recorded in commit.txt (default: git rev-parse, if the
#              working tree on the GPU machine has its .git; the benchmarks' JSON has no commit)
#   MAX_EXAMPLES, and *_TIMEOUT per step in seconds: CUDA_TIMEOUT, NS_TIMEOUT, CONF_TIMEOUT,
#              BENCH_TIMEOUT (each benchmark run), BASE_BENCH_TIMEOUT (each baseline run; default
#              BENCH_TIMEOUT: the baseline's kernels may miss the cache and compile)
# The wheels are installed with bytecode, as pip installs them for a user (import times in the
# coldstart step depend on it).
# Results go to $OUT as two archives (the `run` tool brings back few files), and failures.log
# (every test failure of the cuda and ns steps as it happened): run.tgz with
# nvidia-smi.txt, commit.txt, cuda-tests.log, ns-tests.log, conformance.log, cuda.json
# (conformance summary), bench-<name>.log and the benchmarks' json/md: in the archive's top level
# without BASELINE; with BASELINE in new/ and base/ (the harness names a result <name>-<date>, so
# the two runs need folders of their own), beside bench-<name>.log and bench-<name>-base.log;
# kcache-new.tgz, the kernels compiled here (add them to .ew/kcache.txz so the next session starts
# warm). A summary is printed last (with BASELINE: both runs' tables and a row-by-row comparison).
set -o pipefail
ROOT=$PWD
FINAL_OUT=${OUT:-/tmp/out}; OUT=/tmp/gpu-session; mkdir -p "$OUT" "$FINAL_OUT"
STEPS=${STEPS:-cuda ns conf bench}
python3 -m pip install -q --no-index --no-deps --no-cache-dir --target .site .ew/*.whl \
  && export PYTHONPATH=$ROOT:$ROOT/.site:$ROOT/benchmarks || exit 1
mkdir -p .kcache
if [[ -f .ew/kcache.txz ]]; then
  tar xf .ew/kcache.txz -C .kcache || echo "kcache.txz did not unpack fully: the rest compiles"
else
  echo "no .ew/kcache.txz: starting with an empty kernel cache (kernels compile on first use)"
fi
touch /tmp/kcache-marker   # kernels newer than this were compiled here (tar keeps old mtimes)
export ARRAYX_KERNEL_CACHE=$ROOT/.kcache PYTHONUNBUFFERED=1
# each test failure as it happens, straight into what comes back (benchmarks/failure_log.py):
# a step stopped by its limit, or a call stopped before the archives, still shows its failures
export ARRAYX_FAILURE_LOG=$FINAL_OUT/failures.log
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader \
  | tee "$OUT/nvidia-smi.txt"
python3 -c "import numpy, numba_cuda, hypothesis; print('numpy', numpy.__version__, 'numba-cuda', numba_cuda.__version__, 'hypothesis', hypothesis.__version__)"
{ echo "current: ${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}, $(date -u +%FT%TZ)"
  [[ -n ${BASELINE:-} ]] && echo "baseline: $BASELINE, $(cat "$BASELINE/COMMIT" 2>/dev/null || echo 'commit unknown (no COMMIT file)')"
} | tee "$OUT/commit.txt"

if [[ -n ${BASELINE:-} ]]; then
  BASELINE=${BASELINE%/}; [[ $BASELINE == /* ]] || BASELINE=$ROOT/$BASELINE
  [[ -d $BASELINE/arrayx ]] || { echo "BASELINE=$BASELINE has no arrayx/ (carried?)"; exit 1; }
  BASE_PATH=$BASELINE:$ROOT/.site:$BASELINE/benchmarks
  echo "baseline arrayx: $(cd /tmp && PYTHONPATH=$BASE_PATH python3 -c 'import arrayx; print(arrayx.__file__)')"
fi

summary() {  # pytest log -> failures and the final count line
  grep -E "^(FAILED|ERROR)" "$1" | cut -c1-220 | head -${2:-40}
  grep -E "(passed|failed|error)" "$1" | tail -1
}
bench_summary() {  # benchmark log -> errors and its closing table
  grep -E "Error|Traceback" "$1" | head -5
  grep -v "^  " "$1" | tail -14
}
has_step() { [[ " $STEPS " == *" $1 "* ]]; }
declare -A SECONDS_OF
step_start() { T=$(date +%s); }
step_end() { SECONDS_OF[$1]=$(( $(date +%s) - T )); }

if has_step cuda; then
  step_start
  timeout ${CUDA_TIMEOUT:-150} python3 -m pytest -q -p no:cacheprovider -p failure_log -n 8 \
    --tb=short -rs \
    ${CUDA_TESTS:-tests/cuda} > "$OUT/cuda-tests.log" 2>&1
  step_end cuda
fi
if has_step ns; then
  step_start
  ARRAYX_DEVICE=cuda ARRAYX_HOST_FALLBACK=error timeout ${NS_TIMEOUT:-200} python3 -m pytest -q \
    -p no:cacheprovider -p failure_log -n 8 --tb=short ${NS_TESTS:-tests/test_*.py} \
    > "$OUT/ns-tests.log" 2>&1
  step_end ns
fi
if has_step conf; then
  step_start
  rm -f /tmp/fallbacks
  ARRAYX_FALLBACK_REPORT=/tmp/fallbacks ARRAY_API_TESTS_DIR=$ROOT/.aat timeout ${CONF_TIMEOUT:-220} \
    python3 conformance/run.py --device cuda --max-examples ${MAX_EXAMPLES:-100} --output "$OUT/cuda.json" \
    -- -n 8 -p fallback_report -q > "$OUT/conformance.log" 2>&1
  echo "== primitives that fell back to the host in the conformance run:" >> "$OUT/conformance.log"
  sort -u /tmp/fallbacks | tr '\n' ' ' >> "$OUT/conformance.log"
  step_end conf
fi
if has_step coldconf; then  # issue 23: the suite on an empty cache, then warm on what it filled
  step_start
  COLD=/tmp/coldconf-cache; rm -rf "$COLD"; mkdir -p "$COLD"
  for run in cold warm; do
    touch /tmp/coldconf-$run
    ARRAYX_KERNEL_CACHE=$COLD ARRAY_API_TESTS_DIR=$ROOT/.aat timeout ${CONF_TIMEOUT:-220} \
      python3 conformance/run.py --device cuda --max-examples ${MAX_EXAMPLES:-100} \
      --output "$OUT/cuda-$run.json" -- -n 8 -q > "$OUT/conformance-$run.log" 2>&1
    python3 benchmarks/probes/cache_report.py "$COLD" --newer-than /tmp/coldconf-$run --top 25 \
      --names "$OUT/compiled-$run.txt" > "$OUT/cache-$run.txt" 2>&1
  done
  step_end coldconf
fi
if has_step firstproc; then
  step_start
  for cache in --drop-page-cache ""; do
    timeout ${FIRSTPROC_TIMEOUT:-60} python3 benchmarks/probes/library_load_probe.py --rounds 2 \
      --variants default,lazy --exit-at-once $cache >> "$OUT/first-process.log" 2>&1
  done
  step_end firstproc
fi
if has_step coldstart; then
  step_start
  timeout ${COLDSTART_TIMEOUT:-120} python3 benchmarks/coldstart_bench.py --out "$OUT" --repeats 2 \
    --unshipped-repeats 0 --deadline $(( ${COLDSTART_TIMEOUT:-120} - 20 )) > "$OUT/coldstart.log" 2>&1
  step_end coldstart
fi
if has_step bench; then
  NEW_OUT=$OUT; [[ -n ${BASELINE:-} ]] && NEW_OUT=$OUT/new && mkdir -p "$OUT/new" "$OUT/base"
  for name in ${BENCHES:-}; do
    if [[ -n ${BASELINE:-} ]]; then
      step_start
      if [[ -f $BASELINE/benchmarks/${name}_bench.py ]]; then
        PYTHONPATH=$BASE_PATH timeout ${BASE_BENCH_TIMEOUT:-${BENCH_TIMEOUT:-120}} \
          python3 "$BASELINE/benchmarks/${name}_bench.py" --out "$OUT/base" \
          > "$OUT/bench-$name-base.log" 2>&1
      else
        echo "no $BASELINE/benchmarks/${name}_bench.py: nothing to compare" > "$OUT/bench-$name-base.log"
      fi
      step_end "bench-$name-base"
    fi
    step_start
    timeout ${BENCH_TIMEOUT:-120} python3 "benchmarks/${name}_bench.py" --out "$NEW_OUT" \
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
for run in cold warm; do
  [[ -f $OUT/conformance-$run.log ]] && { echo "== conformance, $run cache"
    grep -E "^(FAILED|ERROR)|^\[conformance\] passed" "$OUT/conformance-$run.log" | cut -c1-200 | tail -20
    head -8 "$OUT/cache-$run.txt"; }
done
[[ -f $OUT/first-process.log ]] && { echo "== first processes"; grep -A20 "^median" "$OUT/first-process.log"; }
[[ -f $OUT/coldstart.log ]] && { echo "== coldstart"; tail -4 "$OUT/coldstart.log"; }
if has_step bench; then
  for name in ${BENCHES:-}; do
    if [[ -n ${BASELINE:-} ]]; then
      echo "== bench $name, baseline ($BASELINE)"; bench_summary "$OUT/bench-$name-base.log"
    fi
    echo "== bench $name"; bench_summary "$OUT/bench-$name.log"
  done
  # A/B: every record both runs wrote (matched by name, library and occurrence), new/base
  [[ -n ${BASELINE:-} ]] && BENCHES="$BENCHES" AB_TOLERANCE=${AB_TOLERANCE:-0.05} python3 - "$OUT" <<'EOF'
import glob, json, os, sys
out, tol = sys.argv[1], float(os.environ["AB_TOLERANCE"])
def records(folder, name):
    files = sorted(glob.glob(os.path.join(out, folder, f"{name}-*.json")))
    if not files:
        return None
    keyed, seen = {}, {}
    for r in json.load(open(files[-1])).get("records", []):
        k = (r.get("name"), r.get("lib"))
        seen[k] = seen.get(k, 0) + 1
        keyed[k + (seen[k],)] = r
    return keyed
for name in os.environ["BENCHES"].split():
    base, new = records("base", name), records("new", name)
    print(f"== A/B {name}: arrayx rows, base -> new, new / base ('!': a time past 1 + {tol})")
    if base is None or new is None:
        print(f"  missing json: base {'ok' if base else 'none'}, new {'ok' if new else 'none'}")
        continue
    flagged = other = 0
    for k, r in new.items():
        b = base.get(k)
        if b is None or r.get("unit") != b.get("unit"):
            continue
        if not str(k[1]).startswith("arrayx"):   # CuPy's and PyTorch's rows: counted, not shown
            other += 1
            continue
        try:
            bv, nv = float(b["value"]), float(r["value"])
            ratio = nv / bv
        except (TypeError, ValueError, ZeroDivisionError, KeyError):
            continue
        if ratio != ratio:   # NaN: a case that could not run
            continue
        mark = "!" if r.get("unit") in ("ms", "us") and ratio > 1 + tol else " "
        flagged += mark == "!"
        print(f" {mark} {str(k[0])[:44]:44s} {str(k[1])[:20]:20s} {bv:>10.4g} -> {nv:<10.4g} "
              f"{str(r.get('unit', ''))[:8]:8s} {ratio:6.3f}")
    print(f"  arrayx timed rows past 1 + {tol}: {flagged} (rows of other libraries matched: {other})")
EOF
fi
exit 0
