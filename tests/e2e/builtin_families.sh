#!/usr/bin/env bash
# The builtin kernel families as shipped (builtin/*.cu, embedded in cutegen): each one's space
# parses for the tasks it serves, and its candidates compile with the real nvcc and CUTLASS
# headers for representative tasks of kb1 and hopper (the start point, and the corners of the
# space a walk reaches first). What they compute is checked on the GPU (tests/gpu/run.sh).
set -u
: "${CUTEGEN:?}" "${REPO:?}"
T=$(mktemp -d)
[ -n "${KEEP_TMP:-}" ] || trap 'rm -rf "$T"' EXIT
export XDG_CACHE_HOME="$T/cache"
unset CUTEGEN_BUILTIN_DIR
fails=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; fails=$((fails + 1)); }
if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
    echo "ok - skipped: no nvcc"; exit 0
fi

# every task of both suites has a family whose space parses
n=0; missing=
for t in $("$CUTEGEN" tasks --json | python3 -c "import json,sys; print(' '.join(t['name'] for t in json.load(sys.stdin)))"); do
    if "$CUTEGEN" builtin "$t" --json >"$T/space.json" 2>"$T/err"; then n=$((n + 1)); else missing="$missing $t($(head -c 200 "$T/err"))"; fi
done
if [ -z "$missing" ]; then ok "every kb1 and hopper task has a builtin family ($n tasks)"; else bad "tasks without a family:$missing"; fi

# 16-bit, fp8 and tf32 GEMMs whose operand rows are not a multiple of 16 bytes (K; N of a
# row-major B; M of a col-major A) go to gemm_sm90, whose pad path copies those operands to
# padded rows first (issue 20); strict fp32 stays on gemm_simt, and so does a 16-bit GEMM
# without sm_90a (the widening SIMT fallback)
family_of() { "$CUTEGEN" builtin "$1" --json ${2:+--arch "$2"} | python3 -c "import json,sys; print(json.load(sys.stdin)['family'])"; }
for t in bf16_odd_k fp16_odd_n fp8_odd_k bf16_decode_odd bf16_batched_odd bf16_odd_k_bias_gelu tf32_odd_k; do
    fam=$(family_of "$REPO/tests/gpu/tasks/$t.json")
    if [ "$fam" = gemm_sm90 ]; then ok "gpu/$t (rows not 16-byte aligned) goes to gemm_sm90"; else bad "gpu/$t goes to '$fam', not gemm_sm90"; fi
done
fam=$(family_of "$REPO/tests/gpu/tasks/gemm_odd.json")
if [ "$fam" = gemm_simt ]; then ok "gpu/gemm_odd (strict fp32, odd K) goes to gemm_simt"; else bad "gpu/gemm_odd goes to '$fam', not gemm_simt"; fi
fam=$(family_of "$REPO/tests/gpu/tasks/bf16_odd_k.json" sm_80)
if [ "$fam" = gemm_simt ]; then ok "gpu/bf16_odd_k on sm_80 goes to gemm_simt"; else bad "gpu/bf16_odd_k on sm_80 goes to '$fam', not gemm_simt"; fi
if "$CUTEGEN" builtin "$REPO/tests/gpu/tasks/bf16_odd_k.json" --plan 2>&1 | grep -q "builtin gemm_sm90, start:"; then
    ok "'cutegen builtin gpu/bf16_odd_k --plan' starts on gemm_sm90"; else bad "'cutegen builtin gpu/bf16_odd_k --plan' does not start on gemm_sm90"; fi

# the tf32 contract runs on tensor cores (gemm_sm90 as cute::tfloat32_t), operands K-major or
# not (an MN-major one is transposed first)
for t in tf32_nt tf32_nn tf32_tn_odd_batched; do
    if "$CUTEGEN" builtin "$REPO/tests/gpu/tasks/$t.json" --source | grep -q "^#define CG_T_IN cute::tfloat32_t"; then
        ok "gpu/$t renders gemm_sm90 with tf32 inputs"; else bad "gpu/$t does not render gemm_sm90 with tf32 inputs"; fi
done

[ -z "${CUTEGEN_SKIP_FAMILY_BUILDS:-}" ] || { echo "ok - family builds skipped: CUTEGEN_SKIP_FAMILY_BUILDS is set"; exit $((fails > 0)); }

