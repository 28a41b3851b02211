# Sourced by the e2e tests of modules that do not lower (module_eval.sh, module_loop.sh): sets up,
# under $T, a FAKE reference process (tests/data/modeval/fake_reference.py as $CUTEGEN_PYTHON,
# speaking the reference protocol with made-up CUDA IPC handles for y = x * w + b) and a FAKE
# runner (checks the RUN.json it is given while the reference still holds its tensors, then
# speaks the judge's report channel: nonce on stdin, report on --report-fd), a fake
# cutegen-baseline, a fake ncu, and the module file $M ($T/scale_shift.py). Needs T, CUTEGEN and REPO set.
# Modes, read on each call: $T/mode (the fake reference's, see fake_reference.py) and
# $T/runner.mode (pass, segv, hang, noheld, replay). A kernel library holding the bytes FAKE_WRONG is judged
# incorrect (a model's wrong candidate in the loop). $T/runner.calls gets one line per judged
# library (its path); one holding FAKE_SEGV crashes it as runner.mode segv does. The report's module.reference_intact (the runner's hash of the
# reference's tensors) is true, or what $T/runner.intact says: false, or absent (no field); a
# library holding FAKE_SCRIBBLE reports it false (a candidate that wrote the reference's tensors).
REAL_RUNNER="$(dirname "$CUTEGEN")/cutegen-runner"
[ -x "$REAL_RUNNER" ] || REAL_RUNNER="$REPO/build/cutegen-runner"
mkdir -p "$T/bin"
printf '#!/usr/bin/env bash\nexec python3 %s\n' "$REPO/tests/data/modeval/fake_reference.py" >"$T/bin/fakepy"
# RUN.json as the runner sees it, checked while the reference process is alive
cat >"$T/check_run.py" <<'PY'
import json, os, re, sys
run = json.load(open(sys.argv[1]))
pid = int(open(os.path.join(sys.argv[2], "ref.pid")).read())
os.kill(pid, 0)  # the reference holds the tensors while the runner runs
assert [t["name"] for t in run["tensors"]] == ["x", "w", "b", "out"], run["tensors"]
assert [t["role"] for t in run["tensors"]] == ["input", "parameter", "parameter", "output"]
assert run["scalars"] == [{"name": "eps", "value": 1e-05}], run["scalars"]
assert run["precision"] == "strict" and run["truth"] == "fp64"
assert run["tolerance"] == {"multiple": 8, "ulps": 4}, run["tolerance"]
assert run["file"].endswith("/scale_shift.py") and run["bytes"] == 320 and run["flops"] == 64
assert "gbps" in run["limits"] and "tflops" in run["limits"]
assert len(run["cases"]) >= 2
for c in run["cases"]:
    assert len(c["inputs"]) == 3 and len(c["ref"]) == 1 and len(c["truth"]) == 1
    for h in c["inputs"] + c["ref"] + c["truth"]:
        assert re.fullmatch("[0-9a-f]{128}", h["ipc"]), h
print("ok", len(run["cases"]))
PY
cat >"$T/bin/cutegen-runner" <<SH
#!/usr/bin/env bash
if [ "\$1" = --devices ]; then
    [ -e "$T/nogpu" ] && { echo '{"error":"the driver sees no GPU","devices":[]}'; exit 3; }
    echo '{"devices":[{"index":0,"name":"Fake GPU"}]}'; exit 0
fi
fd= run= lib=
while [ \$# -gt 0 ]; do case "\$1" in --report-fd) fd=\$2 ;; --module) run=\$2 ;; --kernel|--lib) lib=\$2 ;; esac; shift; done
read -r nonce
echo "phase module"
# the real runner reads the same file: past its parser, it stops at the GPU (none here; on a
# GPU machine, at the made-up IPC handles)
[ -x "$REAL_RUNNER" ] && "$REAL_RUNNER" --module "\$run" --kernel /dev/null >"$T/realrunner.out" 2>&1
if ! python3 "$T/check_run.py" "\$run" "$T" >"$T/runcheck" 2>&1; then
    echo "phase report"
    printf '{"verdict":"runner_error","message":"RUN.json check failed","nonce":"%s"}\n' "\$nonce" >/dev/fd/\$fd
    exit 0
fi
echo "\$lib" >>"$T/runner.calls"
intact=\$(cat "$T/runner.intact" 2>/dev/null || echo true)
[ -n "\$lib" ] && grep -aq FAKE_SCRIBBLE "\$lib" 2>/dev/null && intact=false
case "\$intact" in
true|false) ri=",\"reference_intact\":\$intact,\"reference_hashes\":[{\"bytes\":1408,\"before\":\"00000000000000aa\",\"after\":\"\$([ \$intact = true ] && echo 00000000000000aa || echo 00000000000000bb)\"}]" ;;
*) ri= ;;
esac
if [ -n "\$lib" ] && grep -aq FAKE_WRONG "\$lib" 2>/dev/null; then
    echo "phase report"
    printf '{"verdict":"incorrect","message":"12 of 32 elements of output out wrong (case 0, seed 1, dist module): got 0 want 1.5 budget 4e-7","nonce":"%s","module":{"truth":"fp64","cases":6%s},"metrics":{}}\n' "\$nonce" "\$ri" >/dev/fd/\$fd
    exit 0
