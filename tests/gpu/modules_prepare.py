#!/usr/bin/env python3
"""The reference process's prepare op on a GPU with real torch (never in CI).

usage: python3 tests/gpu/modules_prepare.py [--device N] [--keep DIR] [FILE...]

For each module file (default: a norm, a convolution, a loss with class indices, a level-2
chain with batch norm, a bf16 chain) it starts tools/reference.py as cutegen would (the second
under PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, which prepare must turn off), sends one
prepare request (3 cases: module, normal, large; baselines for the first file), then runs a
SECOND process (this script with --consume) that opens every handle with cudaIpcOpenMemHandle
(ctypes on the libcudart torch loaded), copies the bytes into tensors of its own and checks
them against what it computes itself: the module-draw inputs and the parameters equal to the
byte, normal / large inputs of the right spread, indices kept, the reference equal to its own
forward (TF32 off), the truth fp64 and equal to its own float64 forward. Then release: the
reference answers and exits 0. Prints "ok - ..." / "not ok - ..." and "N passed, N failed".
"""
import ctypes
import glob
import json
import os
import re
import subprocess
import sys
import threading
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DEFAULT = ["tasks/modules/level1/40_LayerNorm.py",
           "tasks/modules/level1/63_conv_standard_2D__square_input__square_kernel.py",
           "tasks/modules/level1/95_CrossEntropyLoss.py",
           "tasks/modules/level2/2_Conv2d_BatchNorm_ReLU.py",
           "tasks/modules/level2/5_SwiGLU_MLP_bf16.py"]
CASES = [{"seed": 1, "dist": "module"}, {"seed": 2, "dist": "normal"}, {"seed": 3, "dist": "large"}]


# ---- the second process: opens the handles, checks the bytes ----

def cudart():
    """The libcudart that torch loaded (one runtime, one primary context), else the system's."""
    for line in open("/proc/self/maps"):
        p = line.split()[-1]
        if "libcudart.so" in p and os.path.exists(p):
            return ctypes.CDLL(p)
    for p in (glob.glob("/usr/local/cuda/lib64/libcudart.so*")
              + glob.glob("/usr/local/cuda/targets/*/lib/libcudart.so*")):
        return ctypes.CDLL(p)
    raise SystemExit("no libcudart found")


class IpcHandle(ctypes.Structure):
    """cudaIpcMemHandle_t (64 opaque bytes), passed BY VALUE, as eight 64-bit fields: with a
    char array field every open from python gave 'invalid argument' on the H200 (raw cudaMalloc
    handles too) while the C runner opened the same handles; the suspected cause is how ctypes
    passes a struct holding an array by value."""
    _fields_ = [("w%d" % i, ctypes.c_uint64) for i in range(8)]


