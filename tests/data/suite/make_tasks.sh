# Sourced by the suite tests: writes tiny relu tasks (one per NAME) and their kernels into $1,
# and recorded evaluations into $1/evals with the speedup given after each name.
# Usage: make_tasks DIR NAME:SPEEDUP...
make_tasks() {
    local dir=$1; shift
    mkdir -p "$dir/evals"
    local n=1000
    for ns in "$@"; do
        local name=${ns%%:*} sp=${ns##*:}
        n=$((n + 1))
        printf '{"name": "st/%s", "description": "ReLU [suite-test %s]", "op": "elementwise", "dtype": "fp32", "precision": "strict", "shape": [4, %d], "activation": "relu"}\n' \
            "$name" "$name" "$n" >"$dir/$name.json"
        { printf '// kernel for %s\n' "$name"; cat "$REPO/tests/data/loop/k_bad.cu" |
            sed 's/\t\ty\[i\] = clamp_positive(x\[i\]);/\t\ty[i] = x[i] > 0.0f ? x[i] : 0.0f;/'; } >"$dir/$name.cu"
        printf '{"verdict":"pass","message":"","metrics":{"ms":0.01,"speedup_vs_baseline":%s,"roofline_fraction":0.5},"runner_s":0.1}\n' \
            "$sp" >"$dir/evals/$(sha256sum "$dir/$name.cu" | cut -d' ' -f1).json"
        echo "$dir/$name.json" >>"$dir/list.txt"
    done
}
