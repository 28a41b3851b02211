#!/usr/bin/env python3
"""Checks the module suites (KernelBench-format task files) without torch, by reading them.

usage: module_suite_check.py [--cutegen PATH] [--min-level1 N] [--min-level2 N]
                             [--level1 DIR] [--level2 DIR] [--kb1 DIR]

Prints "ok - WHAT" or "not ok - WHAT" per check (the e2e convention) and exits 1 if any failed.
Each file must parse, import torch and torch.nn as nn, define class Model(nn.Module) with a
one-line docstring and forward, get_inputs() and get_init_inputs() returning literal lists,
forward must take as many tensors as get_inputs() returns, get_init_inputs() must fit
Model.__init__, CUTEGEN metadata (if any) must name forward arguments and known
distributions, and the file must define its shapes as module-level constants. A kb1 twin
(--kb1 DIR, with --cutegen) must pass the same tensors (names, shapes, fp32) and scalars as
`cutegen task show kb1/N`. Running the modules needs torch: tests/gpu/module_suite_torch.py.
"""
import argparse
import ast
import os
import re
import subprocess
import sys

DISTRIBUTIONS = {"positive", "probabilities", "indices", "module"}
TENSOR_MAKERS = {"rand", "randn", "randint", "zeros", "ones", "empty", "full"}


def module_consts(tree):
    """Module-level NAME = literal (or arithmetic on earlier constants), in order."""
    env = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name):
            try:
                env[node.targets[0].id] = const_eval(node.value, env)
            except ValueError:
                pass
    return env


def const_eval(node, env):
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, bool, str)):
        return node.value
    if isinstance(node, ast.Name) and node.id in env:
        return env[node.id]
    if isinstance(node, ast.Tuple):
        out = []
        for e in node.elts:
            if isinstance(e, ast.Starred):
                out.extend(const_eval(e.value, env))
            else:
                out.append(const_eval(e, env))
        return tuple(out)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -const_eval(node.operand, env)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult,
                                                           ast.FloorDiv)):
        a, b = const_eval(node.left, env), const_eval(node.right, env)
        if isinstance(node.op, ast.Add):
            return a + b
        if isinstance(node.op, ast.Sub):
            return a - b
        if isinstance(node.op, ast.Mult):
            return a * b
        return a // b
    raise ValueError(ast.dump(node))


def func(tree, name):
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    return None


def returned_list(fn):
    """The elements of the literal list fn returns, or None."""
    for node in ast.walk(fn):
        if isinstance(node, ast.Return):
            return node.value.elts if isinstance(node.value, ast.List) else None
    return None


def model_class(tree):
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "Model":
            return node
    return None


def method(cls, name):
    for node in cls.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    return None


def arg_names(fn):
    return [a.arg for a in fn.args.args[1:]]


