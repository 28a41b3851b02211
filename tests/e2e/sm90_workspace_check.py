#!/usr/bin/env python3
"""Checks a compiled gemm_sm90 candidate's cutegen_workspace_bytes on the CPU (issue 20's pad path).

usage: sm90_workspace_check.py KERNEL.so KERNEL.cu TASK.json

cutegen_workspace_bytes is host code: it is called through ctypes with DLTensors of the task's
shapes (data pointers that are never dereferenced) and must give what the pad path needs:
a copy of each operand whose rows are not a multiple of 16 bytes, its rows rounded up to 16
bytes and the copy to 128 (a tf32 or fp8 operand that is not K-major: always, transposed), then CG_P_SPLIT_K raw fp32 copies of C when split-K is on, and with CG_P_REDUCE=1 an int
count a tile (M tiles rounded up to the cluster), from the next multiple of 128 bytes. The same
candidate on the task's shapes rounded up to aligned rows must need the partials only.
Prints what it checked; exits 1 on a difference.
"""
import ctypes
import json
import re
import sys


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


# dtype -> (DLPack code, bits); fp32 inputs under the tf32 contract are fp32 tensors
DTYPES = {"fp32": (2, 32), "fp16": (2, 16), "bf16": (4, 16), "fp8_e4m3": (10, 8)}
keep = []  # shape arrays must outlive the call


def tensor(dtype, shape, addr):
    code, bits = DTYPES[dtype]
    arr = (ctypes.c_int64 * len(shape))(*shape)
    keep.append(arr)
    return DLTensor(ctypes.c_void_p(addr), DLDevice(2, 0), len(shape), DLDataType(code, bits, 1),
                    arr, None, 0)


def up(n, to):
    return (n + to - 1) // to * to


def expected(t, m, n, k, split, cfg):
    esize = DTYPES[t["dtype"]][1] // 8
    align = 16 // esize
    L = t.get("batch", 1)
    a_col, b_col = t.get("a_layout") == "col", t.get("b_layout") == "col"
    # tf32 and fp8 WGMMA read K-major operands only: an MN-major one (A col, B row) is always
    # copied, transposed, its rows then K long
    k_major_only = t["dtype"] == "fp8_e4m3" or t["dtype"] == "fp32"
    trans_a, trans_b = k_major_only and a_col, k_major_only and not b_col
    a_col, b_col = a_col and not trans_a, b_col or trans_b
    parts, total = [], 0
    for name, rows, cols, trans in (("A", L * (k if a_col else m), m if a_col else k, trans_a),
                                    ("B", L * (n if b_col else k), k if b_col else n, trans_b)):
        ld = up(cols, align)
        if trans:
            parts.append("%s transposed, rows %d -> %d" % (name, cols, ld))
            total += up(rows * ld * esize, 128)
        elif ld != cols:
            parts.append("%s rows %d -> %d" % (name, cols, ld))
            total += up(rows * ld * esize, 128)
    if split > 1:
        parts.append("%d partials" % split)
        total += split * m * n * L * 4
        if cfg.get("CG_P_REDUCE", 0):
            bm, bn, cl = cfg["CG_P_BM"], cfg["CG_P_BN"], cfg["CG_P_CLUSTER_M"]
            if t["dtype"] == "fp8_e4m3":
                bn = min(bn, 128)  # fp8 runs BN = 256 as 128
            tiles = up(-(-m // bm), cl) * -(-n // bn) * L
            parts.append("%d tile counts" % tiles)
            total = up(total, 128) + tiles * 4
    return total, parts


def call(fn, t, m, n, k):
    L = t.get("batch", 1)
    lead = [L] if L > 1 else []
    a_col, b_col = t.get("a_layout") == "col", t.get("b_layout") == "col"
    out = t.get("out_dtype", t["dtype"])
    ins = [tensor(t["dtype"], lead + ([k, m] if a_col else [m, k]), 0x10000000),
           tensor(t["dtype"], lead + ([n, k] if b_col else [k, n]), 0x20000000)]
    if t.get("epilogue", {}).get("bias"):
        ins.append(tensor(out, [n], 0x30000000))
    outs = [tensor(out, lead + [m, n], 0x40000000)]
    arr_in = (DLTensor * len(ins))(*ins)
    arr_out = (DLTensor * 1)(*outs)
    return fn(arr_in, len(ins), arr_out, 1, None, 0)


def main():
    so, src, task = sys.argv[1:4]
    t = json.load(open(task))
    first = open(src).readline()
    if "family=gemm_sm90" not in first:
        sys.exit("%s is not a gemm_sm90 candidate" % src)
    cfg = {k: int(v) for k, v in re.findall(r"(CG_P_\w+)=(\d+)", first)}
    split = cfg.get("CG_P_SPLIT_K", 1)
    fn = ctypes.CDLL(so).cutegen_workspace_bytes
    fn.restype = ctypes.c_size_t
    fn.argtypes = [ctypes.POINTER(DLTensor), ctypes.c_int, ctypes.POINTER(DLTensor), ctypes.c_int,
                   ctypes.c_void_p, ctypes.c_int]
    m, n, k = t["m"], t["n"], t["k"]
    align = 16 // (DTYPES[t["dtype"]][1] // 8)
    fails = []
    want, parts = expected(t, m, n, k, split, cfg)
    got = call(fn, t, m, n, k)
    if got != want:
        fails.append("%dx%dx%d: %d bytes, expected %d (%s)" % (m, n, k, got, want, ", ".join(parts) or "nothing"))
    # the same candidate on aligned rows: nothing padded
    am, an, ak = up(m, align), up(n, align), up(k, align)
    want2, parts2 = expected(t, am, an, ak, split, cfg)
    got2 = call(fn, t, am, an, ak)
    if got2 != want2 or any(p.startswith(("A rows", "B rows")) for p in parts2):
        fails.append("%dx%dx%d (aligned): %d bytes, expected %d" % (am, an, ak, got2, want2))
    if fails:
        print("; ".join(fails))
        sys.exit(1)
    print("%d bytes (%s); aligned %dx%dx%d: %d" % (got, ", ".join(parts) or "nothing padded", am, an, ak, got2))


if __name__ == "__main__":
    main()
