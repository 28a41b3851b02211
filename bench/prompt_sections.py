#!/usr/bin/env python3
"""The prompts of a run, section by section: what each call sent, how big each part was, how much
of it repeated the previous call byte for byte (the prefix a provider's prompt cache can serve),
and the first prompt as the model received it.

usage: bench/prompt_sections.py RUN_DIR [--first] [--label NAME]
Reads RUN_DIR/run.db (llm_calls.request_json: the body sent, or for the cmd backend the
messages; llm_calls.cached_tokens: what the provider reported). Tokens are estimated as
bytes / 4 where the provider reported none. Prints a markdown table; --first also prints the
first prompt in full ([system] / [user] as the cmd backend renders it).
"""
import json
import sqlite3
import sys

# Headings that open a section, in either message; text before the first is "role/intro".
HEADINGS = [
    ("The kernel contract", "contract"),
    ("A complete minimal kernel", "abi example"),
    ("How to write CuTe kernels here", "conventions"),
    ("How to reply", "reply format"),
    ("Target and build", "target"),
    ("The task", "task"),
    ("task: ", "task"),
    ("Stage guidance:", "guidance"),
    ("This stage's guidance", "guidance"),
    ("What has been tried so far", "history"),
    ("History (one line per attempt", "history"),
    ("What happened to the last", "feedback"),
    ("What went wrong:", "feedback"),
    ("The current kernel", "kernel"),
    ("The candidate that failed", "kernel"),
    ("Profile of the best kernel", "profile"),
    ("CuTe reference material", "docs"),
    ("For reference, ", "status"),
    ("Make ONE change", "ask"),
    ("Fix the cause", "ask"),
    ("Reply with the whole kernel", "ask"),
]
ORDER = ["intro", "contract", "abi example", "conventions", "reply format", "target", "task",
         "guidance", "kernel", "feedback", "history", "docs", "profile", "status", "ask"]


def messages(req):
    """(system, user) texts of one stored request body."""
    b = json.loads(req)
    sys_t = b.get("system", "")
    if isinstance(sys_t, list):
        sys_t = "".join(x.get("text", "") for x in sys_t)
    user = ""
    for m in b.get("messages", []):
        c = m.get("content")
        if isinstance(c, list):
            c = "".join(x.get("text", "") for x in c)
        if m.get("role") == "system":
            sys_t += c
        elif m.get("role") == "user":
            user += c
    return sys_t, user


def sections(text, where):
    out = {}
    cur = "intro"
    in_task = False
    for line in text.splitlines(keepends=True):
        for h, name in HEADINGS:
            if line.startswith(h) and not (name == "task" and in_task):
                cur = name
                in_task = name == "task"
                break
        else:
            if in_task and cur == "task" and line.startswith("workload class:"):
                out[(where, cur)] = out.get((where, cur), 0) + len(line.encode())
                cur = where + " rest"
                in_task = False
                continue
        out[(where, cur)] = out.get((where, cur), 0) + len(line.encode())
    return out


def common_prefix(a, b):
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        sys.exit(__doc__)
    run, first, label = args[0], "--first" in args, None
    if "--label" in args:
        label = args[args.index("--label") + 1]
    db = sqlite3.connect(run + "/run.db")
    rows = db.execute("select c.id, coalesce(n.kind, '-'), c.request_json, c.in_tokens, "
                      "c.cached_tokens from llm_calls c left join nodes n on n.id = c.node "
                      "order by c.id").fetchall()
    if not rows:
        sys.exit("no model calls in %s/run.db" % run)
    calls, cols = [], set()
    prev = None
    for cid, kind, req, in_tok, cached in rows:
        s, u = messages(req)
        secs = sections(s, "system")
        secs.update(sections(u, "user"))
        cols.update(k[1] for k in secs)
        whole = s + "\n" + u
        prefix = common_prefix(prev, whole) if prev is not None else 0
        prev = whole
        calls.append((cid, kind, len(s.encode()), len(u.encode()), secs, prefix, in_tok, cached, s, u))
    names = [c for c in ORDER if c in cols] + sorted(c for c in cols if c not in ORDER)
    print("## %s" % (label or run))
    print()
    print("Bytes per section (system message | user message); stable prefix = bytes identical to "
          "the previous call's prompt from its start (~tokens = bytes/4); cached = what the "
          "provider reported.")
    print()
    head = ["call", "node", "system B", "user B"] + names + ["stable prefix ~tok", "in tok", "cached tok"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    tot = {"sys": 0, "user": 0, "prefix": 0, "in": 0, "cached": 0}
    for cid, kind, sb, ub, secs, prefix, in_tok, cached, _, _ in calls:
        cells = [str(cid), kind, str(sb), str(ub)]
        for n in names:
            v = [secs.get((w, n), 0) for w in ("system", "user")]
            cells.append("%s%s" % ("s" + str(v[0]) if v[0] else "", (" u" if v[0] else "u") + str(v[1]) if v[1] else "") or "-")
        cells += [str(prefix // 4), str(in_tok or (sb + ub) // 4), str(cached or 0)]
        print("| " + " | ".join(cells) + " |")
        tot["sys"] += sb
        tot["user"] += ub
        tot["prefix"] += prefix // 4
        tot["in"] += in_tok or (sb + ub) // 4
        tot["cached"] += cached or 0
    print()
    print("%d calls: %d bytes of system, %d of user (~%d tokens); ~%d tokens repeated a previous "
          "prefix; provider counted %d in, %d cached (%.0f%%)" %
          (len(calls), tot["sys"], tot["user"], (tot["sys"] + tot["user"]) // 4, tot["prefix"],
           tot["in"], tot["cached"], 100.0 * tot["cached"] / tot["in"] if tot["in"] else 0))
    if first:
        s, u = calls[0][8], calls[0][9]
        print()
        print("### The first prompt as the model receives it")
        print()
        print("````text")
        print("[system]\n" + s + "\n\n[user]\n" + u)
        print("````")


if __name__ == "__main__":
    main()