def check_file(path):
    """The problems of one task file, as strings (empty when it is good)."""
    p = []
    try:
        src = open(path, encoding="utf-8").read()
        tree = ast.parse(src, filename=path)
    except (OSError, SyntaxError, ValueError) as e:
        return [f"does not parse: {e}"]
    imports = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            imports.update((a.name, a.asname) for a in node.names)
    if ("torch", None) not in imports or ("torch.nn", "nn") not in imports:
        p.append("lacks 'import torch' or 'import torch.nn as nn'")
    cls = model_class(tree)
    fwd = init = None
    if cls is None:
        p.append("defines no class Model")
    else:
        if not any(ast.unparse(b) in ("nn.Module", "torch.nn.Module") for b in cls.bases):
            p.append("Model is not an nn.Module")
        doc = ast.get_docstring(cls)
        if not doc or "\n" in doc.strip():
            p.append("Model has no one-line docstring")
        fwd, init = method(cls, "forward"), method(cls, "__init__")
        if fwd is None:
            p.append("Model has no forward")
    gi, gii = func(tree, "get_inputs"), func(tree, "get_init_inputs")
    if gi is None:
        p.append("defines no get_inputs()")
    if gii is None:
        p.append("defines no get_init_inputs()")
    ins = returned_list(gi) if gi else None
    if gi and ins is None:
        p.append("get_inputs() does not return a literal list")
    if fwd and ins is not None:
        fa = arg_names(fwd)
        if fwd.args.vararg or len(fa) != len(ins):
            p.append(f"forward takes {len(fa)} arguments but get_inputs() returns {len(ins)}")
    inits = returned_list(gii) if gii else None
    if gii and inits is None:
        p.append("get_init_inputs() does not return a literal list")
    if cls is not None and inits is not None:
        params = arg_names(init) if init else []
        required = len(params) - len(init.args.defaults) if init else 0
        if not (required <= len(inits) <= len(params)):
            p.append(f"get_init_inputs() returns {len(inits)} values but Model.__init__ "
                     f"takes {required} to {len(params)}")
    if gi is not None and ins is not None:
        try:
            input_shapes(tree)
        except (ValueError, TypeError, AttributeError) as e:
            p.append(f"an input's shape is not read from module constants: {e}")
    consts = module_consts(tree)
    if not any(isinstance(v, int) and not isinstance(v, bool) and v > 1
               for v in consts.values()):
        p.append("has no module-level shape constants")
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "CUTEGEN"
                                                for t in node.targets):
            try:
                meta = ast.literal_eval(node.value)
            except ValueError:
                p.append("CUTEGEN is not a literal")
                continue
            names = arg_names(fwd) if fwd else []
            if not isinstance(meta, dict) or set(meta) - {"inputs"} or \
                    not isinstance(meta.get("inputs"), dict):
                p.append('CUTEGEN must be {"inputs": {NAME: DISTRIBUTION}}')
                continue
            for k, v in meta["inputs"].items():
                if k not in names:
                    p.append(f"CUTEGEN names '{k}', not an argument of forward")
                if v not in DISTRIBUTIONS:
                    p.append(f"CUTEGEN gives '{k}' the unknown distribution '{v}'")
    return p


# ---- kb1 twins against `cutegen task show` ----

def input_shapes(tree):
    """[(name, shape tuple, dtype or None)] of get_inputs()' returned tensors, from the
    first torch.rand/randn/... call that makes each one."""
    consts = module_consts(tree)
    gi = func(tree, "get_inputs")
    made = {}
    for node in gi.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) and \
                node.targets[0].id not in made:
            call = maker_call(node.value)
            if call is not None:
                made[node.targets[0].id] = call
    out = []
    for el in returned_list(gi) or []:
        call = made.get(el.id) if isinstance(el, ast.Name) else maker_call(el)
        if call is None:
            raise ValueError(f"cannot tell the shape of '{ast.unparse(el)}'")
        shape = []
        if call.func.attr in ("randint", "full"):
            # randint(low, high, size) or randint(high, size); full(size, value)
            size = next((k.value for k in call.keywords if k.arg == "size"), None) or \
                (call.args[0] if call.func.attr == "full" else call.args[-1])
            shape = list(const_eval(size, consts))
        for a in [] if call.func.attr in ("randint", "full") else call.args:
            v = const_eval(a.value if isinstance(a, ast.Starred) else a, consts)
            shape.extend(v if isinstance(a, ast.Starred) else [v])
        dtype = next((ast.unparse(k.value) for k in call.keywords if k.arg == "dtype"), None)
        out.append((ast.unparse(el), tuple(shape), dtype))
    return out


def maker_call(node):
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and \
                ast.unparse(sub.func.value) == "torch" and sub.func.attr in TENSOR_MAKERS:
            return sub
    return None


def task_show(cutegen, name):
    r = subprocess.run([cutegen, "task", "show", name], capture_output=True, text=True)
    if r.returncode:
        raise ValueError(f"cutegen task show {name}: {r.stderr.strip() or r.returncode}")
    ins, scalars, op = [], {}, None
    for line in r.stdout.splitlines():
        m = re.match(r"  in\s+(\S+)\s+(\S+)\s+\[([0-9, ]+)\]", line)
        if m:
            ins.append((m[1], tuple(int(x) for x in m[3].split(",")), m[2]))
        m = re.match(r"op\s+(\S+)", line)
        if m:
            op = m[1]
        m = re.match(r"scalars\s+(.*)", line)
        if m and m[1].strip() != "none":
            for kv in m[1].split(","):
                k, v = kv.split("=")
                scalars[k.strip()] = float(v)
    return op, ins, scalars