def consume(reply_path, path, device):
    import importlib.util
    import torch
    torch.cuda.set_device(device)
    torch.cuda.init()
    torch.zeros(1, device="cuda")  # the primary context exists before cudart is called
    rt = cudart()
    rt.cudaIpcOpenMemHandle.argtypes = [ctypes.POINTER(ctypes.c_void_p), IpcHandle, ctypes.c_uint]
    rt.cudaMemcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    rt.cudaGetErrorString.restype = ctypes.c_char_p
    P = json.load(open(reply_path))["prepare"]
    DT = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16,
          "fp64": torch.float64, "i64": torch.int64, "i32": torch.int32, "bool": torch.bool,
          "u8": torch.uint8, "i8": torch.int8}
    opened = {}
    res = []

    def ok(cond, what):
        res.append((bool(cond), what))

    def fetch(h):
        if h["ipc"] not in opened:
            ptr = ctypes.c_void_p()
            hd = IpcHandle()
            ctypes.memmove(ctypes.addressof(hd), bytes.fromhex(h["ipc"]), 64)
            e = rt.cudaIpcOpenMemHandle(ctypes.byref(ptr), hd, 1)  # LazyEnablePeerAccess
            if e:
                raise RuntimeError("cudaIpcOpenMemHandle: %s" % rt.cudaGetErrorString(e).decode())
            opened[h["ipc"]] = ptr.value
        t = torch.empty(h["shape"], dtype=DT[h["dtype"]], device="cuda")
        assert t.numel() * t.element_size() == h["bytes"], ("bytes", h)
        if h["bytes"]:
            e = rt.cudaMemcpy(t.data_ptr(), opened[h["ipc"]] + h["offset"], h["bytes"], 3)
            if e:
                raise RuntimeError("cudaMemcpy: %s" % rt.cudaGetErrorString(e).decode())
        torch.cuda.synchronize()
        return t

    spec = importlib.util.spec_from_file_location("m", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    meta = getattr(mod, "CUTEGEN", {}) or {}
    own = meta.get("inputs", {}) or {}
    torch.manual_seed(42)
    model = mod.Model(*mod.get_init_inputs()).cuda().eval()
    tens = P["tensors"]
    ins = [t for t in tens if t["role"] == "input"]
    pars = [t for t in tens if t["role"] in ("parameter", "buffer")]
    state = model.state_dict()
    ok([t["name"] for t in pars] == list(state), "parameters in state_dict order: %s"
       % [t["name"] for t in pars])
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    model64 = None
    if P["truth"] == "fp64":
        import copy
        model64 = copy.deepcopy(model).double()
    for c in P["cases"]:
        got_in = [fetch(h) for h in c["inputs"]]
        x = got_in[:len(ins)]
        if c["inputs"][len(ins):]:
            ok(all(torch.equal(g, state[t["name"]].to(g.dtype)) for g, t in zip(got_in[len(ins):], pars)),
               "seed %d: parameters and buffers equal the module's, to the byte" % c["seed"])
        # the reference draws get_inputs() on the GPU (reference.py draw_inputs: its factory
        # calls under `with torch.device("cuda")`), on the CPU only where that fails
        torch.manual_seed(c["seed"])
        try:
            with torch.device("cuda"):
                drawn = mod.get_inputs()
        except Exception:
            torch.manual_seed(c["seed"])
            drawn = mod.get_inputs()
        raw = [v for v in drawn if isinstance(v, torch.Tensor)]
        for g, t, r in zip(x, ins, raw):
            r = r.cuda()
            if c["dist"] == "module" or not r.is_floating_point() or own.get(t["name"]):
                ok(torch.equal(g, r), "seed %d %s: input %s is get_inputs()'s draw" % (c["seed"], c["dist"], t["name"]))
            else:
                sd = g.double().std().item()
                want = 1.0 if c["dist"] == "normal" else 64.0
                ok(0.9 * want < sd < 1.1 * want, "seed %d %s: input %s has std %.3g (want %g)"
                   % (c["seed"], c["dist"], t["name"], sd, want))
        args = []
        it = iter(x)
        torch.manual_seed(c["seed"])
        for v in mod.get_inputs():
            args.append(next(it) if isinstance(v, torch.Tensor) else v)
        with torch.no_grad():
            y = model(*args)
        ys = list(y) if isinstance(y, (tuple, list)) else [y]
        refs = [fetch(h) for h in c["ref"]]
        truths = [fetch(h) for h in c["truth"]]
        for k, (r, yy) in enumerate(zip(refs, ys)):
            if r.is_floating_point():
                err = (r.double() - yy.double()).abs().max().item()
                scale = max(yy.double().abs().max().item(), 1e-30)
                tol = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}.get(r.dtype, 1e-5)
                ok(err <= tol * scale, "seed %d %s: ref %d equals this process's forward (max err %.3g of %.3g)"
                   % (c["seed"], c["dist"], k, err, scale))
            else:
                ok(torch.equal(r, yy), "seed %d %s: ref %d (integer) equals this process's forward" % (c["seed"], c["dist"], k))
        if model64 is not None:
            a64 = [a.double() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args]
            with torch.no_grad():
                t64 = model64(*a64)
            t64 = list(t64) if isinstance(t64, (tuple, list)) else [t64]
            for k, (t, w) in enumerate(zip(truths, t64)):
                if w.is_floating_point():
                    err = (t - w).abs().max().item()
                    scale = max(w.abs().max().item(), 1e-300)
                    ok(t.dtype == torch.float64 and err <= 1e-9 * scale,
                       "seed %d %s: truth %d is fp64 and equals this process's float64 forward (max err %.3g of %.3g)"
                       % (c["seed"], c["dist"], k, err, scale))
                    rel = (refs[k].double() - t).abs().max().item() / scale
                    ok(rel < 0.1, "seed %d %s: the reference is within %.3g of the truth's scale" % (c["seed"], c["dist"], rel))
                else:
                    ok(torch.equal(t, w), "seed %d %s: truth %d (integer) exact" % (c["seed"], c["dist"], k))
        else:
            ok(P["truth"] == "fp32" and P.get("truth_why"), "truth fp32 says why: %s" % P.get("truth_why"))
    for cond, what in res:
        print("%s - %s: %s" % ("ok" if cond else "not ok", os.path.basename(path), what), flush=True)
    return 0 if all(c for c, _ in res) else 1


# ---- the driver ----

def embedded_reference():
    """tools/reference.py as cutegen runs it (python3 -c, the copy embedded in the binary, the
    timing helper pasted in): read back from build/gen/embedded.c; None when not built."""
    import re
    p = os.path.join(ROOT, os.environ.get("BUILD", "build"), "gen", "embedded.c")
    if not os.path.exists(p):
        return None
    s = open(p).read()
    m = re.search(r'\{ "tools/reference.py", file_(\d+),', s)
    a = m and re.search(r"static const char file_%s\[\] = \{(.*?)\};" % m.group(1), s, re.S)
    if not a:
        return None
    return bytes(int(x) for x in a.group(1).replace("\n", "").split(",") if x.strip())[:-1].decode()


