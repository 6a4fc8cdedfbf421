#!/usr/bin/env bash
# Every GPU check of this repository, in one call, for a machine with an NVIDIA GPU.
# Usage: [KB_SECTIONS="eval hostile audit"] [KB_AUDIT_LEVELS=1,2,3]
#        bash benchmarks/gpu_checks.sh OUTDIR [PYTEST ARGS...]
#   logs and JSON reports land in OUTDIR; extra arguments narrow the evaluation (e.g. -k ReLU).
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:-reports/gpu}"
shift || true
mkdir -p "$out"
export PYTHONUNBUFFERED=1
python3 -m pip install -q -e . --no-deps --no-build-isolation >"$out/install.log" 2>&1 \
    || { tail -20 "$out/install.log"; exit 1; }

echo "== environment"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 -c 'import torch, triton; print("torch", torch.__version__, "cuda", torch.version.cuda, "triton", triton.__version__)'

sections="${KB_SECTIONS:-eval hostile audit}"
if [[ " $sections " == *" eval "* ]]; then
echo "== reference and example candidates on CUDA ($*)"
start=$(date +%s)
python3 -m pytest -p no:cacheprovider -q -rfE --kb-device=cuda \
    --kb-candidates=candidates/reference --kb-candidates=candidates/examples \
    --kb-report="$out/gpu-report.json" --benchmark-max-time="${KB_TIME_BUDGET:-0.1}" \
    "$@" 2>&1 | tee "$out/gpu-run.log" | grep -v -E '^(level[0-9]|\s*$)'
echo "wall time: $(( $(date +%s) - start )) s"
python3 benchmarks/summarize_report.py "$out/gpu-report.json"
fi

if [[ " $sections " == *" hostile "* ]]; then
echo "== hostile and faulty candidates that need a GPU (level1/19_ReLU), then honest ones"
python3 -m pytest -p no:cacheprovider -q -rfEs --kb-device=cuda -k 19_ReLU --kb-trials=2 \
    --kb-candidates=candidates/hostile-gpu --kb-candidates=candidates/reference \
    --kb-candidates=candidates/examples --kb-timeout=300 --kb-report="$out/hostile-report.json" \
    --benchmark-max-time=0.05 >"$out/hostile-run.log" 2>&1
grep -E '^(FAILED|SKIPPED|[0-9]+ (passed|failed))' "$out/hostile-run.log" | cut -c1-220
python3 benchmarks/summarize_report.py "$out/hostile-report.json" --kernels
fi

levels="${KB_AUDIT_LEVELS:-1,2,3}"
if [[ " $sections " == *" audit "* ]]; then
    echo "== audit of the problem suite on CUDA (levels $levels)"
    python3 -m pytest_kernelbench.audit --device cuda --level "$levels" \
        >"$out/audit-${levels//,/-}.md" 2>"$out/audit-progress.log"
    tail -n 1 "$out/audit-${levels//,/-}.md"
    grep -E '\| FINDING' "$out/audit-${levels//,/-}.md" | head -60
fi
