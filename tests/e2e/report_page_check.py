"""A run's report page against its store (tests/e2e/report.sh).

    python3 report_page_check.py PAGE.html SHOW.json [--scripted-run]

PAGE is the page `cutegen report RUN --html` wrote, or the DOM headless Chromium built from
it; SHOW is `cutegen show RUN --json`. Checks that both charts are there, that every plotted
speedup, roofline fraction and verdict is the store's, and the stage boundaries. With
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

    def handle_starttag(s, tag, a):
        a = dict(a)
        if tag == "svg":
            s.svgs.append(a.get("id"))
        if tag == "script":
            s.scripts += 1
        if tag == "circle" and "data-node" in a:
            s.pts.append(a)
        if tag == "rect" and "data-verdict" in a:
            s.cells.append(a)
        if tag == "line" and a.get("class") == "stage-boundary":
            s.stage.append(int(a["data-stage"]))


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
if scripted:
    assert "a first relu &lt;b&gt;&amp;&quot;x&quot;&lt;/b&gt;" in page, "change lines are escaped"
    assert "<b>&" not in page
    assert '<span class="kw">__global__</span>' in page and 'class="cm"' in page, "highlighting"
print("html ok")