def check_twin(path, cutegen):
    num = os.path.basename(path).split("_", 1)[0]
    tree = ast.parse(open(path, encoding="utf-8").read())
    op, want, scalars = task_show(cutegen, f"kb1/{num}")
    p = []
    fwd = method(model_class(tree), "forward")
    got = input_shapes(tree)
    if [n for n, _, _ in want] != arg_names(fwd):
        p.append(f"forward takes {arg_names(fwd)}, kb1/{num} passes {[n for n, _, _ in want]}")
    if [s for _, s, _ in got] != [s for _, s, _ in want]:
        p.append(f"get_inputs() shapes {[s for _, s, _ in got]} != kb1/{num}'s "
                 f"{[s for _, s, _ in want]}")
    for (n, _, dt), (_, _, wdt) in zip(got, want):
        if wdt != "fp32" or dt not in (None, "torch.float32"):
            p.append(f"'{n}' is {dt or 'fp32'}, kb1/{num} wants {wdt}")
    consts = module_consts(tree)
    for k, v in scalars.items():
        if k == "alpha" and op == "gemm" and v == 1:
            continue
        if k not in consts or float(consts[k]) != v:
            p.append(f"scalar '{k}' is {consts.get(k)}, kb1/{num} has {v:g}")
    return p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--level1")
    ap.add_argument("--level2")
    ap.add_argument("--kb1")
    ap.add_argument("--cutegen")
    ap.add_argument("--min-level1", type=int, default=40)
    ap.add_argument("--min-level2", type=int, default=10)
    a = ap.parse_args()
    failed = False

    def report(what, problems):
        nonlocal failed
        if problems:
            failed = True
            print(f"not ok - {what}")
            for x in problems[:40]:
                print(f"#   {x}")
        else:
            print(f"ok - {what}")

    dirs = [(d, label) for d, label in ((a.level1, "level1"), (a.level2, "level2"),
                                        (a.kb1, "kb1 twins")) if d]
    files = {}
    for d, label in dirs:
        files[label] = sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".py"))
    allfiles = [f for fs in files.values() for f in fs]

    problems = []
    for f in allfiles:
        problems += [f"{os.path.relpath(f)}: {x}" for x in check_file(f)]
    report(f"{len(allfiles)} module files are well-formed KernelBench tasks", problems)

    problems = []
    for label, fs in files.items():
        seen = {}
        for f in fs:
            base = os.path.basename(f)
            m = re.fullmatch(r"([0-9]+)_[A-Za-z0-9_]+\.py", base)
            if not m:
                problems.append(f"{label}/{base}: not named NN_Description.py")
                continue
            if m[1] in seen:
                problems.append(f"{label}: number {m[1]} is taken by {seen[m[1]]} and {base}")
            seen[m[1]] = base
    stems = {}
    for f in allfiles:
        stem = os.path.basename(f)[:-3]
        if stem in stems:
            problems.append(f"{stem} is in {os.path.dirname(stems[stem])} and {os.path.dirname(f)}")
        stems[stem] = f
    report("names are NN_Description.py, numbers and names unique", problems)

    if "level1" in files:
        n = len(files["level1"])
        report(f"level1 has {n} problems (at least {a.min_level1})",
               [] if n >= a.min_level1 else [f"only {n}"])
    if "level2" in files:
        n = len(files["level2"])
        report(f"level2 has {n} problems (at least {a.min_level2})",
               [] if n >= a.min_level2 else [f"only {n}"])
    if "kb1 twins" in files:
        want = sorted([str(i) for i in range(1, 33)] + ["88"], key=int)
        have = sorted((os.path.basename(f).split("_", 1)[0] for f in files["kb1 twins"]), key=int)
        report("kb1 twins are problems 1-32 and 88", [] if have == want else
               [f"have {have}"])
        if a.cutegen:
            problems = []
            for f in files["kb1 twins"]:
                try:
                    problems += [f"{os.path.basename(f)}: {x}" for x in check_twin(f, a.cutegen)]
                except (ValueError, AttributeError, TypeError, OSError) as e:
                    problems.append(f"{os.path.basename(f)}: {e}")
            report("each kb1 twin passes the tensors and scalars of its kb1 JSON task", problems)

    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