# candidates that must compile: TASK [SETTING]
cases=(
    "kb1/19_relu"
    "kb1/88_mingpt_gelu"
    "kb1/5_scalar_mul"
    "kb1/12_diag_matmul"
    "kb1/4_matvec"
    "kb1/23_softmax"
    "kb1/24_log_softmax"
    "kb1/1_square_matmul"
    "kb1/18_matmul_transposed_both"
    "kb1/14_upper_triangular_matmul"
    "hopper/gemm_bf16_4096"
    "hopper/gemm_fp8_8192"
    "hopper/gemm_bf16_4096_bias_relu"
    "kb1/19_relu CG_P_WAVES=2 CG_P_UNROLL=8"
    "kb1/23_softmax CG_P_MODE=0 CG_P_THREADS=1024"
    "llm/attn_softmax_fp16_prefill_2048"
    "llm/attn_softmax_fp16_4096"
    "llm/lm_head_log_softmax_bf16_vocab CG_P_MODE=3 CG_P_THREADS=1024"
    "kb1/4_matvec CG_P_SPLIT=4 CG_P_ROWS=2"
    "kb1/6_matmul_large_k CG_P_SPLIT_K=8 CG_P_TILE=64x64"
    "hopper/gemm_bf16_4096 CG_P_PERSISTENT=1 CG_P_CLUSTER_M=2 CG_P_MN_ORDER=1"
    "llm/llama8b_qkv_m1"
    "llm/llama8b_qkv_m1 CG_P_SPLIT_K=4"
    "llm/llama8b_qkv_m1 CG_P_SPLIT_K=3 CG_P_CTAS=2"
    "hopper/gemm_bf16_4096_bias_relu CG_P_BM=64 CG_P_BN=128 CG_P_CTAS=2"
    "$REPO/tests/gpu/tasks/tf32_nt.json CG_P_SPLIT_K=2 CG_P_BM=64"
    "hopper/gemm_bf16_4096 CG_P_BM=64 CG_P_BN=128 CG_P_CLUSTER_M=2 CG_P_MN_ORDER=0"
    "$REPO/tests/gpu/tasks/tf32_nt.json"
    # gemm_sm90's pad path (issue 20): odd K in bf16 (A and B padded), fp16 B row with odd N
    # (B only), fp8 with K not a multiple of 16, tf32 with K not one of 4, batched A col and
    # B row; with split-K (the padded copies and the partials share the workspace)
    "$REPO/tests/gpu/tasks/bf16_odd_k.json"
    "$REPO/tests/gpu/tasks/fp16_odd_n.json"
    "$REPO/tests/gpu/tasks/fp8_odd_k.json"
    "$REPO/tests/gpu/tasks/tf32_odd_k.json"
    "$REPO/tests/gpu/tasks/bf16_odd_k.json CG_P_SPLIT_K=2"
    "$REPO/tests/gpu/tasks/bf16_batched_odd.json CG_P_SPLIT_K=4 CG_P_BM=128 CG_P_CLUSTER_M=1 CG_P_PERSISTENT=0"
    # split-K whose last unit of a tile adds the partials (CG_P_REDUCE=1: a count a tile too)
    "$REPO/tests/gpu/tasks/bf16_odd_k_bias_gelu.json CG_P_SPLIT_K=2 CG_P_REDUCE=1"
    "$REPO/tests/gpu/tasks/bf16_batched_odd.json CG_P_SPLIT_K=4 CG_P_REDUCE=1 CG_P_CLUSTER_M=2 CG_P_PERSISTENT=0"
    # ping-pong (CG_P_PINGPONG=1): two MMA warpgroups on tiles of their own; 128 x 128 with
    # the bias + GELU epilogue and the pad path, 64 x 256 with the last-unit reduction, fp8
    # at 64 x 128, tf32 (B transposed first) in CTA pairs
    "$REPO/tests/gpu/tasks/bf16_odd_k_bias_gelu.json CG_P_BN=128 CG_P_PINGPONG=1"
    "llm/llama8b_qkv_m1 CG_P_BN=256 CG_P_SPLIT_K=4 CG_P_REDUCE=1 CG_P_PINGPONG=1"
    "$REPO/tests/gpu/tasks/fp8_pingpong.json CG_P_BM=64 CG_P_PINGPONG=1"
    "$REPO/tests/gpu/tasks/tf32_nn.json CG_P_BM=128 CG_P_BN=128 CG_P_PINGPONG=1"
    # tf32 with B row-major (`A @ B`): B transposed into the workspace first, K-major; odd K
    # and batched, A col too
    "$REPO/tests/gpu/tasks/tf32_nn.json"
    "$REPO/tests/gpu/tasks/tf32_tn_odd_batched.json CG_P_SPLIT_K=2"
    # gemm_simt's widening path for 16-bit inputs, still the fallback (ARCH=sm_80: no TMA)
    "$REPO/tests/gpu/tasks/bf16_odd_k.json ARCH=sm_80"
    # matvec and diag_matmul in 16 bits (vectors of 8; bf16 in, fp32 out with split partials)
    "$REPO/tests/gpu/tasks/matvec_fp16.json CG_P_SPLIT=4 CG_P_ROWS=2"
    "$REPO/tests/gpu/tasks/matvec_bf16_odd.json CG_P_SPLIT=8"
    "$REPO/tests/gpu/tasks/diag_fp16.json"
    "$REPO/tests/gpu/tasks/diag_bf16_odd.json"
    # elementwise from one dtype to another (bf16 -> fp32: 8-byte loads, 16-byte stores)
    "$REPO/tests/gpu/tasks/gelu_bf16_to_fp32.json CG_P_UNROLL=4 CG_P_WAVES=2"
    # softmax from 16 bits to fp32: the row in registers, and staged over a cluster
    "$REPO/tests/gpu/tasks/softmax_fp16_to_fp32.json"
    "$REPO/tests/gpu/tasks/log_softmax_bf16_to_fp32_long.json CG_P_MODE=1 CG_P_CLUSTER=16"
)
build_one() {
    local i=$1 t=$2 set=${3:-} arch=
    case "$set" in ARCH=*) arch=${set#ARCH=}; set= ;; esac
    local f="$T/k$i.cu"
    if ! "$CUTEGEN" builtin "$t" --source ${arch:+--arch "$arch"} ${set:+--set "$set"} >"$f" 2>"$T/r$i.err"; then
        echo "not ok - $t ${set:-start}: cannot render: $(cat "$T/r$i.err")" >"$T/r$i"; return
    fi
    local s=$(date +%s)
    if "$CUTEGEN" build "$f" --cache-dir "$T/bc" >"$T/b$i.out" 2>&1; then
        echo "ok - $t ${set:-start}${arch:+ ($arch)} compiles ($(( $(date +%s) - s )) s)" >"$T/r$i"
        echo "$t${set:+ $set}" >"$T/case$i"
        echo "$t" >"$T/task$i"
    else
        { echo "not ok - $t ${set:-start}${arch:+ ($arch)} compiles"; head -30 "$T/b$i.out" | sed 's/^/# /'; } >"$T/r$i"
    fi
}
i=0
for c in "${cases[@]}"; do
    read -r t set <<<"$c"
    build_one $i "$t" "$set" &
    i=$((i + 1))
    [ $((i % 2)) -eq 0 ] && wait