def main():
    argv = sys.argv[1:]
    if argv[:1] == ["--consume"]:
        return consume(argv[1], argv[2], int(argv[3]))
    device, keep = 0, None
    if "--device" in argv:
        i = argv.index("--device")
        device = int(argv[i + 1])
        del argv[i:i + 2]
    if "--keep" in argv:
        i = argv.index("--keep")
        keep = argv[i + 1]
        del argv[i:i + 2]
    files = [os.path.abspath(os.path.join(ROOT, f)) if not os.path.isabs(f) else f
             for f in (argv or DEFAULT)]
    out = keep or os.environ.get("TMPDIR", "/tmp")
    passed = failed = 0
    src = embedded_reference()
    argv_ref = ([sys.executable, "-c", src] if src else
                [sys.executable, os.path.join(ROOT, "tools", "reference.py")])
    print("# the reference process: %s" % ("the copy embedded in cutegen (python3 -c)" if src
                                           else "tools/reference.py (no build/gen/embedded.c)"))

    def say(cond, what):
        nonlocal passed, failed
        print("%s - %s" % ("ok" if cond else "not ok", what), flush=True)
        if cond:
            passed += 1
        else:
            failed += 1

    for n, path in enumerate(files):
        name = os.path.basename(path)
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
        if n == 1:  # the reference turns expandable segments off: IPC cannot open them
            env["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
        ref = subprocess.Popen(argv_ref, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
                               start_new_session=True)
        watchdog = threading.Timer(1500, ref.kill)  # torch.compile max-autotune takes minutes
        watchdog.start()
        hello = json.loads(ref.stdout.readline() or "{}")
        req = {"op": "prepare", "file": path, "seed": 42, "device": device, "cases": CASES,
               "precision": None, "baselines": n == 0, "memory_fraction": 0.35}
        req = {k: v for k, v in req.items() if v is not None}
        t0 = time.time()
        ref.stdin.write(json.dumps(req) + "\n")
        ref.stdin.flush()
        line = ref.stdout.readline()
        dt = time.time() - t0
        rep = json.loads(line) if line else {"ok": False, "kind": "?", "message": "no reply"}
        if not rep.get("ok"):
            # a module too large for this GPU even when idle (63_conv at KernelBench's size: 2
            # cases of 25 GB against 0.35 of an H100's 80 GB) must get the memory verdict that
            # says so; any other failure is one
            msg = rep.get("message") or ""
            need = re.search(r"(\d+) MiB needed", msg)
            total = re.search(r"the GPU has (\d+) MiB", msg)
            too_large = (rep.get("kind") == "memory" and need and total and
                         int(need.group(1)) > req["memory_fraction"] * int(total.group(1)))
            say(bool(too_large), "%s: %s: [%s] %s" % (
                name, "larger than this GPU holds, a clear verdict" if too_large else "prepare failed",
                rep.get("kind"), msg))
            watchdog.cancel()
            ref.kill()
            ref.wait()
            continue
        P = rep["prepare"]
        say(len(P["cases"]) >= 2, "%s: prepare in %.1f s (torch %s): %d cases, truth %s, notes %s"
            % (name, dt, hello.get("torch"), len(P["cases"]), P["truth"], P["notes"]))
        if "baselines" in P:
            b = P["baselines"]
            say(b.get("eager_ms", 0) > 0 and ("compile_ms" in b or "compile_error" in b),
                "%s: baselines eager %.4g ms, torch.compile (%s) %s, by dist %s"
                % (name, b.get("eager_ms", 0), b.get("compile_mode"),
                   "%.4g ms" % b["compile_ms"] if "compile_ms" in b else b.get("compile_error"),
                   json.dumps(b.get("median_ms_by_dist"))))
        rp = os.path.join(out, "prepare_%d_%s.json" % (os.getpid(), name))
        json.dump(rep, open(rp, "w"))
        child = subprocess.run([sys.executable, os.path.abspath(__file__), "--consume", rp, path,
                                str(device)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, env=env, timeout=900)
        lines = child.stdout.splitlines()
        for l in lines:
            if l.startswith("ok - "):
                print(l)
                passed += 1
            elif l.startswith("not ok - "):
                print(l)
                failed += 1
        if child.returncode and not any(l.startswith("not ok") for l in lines):
            say(False, "%s: the second process failed: %s" % (name, " | ".join(lines[-8:])))
        ref.stdin.write('{"op": "release"}\n')
        ref.stdin.flush()
        r = ref.stdout.readline()
        try:
            rc = ref.wait(timeout=60)
        except subprocess.TimeoutExpired:
            ref.kill()
            rc = "killed"
        watchdog.cancel()
        say(r.strip() == '{"ok": true}' and rc == 0, "%s: release answered (%s), the reference exited %s"
            % (name, r.strip(), rc))
        if not keep:
            os.unlink(rp)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