fi
mode=\$(cat "$T/runner.mode" 2>/dev/null)
[ -n "\$lib" ] && grep -aq FAKE_SEGV "\$lib" 2>/dev/null && mode=segv
case "\$mode" in
segv) echo "phase check case 0"; kill -SEGV \$\$ ;;
hang) echo "phase timing"; exec sleep 600 ;;
esac
# the cases held back from the checks and first given in timed calls (runner.c, first_sight):
# as the runner reports them; noheld: held back but no timed call on one (a patched runner);
# replay: the kernel slower on them than on the cases it knew
fs=',"first_sight":{"calls":3,"min_ms":0.05,"median_ms":0.05,"replay":false}'
[ "\$mode" = noheld ] && fs=
[ "\$mode" = replay ] && fs=',"first_sight":{"calls":3,"min_ms":0.05,"median_ms":0.01,"replay":true,"note":"replays"}'
echo "phase report"
printf '{"verdict":"pass","message":"","nonce":"%s","precision":"strict","module":{"truth":"fp64","cases":6,"held_back_cases":[3,4,5],"tolerance":{"multiple":8,"ulps":4}%s},"checks":[{"ok":true,"output":"out","E":1e-8,"max_err_over_budget":0.25,"worst":{"index":[1,2],"got":1.5,"want":1.5000001,"budget":4e-7}}],"metrics":{"ms":0.05},"confined":true,"timing":{"trials":4,"timed_calls":{"enabled":true,"inputs_regenerated":true,"full_checks":4,"sampled_checks":0}%s},"runner_s":0.1}\n' "\$nonce" "\$ri" "\$fs" >/dev/fd/\$fd
SH
cat >"$T/bin/cutegen-baseline" <<SH
#!/usr/bin/env bash
echo "\$*" >>"$T/baseline.args"
case "\$1" in
--identify) echo '{"device":{"name":"Fake GPU","uuid":"GPU-0","l2_bytes":52428800}}' ;;
--precision) echo '{"device":{"name":"Fake GPU","l2_bytes":52428800},"copy_gbps":3000,"dram_gbps_theoretical":4800,"peak_limit_tflops":60}' ;;
*) echo '{"error":"the fake baseline knows modules only"}'; exit 4 ;;
esac
SH
# a fake ncu ($T/bin/ncu, for CUTEGEN_NCU): checks the run file and that the reference holds its
# tensors meanwhile, writes its argv to $T/ncu.argv, prints a recorded CSV
cat >"$T/bin/ncu" <<SH
#!/usr/bin/env bash
prev= run=
for a in "\$@"; do [ "\$prev" = --module ] && run=\$a; prev=\$a; done
printf '%s\n' "\$@" >"$T/ncu.argv"
python3 "$T/check_run.py" "\$run" "$T" >"$T/runcheck" 2>&1
export FAKE_NCU_CSV="$REPO/tests/data/ncu/raw-synthetic-two-kernels.csv"
exec "$REPO/tests/data/fake-ncu" "\$@"
SH
chmod +x "$T/bin/fakepy" "$T/bin/cutegen-runner" "$T/bin/cutegen-baseline" "$T/bin/ncu"
export CUTEGEN_PYTHON="$T/bin/fakepy" CUTEGEN_RUNNER="$T/bin/cutegen-runner" CUTEGEN_BASELINE="$T/bin/cutegen-baseline"
M="$T/scale_shift.py"
printf 'import torch\nclass Model(torch.nn.Module):\n    pass\n' >"$M"
