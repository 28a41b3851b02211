#!/usr/bin/env python3
"""A stand-in for tools/reference.py in tests/e2e/module_eval.sh: speaks the reference protocol
(a hello line, then one reply per request line) for a module y = x * w + b that is not lowered,
with made-up CUDA IPC handles. What it does on "prepare" comes from $FAKE_REF_DIR/mode:
  pass             the cases, handles well formed, eager/compile baselines when asked
  kind:K           {"ok": false, "kind": K, "message": ...}
  hang             never answers prepare
  die              exits 3 before answering prepare
  badtensors       prepares other tensors than it described
  ignore_release   answers release but never exits (must be killed), and starts a child in its
                   process group first (a torch.compile worker: it dies only by a kill of the
                   group), its pid in $FAKE_REF_DIR/worker.pid
What it does on "describe" comes from $FAKE_REF_DIR/describe.mode (tests/e2e/module_procs.sh):
  pass             the description
  escape           starts a helper in a session of its own (setsid: out of the process group)
                   that holds stdout and stderr for 30 s, its pid in $FAKE_REF_DIR/escaped.pid;
                   then describes and exits
  escape_hang      the same helper, then never answers
  helper           starts a helper in its process group that holds stdout and stderr (sleep
                   600), then describes and exits
  linger           describes, then never exits (ignores quit)
  flood            writes 100 KB to stderr, then describes
  flood_fail       writes 100 KB to stderr, then a last line "FAKE LAST LINE" and exits 1
  segv, abort      dies from SIGSEGV / SIGABRT before describing
  exit0            exits 0 before describing (os._exit(0))
It writes its pid to $FAKE_REF_DIR/ref.pid, the prepare request to prepare.json, one line
"PID" per prepare to prepares.log (a test counts the prepares of a run) and "released" to
released when it reads {"op": "release"}."""
import json, os, sys, time

D = os.environ["FAKE_REF_DIR"]
mode = open(os.path.join(D, "mode")).read().strip() if os.path.exists(os.path.join(D, "mode")) else "pass"
with open(os.path.join(D, "ref.pid"), "w") as f:
    f.write(str(os.getpid()))

def send(o):
    sys.stdout.write(json.dumps(o) + "\n")
    sys.stdout.flush()

N = 8
TENSORS = [{"name": "x", "role": "input", "dtype": "fp32", "shape": [4, N]},
           {"name": "w", "role": "parameter", "dtype": "fp32", "shape": [N]},
           {"name": "b", "role": "parameter", "dtype": "fp32", "shape": [N]},
           {"name": "out", "role": "output", "dtype": "fp32", "shape": [4, N]}]
DESCRIBE = {"file": "", "name": "scale_shift", "device": "cuda", "torch": "2.9.0+fake", "dtype": "fp32",
            "precision": "strict", "workload": "memory-bound", "workload_why": "elementwise",
            "lowered_why": "x * w + b is no built-in op",
            "inputs": [{"name": "x", "dtype": "fp32", "shape": [4, N]}],
            "params": [{"name": "w", "dtype": "fp32", "shape": [N], "role": "parameter"},
                       {"name": "b", "dtype": "fp32", "shape": [N], "role": "parameter"}],
            "outputs": [{"name": "out", "dtype": "fp32", "shape": [4, N]}],
            "flops": 64, "bytes": 4 * (32 + 8 + 8 + 32), "scalars": [{"name": "eps", "value": 1e-5, "from": "init"}],
            "lowered": None}

def handle(k, t, dtype=None):
    dt = dtype or t["dtype"]
    n = 1
    for s in t["shape"]:
        n *= s
    size = {"fp32": 4, "fp64": 8}[dt]
    return {"ipc": ("%02x" % (k & 0xff)) * 64, "offset": 256 * k, "bytes": n * size, "dtype": dt,
            "shape": t["shape"]}

send({"hello": "cutegen-reference", "protocol": 1, "python": "3.11.0", "executable": sys.executable,
      "torch": "2.9.0+fake"})
for line in sys.stdin:
    req = json.loads(line)
    op = req.get("op")
    if op == "quit":
        break
    if op == "describe":
        dmode = open(os.path.join(D, "describe.mode")).read().strip() \
            if os.path.exists(os.path.join(D, "describe.mode")) else "pass"
        if dmode in ("escape", "escape_hang", "helper"):
            import subprocess
            h = subprocess.Popen(["sleep", "30" if dmode != "helper" else "600"],
                                 start_new_session=dmode != "helper", stdin=subprocess.DEVNULL)
            if dmode != "helper":
                open(os.path.join(D, "escaped.pid"), "w").write(str(h.pid))
            if dmode == "escape_hang":
                while True:
                    time.sleep(60)
        if dmode.startswith("flood"):
            sys.stderr.write(("x" * 99 + "\n") * 1000)
            if dmode == "flood_fail":
                sys.stderr.write("Traceback: FAKE LAST LINE\n")
                sys.stderr.flush()
                sys.exit(1)
        if dmode in ("segv", "abort"):
            import resource, signal
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # no core file left behind
            os.kill(os.getpid(), signal.SIGSEGV if dmode == "segv" else signal.SIGABRT)
        if dmode == "exit0":
            os._exit(0)
        d = dict(DESCRIBE)
        d["file"] = os.path.abspath(req["file"])
        send({"ok": True, "describe": d})
        if dmode == "linger":
            while True:
                time.sleep(60)
        continue
    if op == "release":
        open(os.path.join(D, "released"), "w").write("released\n")
        send({"ok": True})
        if mode == "ignore_release":
            import subprocess
            w = subprocess.Popen(["sleep", "600"])
            open(os.path.join(D, "worker.pid"), "w").write(str(w.pid))
            while True:
                time.sleep(60)
        break
    if op != "prepare":
        send({"ok": False, "kind": "request", "message": "unknown op"})
        continue
    with open(os.path.join(D, "prepare.json"), "w") as f:
        json.dump(req, f)
    with open(os.path.join(D, "prepares.log"), "a") as f:
        f.write("%d\n" % os.getpid())
    if mode == "hang":
        while True:
            time.sleep(60)
    if mode == "die":
        sys.stderr.write("Traceback: RuntimeError: CUDA error: out of cheese\n")
        sys.exit(3)
    if mode.startswith("kind:"):
        kind = mode[5:]
        send({"ok": False, "kind": kind, "message": "fake failure of kind %s: do the thing" % kind})
        continue
    tensors = [dict(t) for t in TENSORS]
    if mode == "badtensors":
        tensors[1]["shape"] = [N + 1]
    cases = []
    for i, c in enumerate(req["cases"]):
        cases.append({"seed": c["seed"], "dist": c["dist"],
                      "inputs": [handle(10 * i + j, t) for j, t in enumerate(TENSORS[:3])],
                      "ref": [handle(10 * i + 5, TENSORS[3])],
                      "truth": [handle(10 * i + 6, TENSORS[3], "fp64")]})
    p = {"tensors": tensors, "truth": "fp64", "truth_why": "", "cases": cases, "notes": []}
    if req.get("baselines"):
        p["baselines"] = {"eager_ms": 0.2, "compile_ms": 0.1, "compile_mode": "default", "trials": 50}
    send({"ok": True, "prepare": p})
