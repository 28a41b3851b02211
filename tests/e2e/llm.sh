#!/usr/bin/env bash
# End-to-end tests of `cutegen llm`: the real binary against tests/llm_server.py, a model server
# on 127.0.0.1 that speaks the OpenAI and Anthropic wire protocols, through every scenario a
# client meets (retries, errors, dropped and cut-off streams, deadlines, bad bodies), plus the
# cmd and replay backends and the config file. Asserts what the user sees: stdout, stderr, exit
# code, attempts, and that the API key never shows up anywhere.
set -u
REPO=${REPO:-$(cd "$(dirname "$0")/../.." && pwd)}
CUTEGEN=${CUTEGEN:-$REPO/build/cutegen}
tmp=$(mktemp -d)
spid=
cleanup() {
	[ -n "$spid" ] && kill "$spid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# only loopback, no proxies, no settings of the person running the tests
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy
unset OPENAI_API_KEY ANTHROPIC_API_KEY OPENAI_BASE_URL ANTHROPIC_BASE_URL CUTEGEN_CONFIG
for v in $(env | grep -o '^CUTEGEN_[A-Z_]*' | grep -v '^CUTEGEN_RUNNER$'); do unset "$v"; done
export NO_PROXY=127.0.0.1 HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/xdg"
mkdir -p "$HOME" "$XDG_CONFIG_HOME"
KEY=sk-test-SECRET-0123456789
export CUTEGEN_LLM_BACKOFF=0.05 # quick retries, except where the server says Retry-After

python3 "$REPO/tests/llm_server.py" "$tmp/port" "$tmp/log" "$KEY" &
spid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
[ -s "$tmp/port" ] || { echo "not ok - the test server did not start"; exit 1; }
PORT=$(cat "$tmp/port")
URL="http://127.0.0.1:$PORT/v1"
fail=0

# t NAME WANT_RC STDOUT_ERE STDERR_ERE -- ARGS...: runs `cutegen llm ARGS` with both keys set.
t() {
	local name=$1 want=$2 outre=$3 errre=$4
	shift 5
	local start
	start=$(date +%s%N)
	OPENAI_API_KEY=${OPENAI_API_KEY-$KEY} ANTHROPIC_API_KEY=${ANTHROPIC_API_KEY-$KEY} \
		timeout 60 "$CUTEGEN" llm "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	local rc=$?
	ELAPSED_MS=$((($(date +%s%N) - start) / 1000000))
	local why=""
	[ "$rc" -eq "$want" ] || why="exit $rc, expected $want"
	[ -z "$outre" ] || grep -Eq -- "$outre" "$tmp/out" || why="$why; stdout lacks /$outre/"
	[ -z "$errre" ] || grep -Eq -- "$errre" "$tmp/err" || why="$why; stderr lacks /$errre/"
	if grep -qF -- "$KEY" "$tmp/out" "$tmp/err"; then why="$why; the API key is in the output"; fi
	report "$name" "$why"
}

report() {
	if [ -z "$2" ]; then
		echo "ok - $1"
	else
		echo "not ok - $1: $2"
		sed 's/^/    | /' "$tmp/out" "$tmp/err" | head -20
		fail=1
	fi
}

# requests the server got for a model name
requests() { python3 -c "import json,sys; print(sum(1 for l in open(sys.argv[1]) if json.loads(l)['model']==sys.argv[2]))" "$tmp/log" "$1"; }
# a Python expression over the last logged request body for a model (as `b`), printed
last_body() { python3 -c "
import json,sys
b=[json.loads(l) for l in open(sys.argv[1]) if json.loads(l)['model']==sys.argv[2]][-1]['body']
print($2)" "$tmp/log" "$1"; }
slower_than() { [ "$ELAPSED_MS" -ge "$1" ]; } # milliseconds
faster_than() { [ "$ELAPSED_MS" -lt "$1" ]; }

for b in openai anthropic; do
	A="--backend $b --base-url $URL"
	t "$b: streamed reply" 0 "^Hello from $b! You said: ping$" "^$b ok: [0-9]+ in \(2 cached\) \+ [0-9]+ out tokens, cost unknown, [0-9.]+ s, 1 attempt$" -- ping $A --model ok
	t "$b: whole reply (--no-stream)" 0 "^Hello from $b! You said: ping$" "1 attempt$" -- ping $A --model ok --no-stream
	[ "$(last_body ok "b.get('stream', False)")" = False ] || report "$b: --no-stream sends no stream flag" "stream was set"
	t "$b: --json" 0 '"text": "Hello from' "" -- ping $A --model ok --json
	python3 -c "
import json,sys; j=json.load(open(sys.argv[1]))
assert j['stop']=='end' and j['attempts']==1 and j['usage']['out']>0 and j['usage']['cached']==2 and j['backend']=='$b', j" "$tmp/out" \
		&& report "$b: --json fields" "" || report "$b: --json fields" "bad JSON object"
	t "$b: system prompt" 0 "You said: ping" "" -- ping $A --model sys:$b --system "be brief"
	if [ $b = openai ]; then
		got=$(last_body sys:$b "b['messages'][0]")
		[ "$got" = "{'role': 'system', 'content': 'be brief'}" ] && report "$b: system message sent first" "" || report "$b: system message sent first" "got $got"
	else
		got=$(last_body sys:$b "(b.get('system'), [m['role'] for m in b['messages']])")
		[ "$got" = "([{'type': 'text', 'text': 'be brief', 'cache_control': {'type': 'ephemeral'}}], ['user'])" ] && report "$b: system prompt at top level, marked cacheable" "" || report "$b: system prompt at top level, marked cacheable" "got $got"
	fi
	t "$b: request options" 0 "" "" -- ping $A --model opts:$b --temperature 0.3 --max-tokens 100 --reasoning-effort low
	if [ $b = openai ]; then
		want="(0.3, 100, 'low', True)"
		got=$(last_body opts:$b "(b.get('temperature'), b.get('max_tokens'), b.get('reasoning_effort'), b['stream_options']['include_usage'])")
	else
		want="(None, 10240, {'type': 'enabled', 'budget_tokens': 2048})"
		got=$(last_body opts:$b "(b.get('temperature'), b.get('max_tokens'), b.get('thinking'))")
	fi
	[ "$got" = "$want" ] && report "$b: request carries the options" "" || report "$b: request carries the options" "got $got, want $want"

	t "$b: 429 with Retry-After: 1, then success" 0 "You said: ping" "2 attempts$" -- ping $A --model retry429:$b
	slower_than 950 && report "$b: waited for Retry-After" "" || report "$b: waited for Retry-After" "only $ELAPSED_MS ms"
	t "$b: 500 then success" 0 "You said: ping" "2 attempts$" -- ping $A --model flaky500:$b
	t "$b: 529 overloaded then success" 0 "You said: ping" "2 attempts$" -- ping $A --model overloaded:$b
	t "$b: 500 forever" 5 "" "server error at .*HTTP 500: The server had an error.*after 3 attempts.*try again later" -- ping $A --model err500:$b --retries 2
	[ "$(requests err500:$b)" = 3 ] && report "$b: 500 forever made 3 requests" "" || report "$b: 500 forever made 3 requests" "made $(requests err500:$b)"
	t "$b: 401" 4 "" "refused the API key.*HTTP 401.*check $(echo $b | tr a-z A-Z)_API_KEY" -- ping $A --model auth:$b
	[ "$(requests auth:$b)" = 1 ] && report "$b: 401 is not retried" "" || report "$b: 401 is not retried" "made $(requests auth:$b)"
	if [ $b = openai ]; then OPENAI_API_KEY=sk-wrong t "$b: wrong key" 4 "" "HTTP 401" -- ping $A --model ok
	else ANTHROPIC_API_KEY=sk-wrong t "$b: wrong key" 4 "" "HTTP 401" -- ping $A --model ok; fi
	t "$b: a server that quotes the key gets it redacted" 4 "" "\[redacted\]" -- ping $A --model leak:$b
	t "$b: 400 shows the server's message" 5 "" "rejected the request.*HTTP 400: max_tokens is too large" -- ping $A --model bad:$b
	[ "$(requests bad:$b)" = 1 ] && report "$b: 400 is not retried" "" || report "$b: 400 is not retried" "made $(requests bad:$b)"
	t "$b: 404 names the model" 5 "" "not found at .*HTTP 404.*check the model name 'notfound:$b'" -- ping $A --model notfound:$b
	[ "$(requests notfound:$b)" = 1 ] && report "$b: 404 is not retried" "" || report "$b: 404 is not retried" "made $(requests notfound:$b)"
	t "$b: connection dropped mid-stream" 5 "" "dropped mid-reply.*after 2 attempts" -- ping $A --model drop:$b --retries 1
	t "$b: dropped once, then success" 0 "^Hello from $b! You said: ping$" "2 attempts$" -- ping $A --model droponce:$b
	t "$b: stream without its end marker" 5 "" "ended before its end marker.*after 2 attempts" -- ping $A --model trunc:$b --retries 1
	t "$b: cut-off stream once, then success" 0 "^Hello from $b! You said: ping$" "2 attempts$" -- ping $A --model trunconce:$b
	t "$b: in-stream error event, then success" 0 "^Hello from $b! You said: ping$" "2 attempts$" -- ping $A --model streamerror:$b
	t "$b: slow server past --timeout" 5 "" "no complete reply from .* within 1 s; raise --timeout" -- ping $A --model slow:$b --timeout 1 --retries 0
	faster_than 4000 && report "$b: the deadline held" "" || report "$b: the deadline held" "took $ELAPSED_MS ms"
	t "$b: malformed JSON body" 5 "" "malformed reply from the server: not JSON" -- ping $A --model malformed:$b --no-stream
	t "$b: malformed stream chunk" 5 "" "malformed reply from the server" -- ping $A --model malformed:$b
	t "$b: reply cut at max tokens" 0 "You said: ping" "warning: the reply was cut off at the token limit" -- ping $A --model length:$b
	t "$b: --json on error" 5 '"kind": "server"' "HTTP 500" -- ping $A --model err500:$b --retries 0 --json
	t "$b: length stop in --json" 0 '"stop": "length"' "" -- ping $A --model length:$b --json
	t "$b: server that ignores stream: true" 0 "^Hello from $b! You said: ping$" "1 attempt$" -- ping $A --model nostream:$b
	t "$b: 9 MiB body passes the cap" 5 "" "passed the cap" -- ping $A --model big:$b --no-stream
	t "$b: 9 MiB stream passes the cap" 5 "" "passed the cap" -- ping $A --model big:$b
	t "$b: thinking is not in the reply" 0 "^Hello from $b! You said: ping$" "" -- ping $A --model thinking:$b
	grep -q "think" "$tmp/out" && report "$b: no thinking text" "thinking leaked into the reply"
	MY_TEST_KEY=$KEY t "$b: key from --api-key-env" 0 "You said: ping" "" -- ping $A --model ok --api-key-env MY_TEST_KEY
	true
done 2>&1

# keys and connections
OPENAI_API_KEY= ANTHROPIC_API_KEY= t "no key for api.openai.com" 4 "" "^error: no API key: set OPENAI_API_KEY or use --api-key-env NAME$" -- ping
OPENAI_API_KEY= ANTHROPIC_API_KEY= t "no key for anthropic" 4 "" "no API key: set ANTHROPIC_API_KEY" -- ping --backend anthropic
t "named key variable unset" 4 "" "the variable 'NOPE_KEY' \(--api-key-env\) is not set" -- ping --api-key-env NOPE_KEY --base-url "$URL"
OPENAI_API_KEY= t "own server without a key" 4 "" "refused the API key" -- ping --base-url "$URL" --model ok
grep -q '"had_key": false' "$tmp/log" && report "no Authorization header without a key" "" || report "no Authorization header without a key" "a key was sent"
t "unreachable URL" 5 "" "^error: cannot connect to http://127.0.0.1:9/v1: Connection refused$" -- ping --base-url http://127.0.0.1:9/v1 --retries 0
t "unreachable URL is retried" 5 "" "Connection refused \(after 2 attempts\)" -- ping --base-url http://127.0.0.1:9/v1 --retries 1
t "anthropic base URL without /v1" 0 "^Hello from anthropic" "" -- ping --backend anthropic --base-url "http://127.0.0.1:$PORT" --model ok
t "claude model picks anthropic" 0 "^Hello from anthropic" "^anthropic " -- ping --base-url "$URL" --model claude-ok
t "bad URL scheme" 2 "" "must start with http:// or https://" -- ping --base-url ftp://x

# flags
t "bad --temperature" 2 "" "option '--temperature' needs a number" -- ping --temperature abc
t "out of range --temperature" 2 "" "--temperature must be 0 to 2" -- ping --temperature 3
t "bad --retries" 2 "" "--retries must be 0 to 20" -- ping --retries -1
t "unknown backend" 2 "" "unknown backend 'nope'" -- ping --backend nope
t "unknown flag" 2 "" "unknown option '--nope'" -- ping --nope
t "two prompts" 2 "" "give the prompt as one argument" -- ping pong --llm-cmd cat

# config file, environment, flags: in that order
cfg="$XDG_CONFIG_HOME/cutegen/config.json"
mkdir -p "$(dirname "$cfg")"
cat >"$cfg" <<JSON
{"llm": {"backend": "openai", "base_url": "$URL", "model": "notfound:cfg", "retries": 0},
 "prices": {"ok": {"in": 1000000, "out": 2000000, "cached": 500000}, "len*": {"in": 100000}},
 "other_module": {"ignored": true}}
JSON
t "config file is read" 5 "" "HTTP 404.*notfound:cfg" -- ping
CUTEGEN_MODEL=ok t "environment beats the file" 0 "^Hello from openai" "" -- ping
CUTEGEN_MODEL=ok t "flags beat the environment" 0 "" "cut off" -- ping --model length:cfg
# "ping" costs 11 in (2 of them cached, at 0.5) + 9 out (at 2): 9 + 1 + 18 = 28 USD
CUTEGEN_MODEL=ok t "cost from the price table" 0 "" '11 in \(2 cached\) \+ 9 out tokens, \$28\.0000' -- ping
CUTEGEN_MODEL=ok t "cost in --json" 0 '"cost_usd": 28' "" -- ping --json
CUTEGEN_MODEL=length:x t "price by model prefix" 0 "" '11 in \(2 cached\) \+ [0-9]+ out tokens, \$1\.1000' -- ping
CUTEGEN_CONFIG=$tmp/none.json t "CUTEGEN_CONFIG that does not exist" 3 "" "cannot read config '.*none.json'" -- ping
echo '{"llm": {"modle": "x"}}' >"$tmp/typo.json"
CUTEGEN_CONFIG=$tmp/typo.json t "unknown key in the config" 3 "" "unknown key 'llm.modle'" -- ping
echo '{"llm": {"api_key": "sk-x"}}' >"$tmp/key.json"
CUTEGEN_CONFIG=$tmp/key.json t "a key in the config file is refused" 3 "" "keys do not go in the file" -- ping
echo '{"llm": ' >"$tmp/broken.json"
CUTEGEN_CONFIG=$tmp/broken.json t "broken config JSON" 3 "" "config '.*broken.json' line 2" -- ping
CUTEGEN_LLM_RETRIES=x t "bad number in the environment" 2 "" "CUTEGEN_LLM_RETRIES must be an integer" -- ping
rm -f "$cfg"

# cmd backend
t "cmd: the prompt on stdin, stdout is the reply" 0 "^HELLO WORLD$" "^cmd: 0 in" -- "hello world" --llm-cmd 'tr a-z A-Z'
t "cmd: system prompt rendered as sections" 0 "^\[SYSTEM\]$" "" -- "hello" --system "be brief" --llm-cmd 'tr a-z A-Z'
CUTEGEN_LLM_CMD='rev' t "cmd: from CUTEGEN_LLM_CMD" 0 "^olleh$" "" -- hello
t "cmd: nonzero exit quotes stderr" 5 "" "the model command 'echo oops >&2; exit 3' exited with 3: oops" -- hello --llm-cmd 'echo oops >&2; exit 3'
t "cmd: deadline" 5 "" "did not finish within 1 s" -- hello --llm-cmd 'sleep 5' --timeout 1
faster_than 4000 && report "cmd: the deadline held" "" || report "cmd: the deadline held" "took $ELAPSED_MS ms"
t "cmd: sees the model" 0 "^m1$" "" -- hello --llm-cmd 'echo $CUTEGEN_LLM_MODEL' --model m1
head -c 2000000 /dev/zero | tr '\0' a >"$tmp/bigprompt"
"$CUTEGEN" llm - --llm-cmd 'echo early' <"$tmp/bigprompt" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && grep -q '^early$' "$tmp/out" && report "cmd: a command that ignores stdin" "" || report "cmd: a command that ignores stdin" "exit $rc"
echo "from stdin" | "$CUTEGEN" llm - --llm-cmd cat >"$tmp/out" 2>"$tmp/err"
grep -q '^from stdin$' "$tmp/out" && report "prompt read from stdin with '-'" "" || report "prompt read from stdin with '-'" "wrong output"

# record and replay
t "record a reply" 0 "^Hello from openai" "" -- ping --base-url "$URL" --model ok --record "$tmp/rec.jsonl"
t "record another" 0 "^Hello from anthropic" "" -- pong --backend anthropic --base-url "$URL" --model ok --record "$tmp/rec.jsonl"
[ "$(wc -l <"$tmp/rec.jsonl")" -eq 2 ] && ! grep -qF "$KEY" "$tmp/rec.jsonl" && report "transcript has 2 lines and no key" "" || report "transcript has 2 lines and no key" "$(cat "$tmp/rec.jsonl")"
t "replay the first reply" 0 "^Hello from openai! You said: ping$" "^replay ok: [0-9]+ in \(2 cached\)" -- anything --replay "$tmp/rec.jsonl"
printf '\n{"reply": "one", "stop": "length", "usage": {"in": 5, "out": 7}}\n' >"$tmp/t1.jsonl"
t "replay a hand-written transcript" 0 "^one$" "5 in \+ 7 out.*" -- x --replay "$tmp/t1.jsonl"
grep -q "cut off" "$tmp/err" && report "replay keeps the stop reason" "" || report "replay keeps the stop reason" "no warning"
echo '{"error": {"kind": "rate_limited", "message": "recorded 429"}}' >"$tmp/t2.jsonl"
t "replay a recorded error" 5 "" "recorded 429" -- x --replay "$tmp/t2.jsonl"
: >"$tmp/t3.jsonl"
t "replay an empty transcript" 3 "" "transcript '.*t3.jsonl' has no replies" -- x --replay "$tmp/t3.jsonl"
echo '{"reply": 3}' >"$tmp/t4.jsonl"
t "replay a malformed transcript" 3 "" "t4.jsonl' line 1" -- x --replay "$tmp/t4.jsonl"
t "replay a missing transcript" 3 "" "cannot read transcript" -- x --replay "$tmp/none.jsonl"

# doctor: takes the LLM flags, probes the chosen backend for real, exits nonzero on a bad one
# d NAME WANT_RC STDOUT_ERE STDERR_ERE -- ARGS...: runs `cutegen doctor ARGS` with both keys set.
d() {
	local name=$1 want=$2 outre=$3 errre=$4
	shift 5
	OPENAI_API_KEY=${OPENAI_API_KEY-$KEY} ANTHROPIC_API_KEY=${ANTHROPIC_API_KEY-$KEY} \
		timeout 120 "$CUTEGEN" doctor "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	local rc=$? why=""
	# any0: doctor's own exit (0, or EXIT_ENV when this machine cannot compile)
	if [ "$want" = any0 ]; then [ $rc -eq 0 ] || [ $rc -eq 4 ] || why="exit $rc, expected 0"
	elif [ "$rc" -ne "$want" ]; then why="exit $rc, expected $want"; fi
	[ -z "$outre" ] || grep -Eq -- "$outre" "$tmp/out" || why="$why; stdout lacks /$outre/"
	[ -z "$errre" ] || grep -Eq -- "$errre" "$tmp/err" || why="$why; stderr lacks /$errre/"
	if grep -qF -- "$KEY" "$tmp/out" "$tmp/err"; then why="$why; the API key is in the output"; fi
	report "$name" "$why"
}
n0=$(requests doctor-ok)
d "doctor: --base-url and -m probe the server" any0 "probe: openai model doctor-ok at $URL answered" "" -- --base-url "$URL" -m doctor-ok
[ "$(requests doctor-ok)" -eq $((n0 + 1)) ] && report "doctor: the probe is one real request" "" || report "doctor: the probe is one real request" "$(requests doctor-ok) requests"
d "doctor: anthropic backend probed" any0 "probe: anthropic model doctor-ok:a at http://127.0.0.1:$PORT answered" "" -- --backend anthropic --base-url "http://127.0.0.1:$PORT" -m doctor-ok:a
d "doctor: a refused key fails with exit 4 and says what to check" 4 "probe: openai model auth at $URL failed: .*(OPENAI_API_KEY|key)" "model backend does not work" -- --base-url "$URL" -m auth
d "doctor: a model the server lacks fails" 5 "failed: .*does not exist" "" -- --base-url "$URL" -m notfound
OPENAI_API_KEY= ANTHROPIC_API_KEY= d "doctor: -m alone with no key for the public API: exit 4, says which variable to set" 4 "probe: the backend failed: no API key: set OPENAI_API_KEY" "" -- -m gpt-5
d "doctor: an unknown backend is a usage error" 2 "probe: the backend failed: unknown backend 'nope'" "model backend does not work" -- --backend nope
d "doctor: --llm-cmd runs the command once" any0 "probe: cmd answered" "" -- --llm-cmd "echo OK >>$tmp/doctor-cmd"
[ "$(wc -l <"$tmp/doctor-cmd")" -eq 1 ] && report "doctor: the command ran once" "" || report "doctor: the command ran once" "ran $(wc -l <"$tmp/doctor-cmd") times"
d "doctor: a failing command fails doctor" 5 "probe: cmd failed: .*exited with 3" "" -- --llm-cmd 'exit 3'
d "doctor --json: the probe's result" any0 '"probe"' "" -- --base-url "$URL" -m doctor-ok --json
python3 -c "import json,sys; p=json.load(open(sys.argv[1]))['llm']['probe']; assert p['ok'] and p['backend']=='openai' and p['model']=='doctor-ok', p" "$tmp/out" && report "doctor --json: probe ok, backend and model" "" || report "doctor --json: probe ok, backend and model" "bad json"

"$CUTEGEN" help llm >"$tmp/out" 2>&1 && grep -q -- "--llm-cmd" "$tmp/out" && report "help page" "" || report "help page" "missing"

exit $fail
