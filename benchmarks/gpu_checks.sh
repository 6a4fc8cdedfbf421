#!/usr/bin/env bash
# Every GPU check of this repository, in one call, for a machine with an NVIDIA GPU.
# Usage: [KB_SECTIONS="interrupt names eval buildhelp hostile audit launch contexts beside starts idle sidebyside graph ncu builds repeat baselines xdist multigpu devices
#         confine real realrun upstream order compile precision attribution profile handwritten
#         api apiset neighbour cluster nodebuilds"] [KB_API_SET=DIR KB_API_PROBLEMS=DIR KB_API_SIDE=pytest|api|both (apiset: a set judged through pytest and evaluate_many)] [KB_REAL_SET=DIR] [KB_RESUME=JSONL] [KB_UPSTREAM_LIST=FILE]
#        [KB_AUDIT_LEVELS=1,2,3 (precision: "1 2 3")] [KB_ATTRIBUTION_K="level1/6_ level2/42_ ..."]
#        [KB_ATTRIBUTION_SETS="attribution stream-order ..." (our sets the attribution section reads)]
#        [KB_AUDIT_K="18_Squeeze 35_LSTM"] [KB_EVAL_LIMIT=SECONDS] [KB_TIME_BUDGET=SECONDS]
#        [KB_WORKERS=N] [KB_ONE_GPU_REPORT=JSON] [KB_NO_INSTALL=1] [KB_BALLAST_GIB=GIB]
#        [KB_WARM_LIMIT=SECONDS] [KB_BUILD_CACHE=DIR] [KB_REAL_ONLY=cold|warm] (realrun)
#        [KB_CACHE_IN=DIR] [KB_CACHE_OUT=DIR] [KB_ORDER_FROM=REPORT] (realrun, on a fresh machine)
#        [KB_STOP_AFTER=SECONDS] (interrupt) [KB_RESERVED_CORES=K] (beside)
#        bash benchmarks/gpu_checks.sh OUTDIR [PYTEST ARGS...]
#   logs and JSON reports land in OUTDIR; extra arguments narrow the evaluation (e.g. -k ReLU).
#   eval stops (SIGINT, reports kept) after KB_EVAL_LIMIT seconds; repeat runs eval's command
#   again and compares the speedups of both runs. The exit status is 1 when a check that can
#   fail (devices, multigpu) found a false verdict, a difference between GPUs or an overlap.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:-reports/gpu}"
shift || true
mkdir -p "$out"
export PYTHONUNBUFFERED=1
if [[ -z "${KB_NO_INSTALL:-}" ]]; then  # set it when another copy of this script installed already
    python3 -m pip install -q -e . --no-deps --no-build-isolation >"$out/install.log" 2>&1 \
        || { tail -20 "$out/install.log"; exit 1; }
fi

echo "== environment"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 -c 'import torch, triton; print("torch", torch.__version__, "cuda", torch.version.cuda, "triton", triton.__version__)'