done
wait
for j in $(seq 0 $((i - 1))); do
    cat "$T/r$j"
    grep -q '^not ok' "$T/r$j" && fails=$((fails + 1))
done

# What gemm_sm90's compiled candidates ask of the runner: cutegen_workspace_bytes is host code,
# so it runs here (no GPU; the CUDA driver's stub library stands in for libcuda.so.1 where
# there is none). Padded copies of the misaligned operands only, each rounded to 128 bytes,
# then split-K's partials; an aligned task needs nothing
stub=
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
    nvcc_bin=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
    for d in "$(dirname "$nvcc_bin")/../lib64/stubs" "$(dirname "$nvcc_bin")/../targets/x86_64-linux/lib/stubs"; do
        if [ -e "$d/libcuda.so" ]; then mkdir -p "$T/stub"; ln -sf "$(cd "$d" && pwd)/libcuda.so" "$T/stub/libcuda.so.1"; stub="$T/stub"; break; fi
    done
fi
for j in $(seq 0 $((i - 1))); do
    [ -f "$T/case$j" ] || continue
    so=$(grep -o '/[^ ]*kernel\.so' "$T/b$j.out" | head -1)
    head -1 "$T/k$j.cu" | grep -q 'family=gemm_sm90' || continue
    case "$(cat "$T/task$j")" in *.json) ;; *) continue ;; esac  # task files: shapes at hand
    [ -n "$so" ] || { bad "$(cat "$T/case$j"): no kernel.so in 'cutegen build' output"; continue; }
    if out=$(LD_LIBRARY_PATH="$stub${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" python3 "$REPO/tests/e2e/sm90_workspace_check.py" "$so" "$T/k$j.cu" "$(cat "$T/task$j")" 2>&1); then
        ok "$(cat "$T/case$j"): gemm_sm90 workspace $out"
    else
        bad "$(cat "$T/case$j"): gemm_sm90 workspace: $out"
    fi
done
[ $fails -eq 0 ]
