#!/usr/bin/env python3
# A scripted model for tests/e2e/loop.sh, run by the `cmd` backend: the prompt arrives on stdin
# and is saved as DIR/prompt-N.txt; the reply printed is DIR/reply-N.txt. A reply file holding
# just SLEEP makes it write its pid to DIR/pid and hang (so a test can kill the run mid-call).
import os, sys, time
d = sys.argv[1]
count_path = os.path.join(d, "count")
n = int(open(count_path).read()) + 1 if os.path.exists(count_path) else 1
open(count_path, "w").write(str(n))
open(os.path.join(d, "prompt-%d.txt" % n), "w").write(sys.stdin.read())
reply = open(os.path.join(d, "reply-%d.txt" % n)).read()
if reply.strip() == "SLEEP":
    open(os.path.join(d, "pid"), "w").write(str(os.getpid()))
    time.sleep(600)
sys.stdout.write(reply)