# Upstream v0's own harness on the candidates of KB_UPSTREAM_LIST (L/ID per line), in
# KB_UPSTREAM_JOBS processes at once: its builds dominate, and its verdicts do not depend on
# timing (its speedups, run side by side, are approximate). $1: the merged report; sets
# upstream_wall (seconds).
run_upstream() {
    local merged="$1" jobs="${KB_UPSTREAM_JOBS:-6}" start j i
    mapfile -t items <"${KB_UPSTREAM_LIST:?a file of L/ID lines}"
    echo "== upstream v0's eval_kernel_against_ref on ${#items[@]} candidates, $jobs at a time"
    start=$(date +%s)
    for ((j = 0; j < jobs; j++)); do
        share=()
        for ((i = j; i < ${#items[@]}; i += jobs)); do share+=("${items[i]}"); done
        ((${#share[@]})) || continue
        KB_V0=.third_party/v0 KB_RUN="${KB_REAL_SET:-.third_party/cudal1/h100}" \
            BUDGET_S="${KB_UPSTREAM_LIMIT:-${KB_EVAL_LIMIT:-540}}" python3 .third_party/upstream_v0_check.py \
            "$out/upstream-$j.json" "${share[@]}" >"$out/upstream-$j.log" 2>&1 &
    done
    wait
    upstream_wall=$(( $(date +%s) - start ))
    echo "upstream wall time: $upstream_wall s for ${#items[@]} candidates"
    python3 benchmarks/agreement.py merge "$merged" "$out"/upstream-[0-9]*.json
}

sections="${KB_SECTIONS:-eval hostile audit}"
failed=0
# KB_BALLAST_GIB: a process outside the run holds that much of the GPU for the whole call, so a
# larger card judges as a smaller one would (the H200's 141 GB as an H100's 80 GB: 61).
if [[ -n "${KB_BALLAST_GIB:-}" ]]; then
    python3 -c "import sys, time, torch; x = torch.empty(int(float(sys.argv[1]) * 2**30), dtype=torch.uint8, device='cuda'); print('ballast: %.1f GiB held' % (x.numel() / 2**30), flush=True); time.sleep(86400)" "$KB_BALLAST_GIB" &
    ballast=$!
    trap 'kill $ballast 2>/dev/null' EXIT
    sleep 15
fi
run_eval() {  # $1: report name; the rest: pytest arguments
    local name="$1"; shift
    local start=$(date +%s)
    timeout -s INT "${KB_EVAL_LIMIT:-540}" python3 -m pytest -p no:cacheprovider -q -rfE \
        --kb-device=cuda --kb-candidates=builtin:reference --kb-candidates=candidates/examples \
        --kb-report="$out/$name.json" --benchmark-max-time="${KB_TIME_BUDGET:-1.0}" \
        "$@" 2>&1 | tee "$out/$name.log" | grep -v -E '^(level[0-9]|\s*$)' | grep -v '^test_speed' | tail -40
    echo "wall time: $(( $(date +%s) - start )) s"
    python3 benchmarks/summarize_report.py "$out/$name.json" --overhead
}

if [[ " $sections " == *" interrupt "* ]]; then
    # A real set (CUDA-L1's 249 by default) under -n KB_WORKERS, stopped by SIGINT after
    # KB_STOP_AFTER seconds, as a time limit or Ctrl-C stops it, then finished by the command
    # its report names; cold builds. The summary of each part is kept.
    real="${KB_REAL_SET:-.third_party/cudal1/h100}"
    workers="${KB_WORKERS:-8}"
    rm -f "$out"/interrupted.json* && start=$(date +%s)
    echo "== $real under -n $workers, SIGINT after ${KB_STOP_AFTER:-150} s"
    timeout -s INT "${KB_STOP_AFTER:-150}" python3 -m pytest -p no:cacheprovider -q -n "$workers" \
        --kb-device=cuda --kb-problems=.third_party/v0/KernelBench --kb-candidates="$real" \
        --kb-report="$out/interrupted.json" --benchmark-max-time="${KB_TIME_BUDGET:-0.5}" "$@" \
        >"$out/interrupted.log" 2>&1
    echo "stopped: $(( $(date +%s) - start )) s, INTERNALERROR lines: $(grep -c INTERNALERROR "$out/interrupted.log")"
    sed -n '/ kernelbench: fast_p /,$p' "$out/interrupted.log" | grep -v '^FAILED' | head -30
    cp "$out/interrupted.json" "$out/interrupted-part.json"
    resume=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["resume_command"] or "")' \
        "$out/interrupted.json")
    echo "== finished by the command the report names: $resume"
    start=$(date +%s)
    eval "$resume" >"$out/resumed.log" 2>&1
    echo "resumed: $(( $(date +%s) - start )) s"
    sed -n '/ kernelbench: fast_p /,$p' "$out/resumed.log" | grep -v '^FAILED' | head -30
    python3 benchmarks/summarize_report.py "$out/interrupted.json"
fi

if [[ " $sections " == *" names "* ]]; then
    # Candidates that use the problem file's names (candidates/problem-names) and CUDA-L1's two
    # stateful level-3 candidates (v0's VanillaRNN, judged in lockstep), by this harness and by
    # upstream v0's own: each table row sets the two verdicts side by side.
    echo "== problem names and stateful references, ours and upstream v0's"
    start=$(date +%s)
    python3 -m pytest -p no:cacheprovider -q -n 4 --kb-device=cuda \
        --kb-problems=.third_party/v0/KernelBench --kb-candidates=candidates/problem-names \
        --kb-report="$out/names.json" --benchmark-max-time=0.5 >"$out/names.log" 2>&1
    python3 -m pytest -p no:cacheprovider -q -n 2 --kb-device=cuda --kb-level=3 -k VanillaRNN \
        --kb-problems=.third_party/v0/KernelBench --kb-candidates=.third_party/cudal1/h100 \
        --kb-report="$out/stateful.json" --benchmark-max-time=0.5 >"$out/stateful.log" 2>&1
    echo "ours: $(( $(date +%s) - start )) s; $(tail -n 1 "$out/names.log"); $(tail -n 1 "$out/stateful.log")"
    python3 benchmarks/expected_verdicts.py "$out/names.json" || failed=1
    KB_V0=.third_party/v0 KB_RUN=candidates/problem-names BUDGET_S=200 python3 \
        .third_party/upstream_v0_check.py "$out/upstream-names.json" 1/19 2/30 2/53 3/29 \
        >"$out/upstream-names.log" 2>&1 &
    KB_V0=.third_party/v0 KB_RUN=.third_party/cudal1/h100 BUDGET_S=200 python3 \
        .third_party/upstream_v0_check.py "$out/upstream-stateful.json" 3/33 3/34 \
        >"$out/upstream-stateful.log" 2>&1 &
    wait
    python3 benchmarks/agreement.py table "$out/upstream-names.json" "$out/names.json"
    python3 benchmarks/agreement.py table "$out/upstream-stateful.json" "$out/stateful.json"
fi

if [[ " $sections " == *" launch "* ]]; then
    echo "== launch-bound timings, the flush waited for before each call and not"
    python3 benchmarks/launch_bound_timing.py 2>&1 | tail -12
fi

if [[ " $sections " == *" contexts "* ]]; then
    echo "== timings on a quiet GPU and beside processes making CUDA contexts (worker starts)"
    python3 benchmarks/context_beside_timing.py 2>&1 | tail -8
fi

if [[ " $sections " == *" beside "* ]]; then
    echo "== launch-bound timings alone, beside compilers on every core, and on reserved cores"
    python3 benchmarks/timing_beside_builds.py --reserved "${KB_RESERVED_CORES:-2}" 2>&1 | tail -24
fi

if [[ " $sections " == *" starts "* ]]; then
    echo "== a worker's CUDA context, made on a quiet GPU and beside each kind of other work"
    python3 benchmarks/context_start_cost.py 2>&1 | tail -8
fi

if [[ " $sections " == *" idle "* ]]; then
    # --kb-drain=stop: the idle probe must wait for work another process left queued
    echo "== devices.wait_for_idle after another process's queued work"
    python3 benchmarks/idle_probe_check.py 2>&1 | tail -12 || failed=1
fi

if [[ " $sections " == *" sidebyside "* ]]; then
    # Upstream's harness first, then ours, on the same candidates in one call: the wall time per
    # candidate of each (KB_UPSTREAM_LIST names them, KB_REAL_SET holds them).
    run_upstream "$out/upstream.json"
    start=$(date +%s)
    python3 benchmarks/real_run.py "$out/sidebyside" --problems .third_party/v0/KernelBench \
        --candidates "${KB_REAL_SET:?the folder KB_UPSTREAM_LIST picks from}" \
        --build-cache build/kb-sidebyside \
        --limit "${KB_EVAL_LIMIT:-540}" --only cold -n "${KB_WORKERS:-8}" \
        --benchmark-max-time="${KB_TIME_BUDGET:-0.5}" "$@"
    ours_wall=$(( $(date +%s) - start ))
    python3 benchmarks/agreement.py sidebyside "$out/upstream.json" "$out/sidebyside/cold.json" \
        --upstream-wall "$upstream_wall" --ours-wall "$ours_wall"
fi

if [[ " $sections " == *" eval "* ]]; then
    echo "== reference and example candidates on CUDA ($*)"
    run_eval gpu-report "$@"
fi

if [[ " $sections " == *" compile "* ]]; then
    # The torch.compile set beside the reference set (issue: candidate sets that show the
    # harness on real kernels): speedup over eager of each problem's compiled model.
    echo "== torch.compile candidates ($*)"
    start=$(date +%s)
    timeout -s INT "${KB_EVAL_LIMIT:-540}" python3 -m pytest -p no:cacheprovider -q \
        -n "${KB_WORKERS:-1}" --kb-device=cuda --kb-candidates=builtin:torch_compile \
        --kb-report="$out/compile-report.json" --benchmark-max-time="${KB_TIME_BUDGET:-0.5}" \
        "$@" >"$out/compile-run.log" 2>&1
    echo "wall time: $(( $(date +%s) - start )) s"
    tail -n 1 "$out/compile-run.log"
    python3 benchmarks/summarize_report.py "$out/compile-report.json"
fi

if [[ " $sections " == *" handwritten "* ]]; then
    # The hand-written set beside the torch.compile set on the problems it has candidates for:
    # docs/candidates.md's table (benchmarks/candidate_table.py).
    pick=$(ls candidates/handwritten/level*/*.py | xargs -n1 basename | sed 's/\.py$//' | paste -sd'|' | sed 's/|/ or /g')
    echo "== hand-written and torch.compile candidates, -n ${KB_WORKERS:-4}"
    start=$(date +%s)
    timeout -s INT "${KB_EVAL_LIMIT:-540}" python3 -m pytest -p no:cacheprovider -q \
        -n "${KB_WORKERS:-4}" --kb-device=cuda --kb-candidates=candidates/handwritten \
        --kb-candidates=builtin:torch_compile -k "$pick" --kb-report="$out/handwritten.json" \
        --benchmark-max-time="${KB_TIME_BUDGET:-0.5}" "$@" >"$out/handwritten.log" 2>&1
    echo "wall time: $(( $(date +%s) - start )) s"
    tail -n 1 "$out/handwritten.log"
    python3 benchmarks/candidate_table.py "$out/handwritten.json"
fi

if [[ " $sections " == *" repeat "* ]]; then
    echo "== the same run again, for repeatability ($*)"
    run_eval gpu-report-2 "$@"
    python3 benchmarks/compare_runs.py "$out/gpu-report.json" "$out/gpu-report-2.json"
fi

if [[ " $sections " == *" graph "* ]]; then
    echo "== CUDA-graph timing on launch-bound level-1 problems"
    python3 -m pytest -p no:cacheprovider -q -rfE --kb-device=cuda --kb-timing=graph --kb-level=1 \
        --kb-candidates=builtin:reference --kb-candidates=candidates/examples \
        -k "19_ReLU or 25_Swish or 30_Softsign or 23_Softmax or 9_Tall" \
        --kb-report="$out/graph-report.json" >"$out/graph-run.log" 2>&1
    tail -n 1 "$out/graph-run.log"
    python3 benchmarks/summarize_report.py "$out/graph-report.json"
fi

if [[ " $sections " == *" baselines "* ]]; then
    echo "== compiled baseline, baseline cache (twice) and auto timing on a level-1 subset"
    subset="19_ReLU or 23_Softmax or 1_Square or 40_LayerNorm or 25_Swish"
    for variant in "compile --kb-baseline=compile" "cache1 --kb-baseline-cache=$out/baseline-cache" \
                   "cache2 --kb-baseline-cache=$out/baseline-cache" "auto --kb-timing=auto"; do
        name="${variant%% *}"; option="${variant#* }"
        python3 -m pytest -p no:cacheprovider -q --kb-device=cuda --kb-level=1 -k "$subset" \
            --kb-candidates=builtin:reference --kb-candidates=candidates/examples "$option" \
            --kb-report="$out/baseline-$name.json" >"$out/baseline-$name.log" 2>&1
        echo "-- $name: $(tail -n 1 "$out/baseline-$name.log")"
        python3 -c "import json, sys; [print(' ', r['problem'], r['candidate_set'], r['status'], r.get('timing'), r.get('baseline_source'), r['speedup'] and round(r['speedup'], 3), r.get('flags')) for r in json.load(open(sys.argv[1]))['results'] if r['status'] != 'missing']" "$out/baseline-$name.json"
    done
fi

if [[ " $sections " == *" xdist "* ]]; then
    echo "== level 1 with -n ${KB_WORKERS:-2} xdist workers on the GPUs there are"
    run_eval xdist-report -n "${KB_WORKERS:-2}" "$@"
    [[ -f "$out/gpu-report.json" ]] && python3 benchmarks/compare_runs.py "$out/gpu-report.json" "$out/xdist-report.json"
fi

if [[ " $sections " == *" multigpu "* ]]; then
    workers="${KB_WORKERS:-2}"
    echo "== level 1 with -n $workers xdist workers over $(nvidia-smi -L | wc -l) GPUs, nvidia-smi sampled"
    nvidia-smi --query-gpu=timestamp,index,uuid,utilization.gpu,memory.used --format=csv,noheader \
        -lms 1000 >"$out/smi-n$workers.csv" 2>/dev/null &
    smi=$!
    run_eval "multigpu-n$workers" -n "$workers" "$@"
    kill "$smi"
    python3 benchmarks/multi_gpu_check.py "$out/multigpu-n$workers.json" --smi "$out/smi-n$workers.csv" \
        ${KB_ONE_GPU_REPORT:+--one "$KB_ONE_GPU_REPORT"} || failed=1
fi

if [[ " $sections " == *" devices "* ]]; then
    # Honest, hostile and example candidates on the last GPU (a non-default index where there
    # are several), on cuda:0, and under xdist over every GPU: each verdict must be the one the
    # candidate file declares, and the same everywhere.
    gpus=$(nvidia-smi -L | wc -l)
    last=$((gpus - 1))
    pick="19_ReLU or 25_Swish or 30_Softsign"
    reports=()
    for variant in "last --kb-device=cuda:$last" "first --kb-device=cuda:0" "xdist -n $((2 * gpus))"; do
        name="${variant%% *}"; option="${variant#* }"
        [[ "$name" == first && "$last" == 0 ]] && continue  # one GPU: "last" ran on cuda:0
        echo "== devices: level 1 ($pick), $option"
        python3 -m pytest -p no:cacheprovider -q --kb-level=1 -k "$pick" --kb-trials=2 $option \
            --kb-candidates=candidates/hostile-gpu --kb-candidates=builtin:reference \
            --kb-candidates=candidates/examples --benchmark-max-time=0.2 \
            --kb-report="$out/devices-$name.json" >"$out/devices-$name.log" 2>&1
        tail -n 1 "$out/devices-$name.log"
        reports+=("$out/devices-$name.json")
    done
    python3 benchmarks/expected_verdicts.py "${reports[@]}" || failed=1
    python3 benchmarks/multi_gpu_check.py "$out/devices-xdist.json" || failed=1
fi

if [[ " $sections " == *" confine "* ]]; then
    # Escape attempts on CUDA, refused and reported; then honest, hostile and example
    # candidates, and real CUDA candidates that build extensions (CUDA-L1's, where present in
    # .third_party), confined and unconfined: the same verdicts, and what confinement costs.
    echo "== confine: escape candidates on CUDA"
    python3 benchmarks/confine_check.py escapes "$out/confine" --device cuda || failed=1
    pick="19_ReLU or 25_Swish or 30_Softsign"
    for mode in auto off; do
        python3 -m pytest -p no:cacheprovider -q --kb-device=cuda --kb-level=1 -k "$pick" \
            --kb-trials=2 --kb-confine=$mode --kb-candidates=candidates/hostile-gpu \
            --kb-candidates=builtin:reference --kb-candidates=candidates/examples \
            --benchmark-max-time=0.2 --kb-report="$out/confine-sets-$mode.json" \
            >"$out/confine-sets-$mode.log" 2>&1
        echo "-- sets, --kb-confine=$mode: $(tail -n 1 "$out/confine-sets-$mode.log")"
    done
    python3 benchmarks/expected_verdicts.py "$out/confine-sets-auto.json" "$out/confine-sets-off.json" || failed=1
    python3 benchmarks/confine_check.py compare "$out/confine-sets-auto.json" "$out/confine-sets-off.json" || failed=1
    real="${KB_REAL_SET:-.third_party/sub/h100}"
    if [[ -d "$real" ]]; then
        realk="${KB_REAL_K:-1_Square or 12_Matmul or 19_ReLU or 23_Softmax or 25_Swish or 28_HardSigmoid}"
        for mode in auto off; do
            start=$(date +%s)
            python3 -m pytest -p no:cacheprovider -q --kb-device=cuda --kb-level=1 -k "$realk" \
                --kb-problems=.third_party/v0/KernelBench --kb-candidates="$real" \
                --kb-confine=$mode --kb-build-cache="$out/confine-builds-$mode" \
                --kb-report="$out/confine-real-$mode.json" >"$out/confine-real-$mode.log" 2>&1
            echo "-- $real, --kb-confine=$mode, cold builds: $(tail -n 1 "$out/confine-real-$mode.log") ($(( $(date +%s) - start )) s)"
        done
        python3 -c "import json, sys; [print(' ', r['problem'], r['status'], r.get('extension'), r['speedup'] and round(r['speedup'], 3), (r.get('error') or '')[:120]) for r in json.load(open(sys.argv[1]))['results'] if r['status'] != 'missing']" "$out/confine-real-auto.json"
        python3 benchmarks/confine_check.py compare "$out/confine-real-auto.json" "$out/confine-real-off.json" || failed=1
    fi
fi

if [[ " $sections " == *" order "* ]]; then
    # Stream-order trials (--kb-order-trials): the stream-order set (unordered streams and
    # honest ways to order them), the hostile and honest sets, each verdict as declared; then a
    # real set twice (CUDA-L1's level 1, where present), whose verdicts must not move.
    echo "== order: stream-order, hostile and honest candidates (level1/19_ReLU), --kb-order-trials"
    python3 -m pytest -p no:cacheprovider -q -rfE --kb-device=cuda -k 19_ReLU --kb-trials=2 \
        --kb-order-trials=on --kb-candidates=candidates/stream-order \
        --kb-candidates=candidates/hostile-gpu --kb-candidates=builtin:reference \
        --kb-candidates=candidates/examples --benchmark-max-time=0.05 \
        --kb-report="$out/order-sets.json" >"$out/order-sets.log" 2>&1
    tail -n 1 "$out/order-sets.log"
    python3 benchmarks/expected_verdicts.py "$out/order-sets.json" || failed=1
    real="${KB_REAL_SET:-.third_party/cudal1/h100}"
    if [[ -d "$real" ]]; then
        # Extra arguments pick the real candidates (default: level 1); the second run finds
        # the first's builds in the default build cache.
        for run in $(seq 1 "${KB_ORDER_RUNS:-2}"); do
            start=$(date +%s)
            timeout -s INT "${KB_EVAL_LIMIT:-240}" python3 -m pytest -p no:cacheprovider -q \
                -n "${KB_WORKERS:-4}" --kb-device=cuda --kb-order-trials=on --kb-level=1 \
                --kb-problems=.third_party/v0/KernelBench --kb-candidates="$real" \
                --kb-report="$out/order-real-$run.json" "$@" >"$out/order-real-$run.log" 2>&1
            echo "-- $real, run $run: $(tail -n 1 "$out/order-real-$run.log") ($(( $(date +%s) - start )) s)"
            python3 -c "import json, sys; [print(' ', f\"L{r['level']}/{r['problem_id']}\", r['status'], r.get('extension'), r['speedup'] and round(r['speedup'], 3), (r.get('error') or '')[:150]) for r in json.load(open(sys.argv[1]))['results'] if r['status'] != 'missing']" "$out/order-real-$run.json"
        done
        [[ "${KB_ORDER_RUNS:-2}" -ge 2 ]] && { python3 benchmarks/agreement.py stability \
            "$out/order-real-1.json" "$out/order-real-2.json" || failed=1; }
    fi
fi

if [[ " $sections " == *" precision "* ]]; then
    # The reference and example sets cast to fp16 and bf16 (eager PyTorch at the problem's own
    # precision must pass, and so must the examples), then the suite's audit cast to each.
    pick="${KB_PRECISION_K:-1_Square or 4_Matrix_vector or 19_ReLU or 23_Softmax or 25_Swish or 30_Softsign or 36_RMSNorm or 40_LayerNorm or 42_Max_Pooling_2D or 47_Sum or 54_conv or 88_MinGPTNewGelu or 95_CrossEntropy or 97_ScaledDotProduct}"
    for precision in fp16 bf16; do
        timeout -s INT "${KB_EVAL_LIMIT:-200}" python3 -m pytest -p no:cacheprovider -q \
            --kb-device=cuda --kb-precision=$precision --kb-level=1 -k "$pick" \
            --kb-candidates=builtin:reference --kb-candidates=candidates/examples \
            --benchmark-max-time=0.2 --kb-report="$out/precision-$precision.json" "$@" \
            >"$out/precision-$precision.log" 2>&1
        echo "-- $precision: $(tail -n 1 "$out/precision-$precision.log")"
        python3 benchmarks/summarize_report.py "$out/precision-$precision.json"
    done
    # One audit process per precision and level, side by side (its checks time nothing that
    # a verdict depends on); the attribution section, if asked, runs meanwhile.
    audits=()
    for precision in ${KB_AUDIT_PRECISIONS:-bf16}; do
        for level in ${KB_AUDIT_LEVELS:-1}; do
            timeout -s INT "${KB_AUDIT_LIMIT:-150}" python3 -m pytest_kernelbench.suite.audit \
                --device cuda --precision "$precision" --level "$level" \
                >"$out/audit-$precision-$level.md" 2>"$out/audit-$precision-$level.log" &
            audits+=("$precision-$level")
        done
    done
fi

if [[ " $sections " == *" attribution "* ]]; then
    # Kernel names read from a CUDA graph and a CUPTI trace beside a profiler session, on our
    # sets and on a real generated set (KB_ATTRIBUTION_K: substrings of its candidates' cases).
    echo "== kernel attribution: CUDA graph and CUPTI trace against the profiler"
    python3 tools/make_candidate_sets.py "$out/generated-sets" >/dev/null  # reference, torch_compile
    for set in ${KB_ATTRIBUTION_SETS:-attribution examples hostile-gpu stream-order torch_compile reference}; do
        folder="candidates/$set"; [[ -d $folder ]] || folder="$out/generated-sets/$set"
        python3 benchmarks/attribution_check.py "$out/attribution-$set.jsonl" \
            --candidates "$folder" --level 1,2,3 --jobs 8 \
            $( [[ $set == torch_compile || $set == reference ]] && printf -- '-k %s ' 19_ReLU 23_Softmax 40_LayerNorm 1_Square 12_Gemm 3_DeepNarrowMLP ) \
            >"$out/attribution-$set.log" 2>&1
        echo "-- $set:"; tail -n 3 "$out/attribution-$set.log"
        grep -E '^(differs|not own|not captured|error|unexpected|cupti error)' "$out/attribution-$set.log" | cut -c1-200 | head -12
    done
    if [[ -n "${KB_ATTRIBUTION_K:-}" ]]; then
        python3 benchmarks/attribution_check.py "$out/attribution-real.jsonl" --jobs 16 \
            --problems .third_party/v0/KernelBench --candidates "${KB_REAL_SET:-.third_party/cudal1/h100}" \
            $(printf -- '-k %s ' $KB_ATTRIBUTION_K) >"$out/attribution-real.log" 2>&1
        echo "-- real:"; tail -n 3 "$out/attribution-real.log"
        grep -E '^(differs|not own|not captured|error|unexpected|cupti error)' "$out/attribution-real.log" | cut -c1-240 | head -40
    fi
fi

if [[ -n "${audits:-}" ]]; then
    wait
    for name in "${audits[@]}"; do
        echo "-- audit at $name: $(tail -n 1 "$out/audit-$name.md")"
        grep -E '\| FINDING' "$out/audit-$name.md" | head -40
    done
fi

if [[ " $sections " == *" ncu "* ]]; then
    echo "== timing engine against Nsight Compute (every ${KB_NCU_EVERY:-3}rd level-1 problem)"
    python3 benchmarks/ncu_fidelity.py time "$out/ncu-engine.json" --every "${KB_NCU_EVERY:-3}" \
        >"$out/ncu-engine.log" 2>&1 || tail -5 "$out/ncu-engine.log"
    ncu --clock-control none --cache-control all --profile-from-start off \
        --metrics gpu__time_duration.sum --csv --page raw --print-units base \
        --log-file "$out/ncu.csv" python3 benchmarks/ncu_fidelity.py profile "$out/ncu-engine.json" \
        >"$out/ncu-profile.log" 2>&1 || tail -5 "$out/ncu-profile.log"
    python3 benchmarks/ncu_fidelity.py compare "$out/ncu-engine.json" "$out/ncu.csv" \
        | tee "$out/ncu-compare.txt" | tail -4
fi

if [[ " $sections " == *" builds "* ]]; then
    echo "== cold and warm builds of ${KB_BUILD_COUNT:-16} CUDA candidates"
    python3 benchmarks/build_bench.py "$out/builds" --count "${KB_BUILD_COUNT:-16}" --singles "${KB_BUILD_SINGLES:-2}"
    echo "== graph timing of a candidate that launches on the legacy default stream (capture fails)"
    python3 -m pytest -p no:cacheprovider -q --kb-device=cuda --kb-level=1 -k 19_ReLU \
        --kb-candidates="$out/builds/cuda_set" --kb-build-cache="$out/builds/build-cache" \
        --kb-timing=graph --kb-p=0 --kb-report="$out/graph-fallback.json" >"$out/graph-fallback.log" 2>&1
    tail -n 1 "$out/graph-fallback.log"
    python3 -c "import json, sys; [print(r['sample'], r['status'], r.get('timing'), r.get('flags')) for r in json.load(open(sys.argv[1]))['results']]" "$out/graph-fallback.json"
fi

if [[ " $sections " == *" buildhelp "* ]]; then
    # Per build, one at a time: plain load_inline against the harness's build process (with
    # its precompiled torch header), and the same functions, kernels and outputs from both.
    echo "== build help: ${KB_BUILD_COUNT:-2} generated cuda_epilogue candidates${KB_BUILD_HELP_ARGS:+, $KB_BUILD_HELP_ARGS}"
    python3 benchmarks/build_help.py "$out/buildhelp" --count "${KB_BUILD_COUNT:-2}" \
        ${KB_BUILD_HELP_ARGS:-} 2>&1 | tee "$out/buildhelp.log"
fi

if [[ " $sections " == *" hostile "* ]]; then
echo "== hostile and faulty candidates that need a GPU (level1/19_ReLU), then honest ones"
python3 -m pytest -p no:cacheprovider -q -rfEs --kb-device=cuda -k 19_ReLU --kb-trials=2 \
    --kb-candidates=candidates/hostile-gpu --kb-candidates=builtin:reference \
    --kb-candidates=candidates/examples --kb-timeout=300 --kb-report="$out/hostile-report.json" \
    --benchmark-max-time=0.05 >"$out/hostile-run.log" 2>&1
grep -E '^(FAILED|SKIPPED|[0-9]+ (passed|failed))' "$out/hostile-run.log" | cut -c1-220
python3 benchmarks/summarize_report.py "$out/hostile-report.json" --kernels
fi

if [[ " $sections " == *" real "* ]]; then
    # A real generated set (CUDA-L1's H100 candidates by default) on upstream v0's problems,
    # every level, builds cold; KB_RESUME=REPORT.jsonl goes on from an interrupted run. The
    # candidates only upstream's rules pass are timed too: their upstream speedups are read
    # beside upstream's own harness (agreement.py).
    real="${KB_REAL_SET:-.third_party/cudal1/h100}"
    echo "== $real on upstream v0's problems, -n ${KB_WORKERS:-1}"
    start=$(date +%s)
    timeout -s INT "${KB_EVAL_LIMIT:-540}" python3 -m pytest -p no:cacheprovider -q \
        -n "${KB_WORKERS:-1}" --kb-device=cuda --kb-problems=.third_party/v0/KernelBench \
        --kb-upstream-timing=on \
        --kb-candidates="$real" --kb-report="$out/real.json" ${KB_RESUME:+--kb-resume="$KB_RESUME"} \
        --benchmark-max-time="${KB_TIME_BUDGET:-0.5}" "$@" >"$out/real.log" 2>&1
    echo "wall time: $(( $(date +%s) - start )) s"
    grep -E '^kernelbench: [0-9]+ extension|[0-9]+ (passed|failed)' "$out/real.log" | tail -3
    python3 benchmarks/summarize_report.py "$out/real.json" --overhead
fi

if [[ " $sections " == *" realrun "* ]]; then
    # The same set through benchmarks/real_run.py: cold (own build cache), then warm when
    # KB_WARM_LIMIT is set; wall time, builds, seconds per stage, the GPU's idle fraction.
    real="${KB_REAL_SET:-.third_party/cudal1/h100}"
    # A warm run on a machine that did not run the cold one: the cold run's build cache as the
    # pieces KB_CACHE_OUT wrote (carried in an ignored folder), its report for the order.
    if [[ -n "${KB_CACHE_IN:-}" && -n "${KB_BUILD_CACHE:-}" && ! -d "$KB_BUILD_CACHE" ]]; then
        compgen -G "$KB_CACHE_IN/kbcache.tgz.*" >/dev/null \
            || { echo "KB_CACHE_IN=$KB_CACHE_IN holds no kbcache.tgz.* pieces"; exit 1; }
        mkdir -p "$KB_BUILD_CACHE"
        cat "$KB_CACHE_IN"/kbcache.tgz.* | tar xzf - -C "$KB_BUILD_CACHE" \
            || { echo "KB_CACHE_IN=$KB_CACHE_IN: its pieces do not unpack"; exit 1; }
    fi
    if [[ -n "${KB_ORDER_FROM:-}" && ! -f "$out/realrun/cold.json" ]]; then
        [[ -f "$KB_ORDER_FROM" ]] || { echo "KB_ORDER_FROM=$KB_ORDER_FROM: no such report"; exit 1; }
        mkdir -p "$out/realrun" && cp "$KB_ORDER_FROM" "$out/realrun/cold.json"
    fi
    # KB_REAL_PROBLEMS: the problems (default upstream v0's; `problems` for a built-in set
    # such as KB_REAL_SET=builtin:cuda_epilogue, made from them)
    echo "== real_run: $real, -n ${KB_WORKERS:-4}"
    python3 benchmarks/real_run.py "$out/realrun" --problems "${KB_REAL_PROBLEMS:-.third_party/v0/KernelBench}" \
        --candidates "$real" --limit "${KB_EVAL_LIMIT:-540}" --warm-limit "${KB_WARM_LIMIT:-0}" \
        ${KB_BUILD_CACHE:+--build-cache "$KB_BUILD_CACHE"} ${KB_REAL_ONLY:+--only "$KB_REAL_ONLY"} \
        -n "${KB_WORKERS:-4}" --benchmark-max-time="${KB_TIME_BUDGET:-0.5}" "$@"
    for log in "$out"/realrun/*.log; do
        grep -E '^kernelbench: [0-9]+ extension|[0-9]+ (passed|failed)' "$log" | tail -3
    done
    for name in cold warm; do  # single holders, idle gaps and timings of the runs just made
        if [[ "${KB_REAL_ONLY:-$name}" == "$name" && -f "$out/realrun/$name.json" ]]; then
            echo "== hold_gaps: $name"
            python3 benchmarks/hold_gaps.py "$out/realrun/$name.json" --top 4
        fi
    done
    if [[ -n "${KB_BUILD_CACHE:-}" && -d "$KB_BUILD_CACHE" ]]; then
        # whether the cache could travel to a later machine (64 MiB a call, files 16 MiB each)
        echo "build cache: $(du -sh "$KB_BUILD_CACHE" | cut -f1) on disk," \
            "$(( $(tar czf - -C "$KB_BUILD_CACHE" . 2>/dev/null | wc -c) / 1048576 )) MiB compressed"
        if [[ -n "${KB_CACHE_OUT:-}" ]]; then  # pieces small enough to come back from a call
            mkdir -p "$KB_CACHE_OUT"
            tar czf - -C "$KB_BUILD_CACHE" . | split -b 15m - "$KB_CACHE_OUT/kbcache.tgz."
        fi
    fi
    for name in cold warm; do  # what ran out of memory, and with how much of the device free
        if [[ -f "$out/realrun/$name.json" ]]; then
            echo "== memory: $name"
            python3 benchmarks/memory_verdicts.py "$out/realrun/$name.json" || failed=1
        fi
    done
    if [[ -f "$out/realrun/cold.json" && -f "$out/realrun/warm.json" ]]; then  # repeatability
        python3 benchmarks/compare_runs.py "$out/realrun/cold.json" "$out/realrun/warm.json" \
            --set "$(basename "${real#builtin:}")"
    fi
fi

if [[ " $sections " == *" profile "* ]]; then
    # --kb-profile: Nsight Compute's figures per kernel in the feedback, confined and not.
    python3 benchmarks/ncu_confine_check.py problems/level1/30_Softsign.py \
        candidates/examples/level1/30_Softsign.py 2>&1 | tail -6
    pick="${KB_PROFILE_K:-19_ReLU or 25_Swish or 30_Softsign}"
    for mode in auto off; do
        start=$(date +%s)
        python3 -m pytest -p no:cacheprovider -q --kb-device=cuda --kb-level=1 -k "$pick" \
            --kb-candidates=candidates/examples --kb-candidates=builtin:reference \
            --kb-confine=$mode --kb-profile --kb-feedback="$out/feedback-$mode" \
            --benchmark-max-time=0.2 --kb-report="$out/profile-$mode.json" \
            >"$out/profile-$mode.log" 2>&1
        echo "-- --kb-profile, --kb-confine=$mode: $(tail -n 1 "$out/profile-$mode.log") ($(( $(date +%s) - start )) s)"
        python3 -c "import json, sys; [print(' ', r['problem'], r['candidate_set'], r['status'], 'ncu', (r.get('harness_s') or {}).get('ncu'), 's;', len(r.get('ncu_kernels') or []), 'kernels;', r.get('ncu_error')) for r in json.load(open(sys.argv[1]))['results'] if r['status'] != 'missing']" "$out/profile-$mode.json"
    done
    for f in "$out"/feedback-auto/*/*.txt; do echo "--- $f"; cat "$f"; done
fi

if [[ " $sections " == *" upstream "* ]]; then
    run_upstream "$out/upstream.json"
fi

# The batch API: declared verdicts through evaluate_many and a warm trivial attempt; then, with
# KB_API_SET, that set through `pytest -n KB_WORKERS` and evaluate_many, one after the other.
if [[ " $sections " == *" api "* ]]; then
    echo "== batch API"
    python3 benchmarks/api_gpu_check.py --judges 2 --out "$out/api-declared.json" || failed=1
fi
if [[ " $sections " == *" apiset "* ]]; then
    # KB_API_SET through pytest -n KB_WORKERS and through evaluate_many, both builds cold; with
    # KB_API_SIDE=pytest or api one side only (a command's time limit), compared afterwards by
    # `api_vs_pytest.py --compare`; the pytest side's report is read for memory verdicts. Extra
    # arguments go to the pytest side: with PYTHONPATH=benchmarks, `-p no_admission` runs it
    # without admission by footprint (what admission costs: the same side with and without).
    side="${KB_API_SIDE:-both}"
    name="api-vs-pytest"
    [[ "$side" == both ]] || name="$name-$side"
    echo "== ${KB_API_SET:?a set to judge}: pytest -n ${KB_WORKERS:-8} and evaluate_many ($side)"
    python3 benchmarks/api_vs_pytest.py --problems "${KB_API_PROBLEMS:-problems}" \
        --candidates "$KB_API_SET" --out "$out/$name.json" --side "$side" \
        --limit "${KB_EVAL_LIMIT:-540}" -n "${KB_WORKERS:-8}" "$@" || failed=1
    if [[ -f "$out/$name.report.json" ]]; then
        python3 benchmarks/memory_verdicts.py "$out/$name.report.json" || failed=1
        python3 benchmarks/hold_gaps.py "$out/$name.report.json" --top 4
        [[ "$side" == api ]] || python3 benchmarks/summarize_report.py "$out/$name.report.json" --overhead
    fi
fi

if [[ " $sections " == *" cluster "* ]]; then
    # Ray from pieces carried one a call (benchmarks/ray_for_device.sh: each call keeps its piece;
    # KB_RAY_INSTALL=1 installs once all are kept), then KB_API_SET through evaluate_many on a
    # one-node Ray cluster of this machine, saved for `api_vs_pytest.py --compare` against the
    # local engine's side (apiset with KB_API_SIDE=api).
    bash benchmarks/ray_for_device.sh gather || failed=1
    [[ -z "${KB_RAY_INSTALL:-}" ]] || bash benchmarks/ray_for_device.sh install || failed=1
    if [[ -n "${KB_API_SET:-}" ]] && python3 -c "import ray" 2>/dev/null; then
        echo "== ${KB_API_SET}: evaluate_many on a one-node Ray cluster"
        python3 benchmarks/api_vs_pytest.py --problems "${KB_API_PROBLEMS:-problems}" \
            --candidates "$KB_API_SET" --out "$out/api-vs-pytest-cluster.json" --side api \
            --cluster ray --limit "${KB_EVAL_LIMIT:-540}" || failed=1
        python3 benchmarks/memory_verdicts.py "$out/api-vs-pytest-cluster.report.json" || failed=1
        python3 benchmarks/hold_gaps.py "$out/api-vs-pytest-cluster.report.json" --top 4
    fi
fi

if [[ " $sections " == *" nodebuilds "* ]]; then
    # KB_NODE_BUILDS (16) of KB_API_SET's builds in a session's own pool, then in a one-node Ray
    # cluster's build actor, each into an empty cache: whether a node builds slower, apart from
    # any judging (needs Ray: the cluster section installs it).
    echo "== ${KB_NODE_BUILDS:-16} builds of ${KB_API_SET:-?}: the session's pool, then a node's build actor"
    python3 benchmarks/node_builds.py --device cuda --problems "${KB_API_PROBLEMS:-problems}" \
        --candidates "${KB_API_SET:?nodebuilds builds KB_API_SET}" --count "${KB_NODE_BUILDS:-16}" \
        >"$out/node-builds.log" 2>&1 || failed=1
    grep -v -e WARNING -e INFO "$out/node-builds.log" | tail -60
fi

if [[ " $sections " == *" neighbour "* ]]; then
    # A case that fits the card alone, judged beside another process's paused worker that holds
    # KB_HOLD_GIB: no out_of_memory while that worker still held it.
    echo "== a case that fits alone, beside a neighbour's paused worker holding ${KB_HOLD_GIB:-40} GiB"
    python3 benchmarks/neighbour_worker_memory.py \
        "${KB_NEIGHBOUR_PROBLEM:-.third_party/v0/KernelBench/level2/34_ConvTranspose3d_LayerNorm_GELU_Scaling.py}" \
        "${KB_NEIGHBOUR_CANDIDATE:-.third_party/cudal1/h100/level_2_problem_34_sample_0_kernel.py}" \
        --hold-gib "${KB_HOLD_GIB:-40}" || failed=1
fi

levels="${KB_AUDIT_LEVELS:-1,2,3}"
if [[ " $sections " == *" audit "* ]]; then
    echo "== audit of the problem suite on CUDA (levels $levels)"
    if [[ -n "${KB_AUDIT_K:-}" ]]; then
        for k in $KB_AUDIT_K; do
            python3 -m pytest_kernelbench.suite.audit --device cuda --level "$levels" -k "$k" --all \
                2>>"$out/audit-progress.log" | tee -a "$out/audit-selected.md"
        done
    else
        python3 -m pytest_kernelbench.suite.audit --device cuda --level "$levels" \
            >"$out/audit-${levels//,/-}.md" 2>"$out/audit-progress.log"
        tail -n 1 "$out/audit-${levels//,/-}.md"
        grep -E '\| FINDING' "$out/audit-${levels//,/-}.md" | head -60
    fi
fi
exit "$failed"
