#!/usr/bin/env bash
# The GPU checks and measurements, in one prepared run on a lent GPU machine (an H200 here):
#   1. what the machine is (nvidia-smi, CuPy's view of the device)
#   2. pytest -m gpu: the CuPy kernels against the Numba backend, bit-exact random stream,
#      the GPU path really taken; the closed forms and the identities (chunking, replay,
#      common random numbers) on the GPU too; costs, crews, kept units, forecast demand,
#      failures after acceptance, the full reference (job mix included) and plans conditioned
#      on a status (posterior tables, truncated draws, pins and floors) against Numba
#   3. benchmarks/bench_gpu.py: kernel throughput at 1e6 and 1e7 scenarios on the reference,
#      end-to-end 1e6 x 5 (sampling, metrics, percentiles, summary), GPU-vs-CPU differences
#   4. benchmarks/bench_gpu_milestones.py: the milestones' reductions (kernels/milestones.cu)
#      on one 65,536-scenario chunk against Numba's: equal or not, and the times
#      (tests/backends/test_cuda_milestones.py's gpu tests, in step 2, hold them to Numba)
# Everything it prints also goes to $OUT (the lent machine's folder that comes back), else to
# benchmarks/gpu-check/. About 2-4 minutes on an H200, most of it Numba's first compile.
#
#   bash benchmarks/gpu_check.sh [bench_gpu.py options]     # on the GPU machine
#
# Python packages: the machine's python3 is used if it has cupy, numba, scipy and pytest
# (the workplace's CUDA image has them). Otherwise they are installed from wheels in .whl/
# (the machine cannot reach a registry). Fetch them beforehand on a machine that can, into
# the repository root (.whl/ is git-ignored), for the device's Python (3.12 there):
#   python3 -m pip download --only-binary=:all: --python-version 3.12 \
#       --platform manylinux2014_x86_64 -d .whl \
#       cupy-cuda12x numba llvmlite scipy numpy pyarrow matplotlib pytest
# (cupy-cuda13x for a CUDA 13 driver) and carry .whl along with the working tree.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT="${OUT:-benchmarks/gpu-check}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"   # mcrisk from this checkout, no install

PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c "import cupy, numba, scipy, pytest" 2>/dev/null; then
    if ! ls .whl/*.whl >/dev/null 2>&1; then
        echo "gpu_check: $PYTHON lacks cupy/numba/scipy/pytest and there is no .whl/ folder;" >&2
        echo "fetch the wheels first (see the header of $0)" >&2
        exit 2
    fi
    "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/mcrisk-site .whl/*.whl
    export PYTHONPATH="$PYTHONPATH:/tmp/mcrisk-site"
fi

{
    echo "== machine"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv || true
    "$PYTHON" - <<'EOF'
import platform, cupy, numba
from mcrisk.backends import gpu_unavailable_reason
print("python", platform.python_version(), "cupy", cupy.__version__, "numba", numba.__version__,
      "cuda runtime", cupy.cuda.runtime.runtimeGetVersion())
print("gpu_unavailable_reason():", gpu_unavailable_reason())
EOF
} 2>&1 | tee "$OUT/machine.txt"

echo "== pytest -m gpu"
set +e
"$PYTHON" -m pytest -q -m gpu -p no:cacheprovider tests/backends/test_cuda.py \
    tests/backends/test_closed_forms.py tests/backends/test_backends.py tests/backends/test_full_scenario.py \
    tests/backends/test_early_failures.py tests/plan/test_keep.py tests/plan/test_forecast.py \
    tests/plan/test_crews.py tests/backends/test_costs_parity.py \
    tests/backends/test_conditioned_parity.py tests/backends/test_bounded_parity.py \
    tests/backends/test_copula_parity.py tests/backends/test_reservations_on_events.py \
    tests/backends/test_integration_parity.py tests/plan/test_integration.py \
    tests/plan/test_positional_islands.py tests/backends/test_cuda_milestones.py \
    tests/results/test_milestones.py 2>&1 \
    | tee "$OUT/pytest-gpu.txt"
tests=${PIPESTATUS[0]}
set -e

echo "== benchmarks/bench_gpu.py"
"$PYTHON" benchmarks/bench_gpu.py --out "$OUT" "$@" 2>&1 | tee "$OUT/bench-gpu.txt"

# The band reductions (kernels/bands.cuh, issue 27): DeviceBands against Numba on the device's
# node times (pytest -m gpu), then benchmarks/bench_gpu_bands.py (parity and timing, 20,000
# scenarios of three plans; about a minute, most of it the Numba side's key sorts).
echo "== band reductions on the GPU"
set +e
"$PYTHON" -m pytest -q -m gpu -p no:cacheprovider tests/backends/test_cuda_bands.py 2>&1 \
    | tee "$OUT/pytest-gpu-bands.txt"
band_tests=${PIPESTATUS[0]}
"$PYTHON" benchmarks/bench_gpu_bands.py --out "$OUT" 2>&1 | tee "$OUT/bench-gpu-bands.txt"
band_bench=${PIPESTATUS[0]}
set -e
echo "gpu_check: band reductions: pytest exit code $band_tests, bench_gpu_bands exit code $band_bench"
if [ "$tests" -eq 0 ] && { [ "$band_tests" -ne 0 ] || [ "$band_bench" -ne 0 ]; }; then
    tests=1
fi

# The milestones' reductions (kernels/milestones.cu, issue 27): their GPU tests ran in the
# pytest above (tests/backends/test_cuda_milestones.py); bench_gpu_milestones.py times them
# against Numba on one 65,536-scenario chunk of the reference and checks them equal again.
echo "== benchmarks/bench_gpu_milestones.py"
set +e
"$PYTHON" benchmarks/bench_gpu_milestones.py --out "$OUT" 2>&1 | tee "$OUT/bench-gpu-milestones.txt"
milestone_bench=${PIPESTATUS[0]}
set -e
echo "gpu_check: milestones' reductions: bench_gpu_milestones exit code $milestone_bench"
if [ "$tests" -eq 0 ] && [ "$milestone_bench" -ne 0 ]; then
    tests=1
fi

echo "gpu_check: pytest -m gpu exit code $tests; results in $OUT"
exit "$tests"
