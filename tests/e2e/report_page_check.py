"""A run's report page against its store (tests/e2e/report.sh).

    python3 report_page_check.py PAGE.html SHOW.json [--scripted-run]

PAGE is the page `cutegen report RUN --html` wrote, or the DOM headless Chromium built from
it; SHOW is `cutegen show RUN --json`. Checks that both charts are there, that every plotted
speedup, roofline fraction and verdict is the store's, and the stage boundaries; that the
speedup is drawn over the roofline fraction (not hidden under it when equal), the axes are
labelled, the lines join only the best so far (a rolled-back node is a point off the line),
the profile is labelled with the node it measured, messages are cut at a word with an
ellipsis, and the verdict strip has a legend of its colors. With
--scripted-run, also what report.sh's scripted run puts on its page (escaping, highlighting).
Prints "html ok" when all hold.
"""
import json
import re
import sys
from html.parser import HTMLParser

page = open(sys.argv[1]).read()
show = json.load(open(sys.argv[2]))
scripted = "--scripted-run" in sys.argv[3:]


class P(HTMLParser):
    def __init__(s):
        super().__init__()
        s.svgs, s.pts, s.cells, s.stage, s.scripts = [], [], [], [], 0
        s.order, s.lines, s.axis, s.msgs, s.keys, s.profile = [], {}, {}, [], [], None
        s.in_msg = s.in_axis = s.in_key = None

    def handle_starttag(s, tag, a):
        a = dict(a)
        cls = (a.get("class") or "").split()
        if tag == "svg":
            s.svgs.append(a.get("id"))
        if tag == "script":
            s.scripts += 1
        if tag == "circle" and "data-node" in a:
            s.pts.append(a)
        if tag in ("circle", "polyline") and ("speedup" in cls or "roofline" in cls):
            s.order.append("speedup" if "speedup" in cls else "roofline")
        if tag == "polyline" and "best-so-far" in cls:
            s.lines["speedup" if "speedup" in cls else "roofline"] = a
        if tag == "rect" and "data-verdict" in a:
            s.cells.append(a)
        if tag == "line" and a.get("class") == "stage-boundary":
            s.stage.append(int(a["data-stage"]))
        if tag == "text" and "axis-label" in cls:
            s.in_axis = a["data-axis"]
            s.axis[s.in_axis] = ""
        if tag == "span" and "message" in cls:
            s.in_msg = [a["title"], ""]
        if tag == "span" and "verdict-key" in cls:
            s.in_key = [a["data-verdict"], None]
        if tag == "i" and s.in_key:
            s.in_key[1] = re.search(r"background:\s*([^;]+)", a.get("style", "")).group(1).strip()
        if tag == "h2" and a.get("id") == "profile":
            s.profile = a

    def handle_data(s, d):
        if s.in_axis:
            s.axis[s.in_axis] += d
        if s.in_msg:
            s.in_msg[1] += d

    def handle_endtag(s, tag):
        if tag == "text":
            s.in_axis = None
        if tag == "span" and s.in_msg:
            s.msgs.append(tuple(s.in_msg))
            s.in_msg = None
        if tag == "span" and s.in_key:
            s.keys.append(tuple(s.in_key))
            s.in_key = None


p = P()
p.feed(page)
assert "chart-speedup" in p.svgs and "chart-verdicts" in p.svgs, p.svgs
assert p.scripts == 0, "the page needs no JavaScript"
assert page.count("id=\"chart-speedup\"") == 1, "one body"
nodes = {n["id"]: n for n in show["nodes"]}
sp = {int(a["data-node"]): float(a["data-speedup"]) for a in p.pts if "data-speedup" in a}
rf = {int(a["data-node"]): float(a["data-roofline"]) for a in p.pts if "data-roofline" in a}
want_sp = {i: n["speedup"] for i, n in nodes.items() if n["speedup"] is not None}
want_rf = {i: n["roofline_fraction"] for i, n in nodes.items() if n["roofline_fraction"] is not None}
assert want_sp, "the run has measured nodes"
assert sp.keys() == want_sp.keys() and all(abs(sp[i] - want_sp[i]) < 1e-6 for i in sp), (sp, want_sp)
assert rf.keys() == want_rf.keys() and all(abs(rf[i] - want_rf[i]) < 1e-6 for i in rf), (rf, want_rf)
assert [(int(c["data-node"]), c["data-verdict"]) for c in p.cells] == \
    [(i, n["verdict"]) for i, n in sorted(nodes.items())]
stages = [n["stage"] for _, n in sorted(nodes.items())]
assert p.stage == [b for a, b in zip(stages, stages[1:]) if a != b], p.stage
assert re.search(r'id="best-node">%d<' % show["best"]["node"], page)

# the speedup is drawn after (over) the roofline fraction, and thinner than its band
assert p.order and p.order.index("speedup") > len(p.order) - 1 - p.order[::-1].index("roofline"), \
    "the roofline fraction is drawn over the speedup: " + " ".join(p.order)
assert float(p.lines["speedup"]["stroke-width"]) < float(p.lines["roofline"]["stroke-width"])
# both axes have labels
assert p.axis.get("x", "").strip() and p.axis.get("y", "").strip(), p.axis
# the lines are the best so far: at each node, the value of the latest new best
ordered = [n for _, n in sorted(nodes.items())]
for series, key in (("speedup", "speedup"), ("roofline", "roofline_fraction")):
    cur, want = None, []
    for n in ordered:
        if n["outcome"] == "best" and n[key] is not None:
            cur = n[key]
        want.append(cur)
    got = [None if v == "-" else float(v) for v in p.lines[series]["data-values"].split()]
    assert len(got) == len(want) and all((g is None and w is None) or (g is not None and w is not None
               and abs(g - w) < 1e-6) for g, w in zip(got, want)), (series, got, want)
    # every vertex of the line is at the height of a best node's point: none joins a rolled-back one
    best_y = {round(float(a["cy"]), 1) for a in p.pts if ("data-" + series) in a and
              nodes[int(a["data-node"])]["outcome"] == "best"}
    ys = {round(float(xy.split(",")[1]), 1) for xy in p.lines[series]["points"].split()}
    assert ys <= best_y, (series, ys, best_y)
# the profile is labelled with the node it measured: the best one when it was taken
prof = [i for i, n in sorted(nodes.items()) if n.get("has_profile")]
if prof:
    assert p.profile is not None, "the page shows no profile"
    of = [i for i, n in sorted(nodes.items()) if i < prof[-1] and n["outcome"] == "best"]
    assert int(p.profile["data-stored-with"]) == prof[-1]
    assert of and int(p.profile["data-node"]) == of[-1], (p.profile, of)
# messages: whole, or cut at a word boundary with an ellipsis (the whole one in the title)
for full, shown in p.msgs:
    if shown != full:
        assert shown.endswith("\u2026"), ("cut without an ellipsis", shown)
        cut = shown[:-1]
        assert full.startswith(cut) and (len(cut) == len(full) or full[len(cut)] in " ,;:"), \
            ("cut mid-word", shown, full)
# the verdict strip's legend: each verdict present, in the color of its cells
colors = {c["data-verdict"]: c["fill"] for c in p.cells}
assert dict(p.keys) == colors, (p.keys, colors)
if scripted:
    assert "a first relu &lt;b&gt;&amp;&quot;x&quot;&lt;/b&gt;" in page, "change lines are escaped"
    assert "<b>&" not in page
    assert '<span class="kw">__global__</span>' in page and 'class="cm"' in page, "highlighting"
print("html ok")
