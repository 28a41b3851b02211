"""CUDA-event timing of PyTorch calls under the runner's protocol, shared by
tools/torch_eager.py (`cutegen eval --torch`) and tools/reference.py (the eager and
torch.compile baselines of module tasks).

Both scripts run from the copies embedded in cutegen, alone: tools/embed.c pastes this file in
place of their line `#@embed tools/torch_timing.py`; run from the repository, they import it
from beside them. No imports at module level (torch is passed in).
"""


def l2_flush_buffer(torch, device):
    """A buffer of twice the L2 cache: writing it (zero_()) evicts what a call left in L2."""
    return torch.empty(2 * torch.cuda.get_device_properties(device).L2_cache_size // 4 + 1,
                       dtype=torch.float32, device="cuda")


def compile_mode(gemm_like, epilogue):
    """torch.compile's mode for a baseline: max-autotune for a GEMM with an epilogue (bias,
    activation, more ops after the product: what autotuning fuses), default otherwise."""
    return "max-autotune" if gemm_like and epilogue else "default"


# The GPU spins this many cycles (about 1.5-2 ms on an H100 or H200) after the L2 flush and
# before the start event: the host issues the event, the call and the end event meanwhile, so
# the interval holds the call's GPU work and not Python's time to issue it (torch.compile's
# guards and launches under a loaded CPU: tf32 3072^3 timed 0.36 ms one call and 0.195 ms the
# next, eager 0.194 ms in both). The runner issues a candidate from C in microseconds.
SPACER_CYCLES = 3_000_000


def _spacer(torch):
    sleep = getattr(torch.cuda, "_sleep", None)
    if sleep is not None:
        sleep(SPACER_CYCLES)


def _median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2.0


def cuda_timing(torch, call, flush, before, warm_args, budget_ms=400.0, min_trials=10,
                max_trials=200):
    """Times call(*args) by the runner's protocol (docs/evaluation.md): before each call,
    outside the events, before(i) makes the call's inputs (regenerates an input set, or copies
    a case's inputs in) and returns (key, args), key its distribution; the L2 flushed (a write
    of flush); the GPU kept busy while the host issues the call (_spacer); CUDA events around
    the call alone; the stream synchronized after it. Warm-up
    and the estimate that sizes the trials (runner/protocol.c protocol_trials: budget_ms,
    min_trials..max_trials) use warm_args. Returns (ms, p10, p90, trials, by_key): ms is the
    largest per-key median."""
    for _ in range(3):
        call(*warm_args)
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    flush.zero_()
    _spacer(torch)
    e0.record()
    call(*warm_args)
    e1.record()
    torch.cuda.synchronize()
    est = e0.elapsed_time(e1)
    trials = int(max(min_trials, min(max_trials, budget_ms / (est + 0.05))))
    times = {}
    for i in range(trials):
        key, args = before(i)
        flush.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        _spacer(torch)
        s.record()
        call(*args)  # a new output every call: nothing of an earlier one is reused
        e.record()
        torch.cuda.synchronize()
        times.setdefault(key, []).append(s.elapsed_time(e))
    by_key = {k: _median(v) for k, v in times.items()}
    ms = sorted(x for v in times.values() for x in v)
    return max(by_key.values()), ms[len(ms) // 10], ms[-1 - len(ms) // 10], trials, by_key
