"""For tests/e2e/modules.sh: copies tasks/kb1_modules/*.py into OUT with every module-level size
constant of 64 or more replaced by a small one (equal sizes stay equal), so the numpy stand-in
can run them; then, given the `cutegen task show --json` outputs, checks that each lowers to
the op of its kb1 JSON task (op, dtype, precision, layouts, structures, mask, activation and its
parameters, scalar, batch/m_dims form).
usage: kb1_twins_check.py shrink SRC_DIR OUT_DIR
       kb1_twins_check.py check KB1_JSON OUT_DIR     (reads OUT_DIR/NAME.json per module)"""
import glob
import json
import os
import re
import sys


def shrink(src_dir, out):
    for f in sorted(glob.glob(os.path.join(src_dir, "*.py"))):
        src = open(f).read()
        pat = r"^(\s*[A-Za-z_]\w*\s*=\s*)(\d+)(?=\s*(?:#.*)?$)"
        vals = sorted({int(m.group(2)) for m in re.finditer(pat, src, re.M) if int(m.group(2)) >= 64})
        small = {v: 9 + 4 * i for i, v in enumerate(vals)}
        src = re.sub(pat, lambda m: m.group(1) + str(small.get(int(m.group(2)), int(m.group(2)))), src, flags=re.M)
        open(os.path.join(out, os.path.basename(f)), "w").write(src)


def check(kb1_json, out):
    kb = {t["name"].split("/")[1].split("_")[0]: t for t in json.load(open(kb1_json))["tasks"]}
    keys = ["op", "dtype", "precision", "a_layout", "b_layout", "a_structure", "b_structure",
            "mask", "activation", "params", "scalar"]
    dflt = {"a_layout": "row", "b_layout": "row", "a_structure": "general",
            "b_structure": "general", "mask": "none"}
    bad = 0
    files = sorted(glob.glob(os.path.join(out, "*.py")))
    for f in files:
        name = os.path.basename(f)[:-3]
        num = name.split("_")[0]
        try:
            d = json.load(open(os.path.join(out, name + ".json")))
        except Exception as e:
            print("# %s: no description (%s)" % (name, e))
            bad += 1
            continue
        got, want = d.get("lowered"), kb.get(num)
        if not got or not want:
            print("# %s: not lowered (%s)" % (name, d.get("lowered_why")))
            bad += 1
            continue
        diff = [(k, got.get(k, dflt.get(k)), want.get(k, dflt.get(k))) for k in keys
                if got.get(k, dflt.get(k)) != want.get(k, dflt.get(k))]
        if (want.get("batch", 1) > 1) != (got.get("batch", 1) > 1) or bool(want.get("m_dims")) != bool(got.get("m_dims")):
            diff.append(("batch/m_dims", got.get("batch"), want.get("batch")))
        if diff:
            print("# %s: lowered to %s, differs from %s: %s" % (name, got["op"], want["name"], diff))
            bad += 1
    print("%d of %d kb1 twins lower to their JSON ops" % (len(files) - bad, len(files)))
    return 1 if bad or not files else 0


if __name__ == "__main__":
    if sys.argv[1] == "shrink":
        shrink(sys.argv[2], sys.argv[3])
        sys.exit(0)
    sys.exit(check(sys.argv[2], sys.argv[3]))
