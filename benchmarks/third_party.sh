#!/usr/bin/env bash
# Lay out the third-party sets the validity study runs on, in .third_party/ (ignored by git):
#   .third_party/cudal1/h100/level_<L>_problem_<P>_sample_0_kernel.py   CUDA-L1's H100 candidates
#   .third_party/v0/{src,KernelBench}                                     upstream KernelBench, branch v0
#   .third_party/upstream_v0_check.py                                     upstream's harness, one process a candidate
# Usage: bash benchmarks/third_party.sh CUDA_L1_GIT_DIR KERNELBENCH_GIT_DIR [UPSTREAM_CHECK_PY]
# Each GIT_DIR is a clone (or bare mirror) of github.com/sekstini/CUDA-L1 and of
# github.com/ScalingIntelligence/KernelBench; nothing of them is committed here.
set -euo pipefail
cd "$(dirname "$0")/.."
cudal1="${1:?a clone of sekstini/CUDA-L1}"
kernelbench="${2:?a clone of ScalingIntelligence/KernelBench}"
check="${3:-../shared/tools/upstream_v0_check.py}"
dest=.third_party
rm -rf "$dest/cudal1/h100" "$dest/v0"
mkdir -p "$dest/cudal1/h100" "$dest/v0"
git -C "$kernelbench" archive v0 src KernelBench | tar -x -C "$dest/v0"
tmp=$(mktemp -d)
git -C "$cudal1" archive HEAD unpacked/h100_xsm | tar -x -C "$tmp"
for f in "$tmp"/unpacked/h100_xsm/*/*/custom_code.py; do
    id=$(basename "$(dirname "$f")"); level=$(basename "$(dirname "$(dirname "$f")")")
    cp "$f" "$dest/cudal1/h100/level_${level}_problem_${id}_sample_0_kernel.py"
done
rm -rf "$tmp"
[[ -f "$check" ]] && cp "$check" "$dest/upstream_v0_check.py"
echo "$(ls "$dest/cudal1/h100" | wc -l) candidates, $(ls "$dest"/v0/KernelBench/level*/*.py | wc -l) v0 problems in $dest"
