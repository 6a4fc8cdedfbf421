#!/usr/bin/env bash
# The verdicts of every CPU candidate set, for a before/after comparison of a change that must
# not move a verdict.
#   bash benchmarks/cpu_verdicts.sh OUTDIR [REFERENCE_SET]       (run from a checkout)
#   python3 -m pytest_kernelbench.reporting.cli compare BEFORE/NAME.json AFTER/NAME.json
# Writes OUTDIR/reference.json (the reference set on the starter problems, the main job's
# settings), OUTDIR/examples.json (candidates/examples on the shipped problems) and
# OUTDIR/suite-sets.json (every set of tests/examples/candidates on tests/examples/problems:
# the hostile, cheating, broken and honest candidates the suite judges). REFERENCE_SET defaults
# to builtin:reference. Plugins are named explicitly (autoload off), so an older checkout put
# first on PYTHONPATH runs its own plugin. On a shared CPU, passed/slower/inconclusive of a
# correct candidate move with the timing; any other status change is a changed verdict.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:?an output folder}"
reference="${2:-builtin:reference}"
mkdir -p "$out"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTEST_DISABLE_PLUGIN_AUTOLOAD=1
plugin=pytest_kernelbench.plugin.hooks
[[ -f pytest_kernelbench/plugin.py ]] && plugin=pytest_kernelbench.plugin  # a checkout before the packages
common=(-p "$plugin" -p pytest_benchmark.plugin -p xdist.plugin -p no:cacheprovider -q
        --benchmark-max-time=0.1 --benchmark-min-rounds=3)
python3 -m pytest "${common[@]}" --kb-candidates="$reference" --kb-tags=starter --kb-trials=3 \
    --kb-report="$out/reference.json" >"$out/reference.log" 2>&1
echo "reference: $(tail -n 1 "$out/reference.log")"
python3 -m pytest "${common[@]}" --kb-candidates=candidates/examples \
    --kb-report="$out/examples.json" >"$out/examples.log" 2>&1
echo "examples: $(tail -n 1 "$out/examples.log")"
sets=()
for folder in tests/examples/candidates/*/; do sets+=("--kb-candidates=$folder"); done
# The broken set's hanging candidates would each hold the default 300 s; honest ones need far
# less than 30 s on two quiet cores (a loaded host can still time one out).
python3 -m pytest "${common[@]}" --kb-timeout=30 --kb-problems=tests/examples/problems "${sets[@]}" \
    --kb-report="$out/suite-sets.json" >"$out/suite-sets.log" 2>&1
echo "suite sets: $(tail -n 1 "$out/suite-sets.log")"
