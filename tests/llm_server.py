#!/usr/bin/env python3
"""A fake model server on loopback for the llm end-to-end tests.

Speaks both wire protocols as the real services do: OpenAI chat completions
(POST /v1/chat/completions, JSON or SSE "data: {chunk}" ... "data: [DONE]" with usage in
the last chunk) and Anthropic messages (POST /v1/messages, JSON or SSE named events
message_start ... message_stop). Checks auth and the request's shape like the real ones.

The model name picks a scenario: "SCENARIO" or "SCENARIO:tag" (the tag keeps separate
request counters, so "retry429:a" and "retry429:b" each fail once):
  ok, length, retry429, flaky500, err500, overloaded (529 once), auth, leak (401 quoting
  the key), bad, notfound, drop / droponce (connection cut mid-stream), trunc / trunconce
  (stream ends cleanly without its end marker), slow (sleeps 5 s), malformed, streamerror
  (an error event inside a 200 stream, once), nostream (ignores "stream": true), big
  (a reply of 9 MiB), thinking (anthropic thinking deltas before the text), kernel (with
  $FAKE_KERNEL set: a fenced kernel, new each time), stall (headers, then silence for 30 s),
  afterN-SCENARIO (N kernel replies, then SCENARIO), script (with $FAKE_REPLIES naming a
  directory: request N is answered with its reply-N.txt, as tests/data/loop/model.py does).

KEY "none" serves without a key, as a local vLLM, SGLang, llama.cpp or Ollama server does.
GET .../models lists the model "local-model" (auth checked like the POSTs).

usage: llm_server.py PORT_FILE LOG_FILE [KEY]
Binds 127.0.0.1 on a free port, writes it to PORT_FILE, logs one JSON line per request to
LOG_FILE (the key itself is never logged), and exits by itself after 120 s.
"""
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LIFETIME_S = float(os.environ.get("LLM_SERVER_LIFETIME", "120"))
KEY = sys.argv[3] if len(sys.argv) > 3 else "sk-test-SECRET-0123456789"
# With $FAKE_KERNEL naming a file, "kernel" (and the faults' good replies) answer with it in a
# fenced block, one new comment per request so that every kernel is a new one.
KERNEL = open(os.environ["FAKE_KERNEL"]).read() if os.environ.get("FAKE_KERNEL") else ""
REPLIES = os.environ.get("FAKE_REPLIES", "")
counts = {}
lock = threading.Lock()
log_lock = threading.Lock()


def count(model):
    with lock:
        counts[model] = counts.get(model, 0) + 1
        return counts[model]


def reply_text(body, proto):
    msgs = body.get("messages", [])
    last = msgs[-1]["content"] if msgs else ""
    if isinstance(last, list):
        last = " ".join(b.get("text", "") for b in last if isinstance(b, dict))
    return "Hello from %s! You said: %s" % (proto, last)


def pieces(text, n=4):
    if len(text) > (1 << 20):
        n = 1 << 16
    return [text[i:i + n] for i in range(0, len(text), n)] or [""]


def system_text(body):
    sy = body.get("system", "") or ""
    if isinstance(sy, list):
        return "".join(b.get("text", "") for b in sy if isinstance(b, dict))
    return sy


def prompt_tokens(body):
    chars = sum(len(m.get("content", "")) for m in body.get("messages", [])
                if isinstance(m.get("content"), str))
    chars += len(system_text(body))
    return chars // 4 + 10


# The "script" scenario caches prompts as the services do (4 characters a token here):
# OpenAI automatically, the longest prefix shared with an earlier request of the same model,
# in 128-token steps from 1024 tokens on; Anthropic the system blocks up to the last one
# marked cache_control, read when an earlier request wrote the same text, else written.
seen_prompts = {}
anthropic_cache = {}


def openai_cached(model, body):
    text = "".join("%s\n%s\n" % (m.get("role"), m.get("content")) for m in body.get("messages", []))
    best = 0
    with lock:
        for prev in seen_prompts.get(model, []):
            n = 0
            for a, b in zip(prev, text):
                if a != b:
                    break
                n += 1
            best = max(best, n)
        seen_prompts.setdefault(model, []).append(text)
    tokens = best // 4
    return tokens // 128 * 128 if tokens >= 1024 else 0


def anthropic_cached(model, body):
    """(reads, writes) of the cache_control-marked system prefix."""
    sy = body.get("system")
    if not isinstance(sy, list):
        return 0, 0
    upto = [i for i, b in enumerate(sy) if isinstance(b, dict) and b.get("cache_control")]
    if not upto:
        return 0, 0
    prefix = "".join(b.get("text", "") for b in sy[:upto[-1] + 1])
    with lock:
        hit = prefix in anthropic_cache.setdefault(model, set())
        anthropic_cache[model].add(prefix)
    return (len(prefix) // 4, 0) if hit else (0, len(prefix) // 4)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-llm/1.0"

    def log_message(self, fmt, *args):
        pass

    # ---- plumbing ----
    def send_json(self, status, obj, extra=None):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header(self.rid_header, "req_%d" % int(time.time() * 1000))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def error(self, status, etype, message, extra=None):
        if self.proto == "anthropic":
            body = {"type": "error", "error": {"type": etype, "message": message}}
        else:
            body = {"error": {"message": message, "type": etype, "param": None, "code": None}}
        self.send_json(status, body, extra)

    def start_stream(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header(self.rid_header, "req_stream")
        self.end_headers()

    def chunk(self, data):
        if isinstance(data, str):
            data = data.encode()
        if not data:
            return
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def end_chunks(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def event(self, data, name=None, split=True):
        text = ("event: %s\n" % name if name else "") + "data: %s\n\n" % data
        if split and len(text) > 8:
            # send each event in two pieces: the client must join them
            cut = len(text) // 2
            self.chunk(text[:cut])
            self.chunk(text[cut:])
        else:
            self.chunk(text)

    def cut_connection(self):
        self.wfile.flush()
        self.close_connection = True
        try:
            import socket
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    # ---- request handling ----
    def key_check(self):
        if self.proto == "openai":
            got = self.headers.get("Authorization")
            want = "Bearer " + KEY
        else:
            got = self.headers.get("x-api-key")
            want = KEY
        if KEY == "none":
            return True, got is not None
        return got == want, got is not None

    def do_GET(self):
        self.proto = "anthropic" if self.headers.get("anthropic-version") else "openai"
        self.rid_header = "x-request-id"
        key_ok, had_key = self.key_check()
        with log_lock, open(LOG, "a") as f:
            f.write(json.dumps({"method": "GET", "path": self.path, "proto": self.proto,
                                "key_ok": key_ok, "had_key": had_key}) + "\n")
        if not self.path.endswith("/models"):
            self.error(404, "invalid_request_error", "GET is not served here")
            return
        if not key_ok:
            self.error(401, "authentication_error", "Incorrect API key provided.")
            return
        self.send_json(200, {"object": "list", "data": [
            {"id": "local-model", "object": "model", "type": "model", "owned_by": "test"}]})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = self.path
        if path.endswith("/chat/completions"):
            self.proto, self.rid_header = "openai", "x-request-id"
        elif path.endswith("/messages"):
            self.proto, self.rid_header = "anthropic", "request-id"
        else:
            self.proto, self.rid_header = "openai", "x-request-id"
            self.error(404, "invalid_request_error", "Invalid URL (POST %s)" % path)
            return
        key_ok, had_key = self.key_check()
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        model = body.get("model", "") if isinstance(body, dict) else ""
        n = count(model)
        entry = {"path": path, "proto": self.proto, "model": model, "n": n, "key_ok": key_ok,
                 "had_key": had_key, "body": body,
                 "anthropic_version": self.headers.get("anthropic-version")}
        with log_lock, open(LOG, "a") as f:
            f.write(json.dumps(entry) + "\n")
        if not isinstance(body, dict):
            self.error(400, "invalid_request_error", "We could not parse the JSON body of your request.")
            return
        scen = model.split(":")[0]
        if scen.startswith("after") and "-" in scen:
            # "afterN-SCENARIO": N good kernel replies, then SCENARIO
            first, rest = scen[5:].split("-", 1)
            scen = "kernel" if n <= int(first) else rest
        if scen == "leak":
            self.error(401, "authentication_error", "Incorrect API key provided: %s" % self.headers.get("Authorization", self.headers.get("x-api-key", "")))
            return
        if not key_ok or scen == "auth":
            if self.proto == "openai":
                self.error(401, "invalid_request_error", "Incorrect API key provided.")
            else:
                self.error(401, "authentication_error", "invalid x-api-key")
            return
        problem = self.check_shape(body)
        if problem:
            self.error(400, "invalid_request_error", problem)
            return
        stream = bool(body.get("stream"))
        if scen == "notfound":
            if self.proto == "openai":
                self.error(404, "invalid_request_error", "The model `%s` does not exist or you do not have access to it." % model)
            else:
                self.error(404, "not_found_error", "model: %s" % model)
            return
        if scen == "bad":
            self.error(400, "invalid_request_error", "max_tokens is too large: 999999999. This model supports at most 128000 completion tokens.")
            return
        if scen == "retry429" and n == 1:
            self.error(429, "rate_limit_error" if self.proto == "anthropic" else "requests",
                       "Rate limit reached for requests. Please try again in 1s.",
                       {"Retry-After": "1"})
            return
        if scen == "flaky500" and n == 1:
            self.error(500, "api_error" if self.proto == "anthropic" else "server_error",
                       "The server had an error while processing your request.")
            return
        if scen == "err500":
            self.error(500, "api_error" if self.proto == "anthropic" else "server_error",
                       "The server had an error while processing your request.")
            return
        if scen == "overloaded" and n == 1:
            self.error(529, "overloaded_error", "Overloaded")
            return
        if scen == "slow":
            time.sleep(5)
        if scen == "malformed":
            if stream:
                self.start_stream()
                self.event("{this is not json", split=False)
                self.end_chunks()
            else:
                data = b"<html>this is not json {"
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            return
        text = reply_text(body, self.proto)
        self.cache = None
        if scen == "script":
            self.cache = openai_cached(model, body) if self.proto == "openai" else anthropic_cached(model, body)
        if scen in ("kernel", "drop", "droponce", "trunc", "trunconce", "slow", "stall") and KERNEL:
            text = "Change: try %d\n```cuda\n// try %d\n%s```\n" % (n, n, KERNEL)
        if scen == "script" and REPLIES:
            with open(os.path.join(REPLIES, "reply-%d.txt" % n)) as f:
                text = f.read()
        if scen == "stall":
            # headers and a first piece, then nothing until the client gives up
            self.start_stream()
            time.sleep(30)
            return
        if scen == "big":
            text = "x" * (9 << 20)
        stop = "length" if scen == "length" else None
        if stream and scen != "nostream":
            if self.proto == "openai":
                self.stream_openai(body, model, text, stop, scen, n)
            else:
                self.stream_anthropic(body, model, text, stop, scen, n)
        else:
            if self.proto == "openai":
                self.send_json(200, self.openai_body(body, model, text, stop))
            else:
                self.send_json(200, self.anthropic_body(body, model, text, stop))

    def check_shape(self, body):
        if not isinstance(body.get("model"), str) or not body["model"]:
            return "you must provide a model parameter"
        msgs = body.get("messages")
        if not isinstance(msgs, list) or not msgs:
            return "'messages' must be a non-empty array"
        for m in msgs:
            if not isinstance(m, dict) or m.get("role") not in ("system", "user", "assistant", "developer"):
                return "invalid role in messages"
            if not isinstance(m.get("content"), str):
                return "content must be a string"
        if self.proto == "anthropic":
            if self.headers.get("anthropic-version") != "2023-06-01":
                return "anthropic-version header is required"
            if not isinstance(body.get("max_tokens"), int):
                return "max_tokens: Field required"
            if any(m["role"] == "system" for m in msgs):
                return "messages: Unexpected role \"system\". Use the top-level `system` parameter."
            sy = body.get("system")
            if sy is not None and not isinstance(sy, str) and not (
                    isinstance(sy, list) and all(isinstance(b, dict) and b.get("type") == "text"
                                                 and isinstance(b.get("text"), str) for b in sy)):
                return "system: Input should be a valid string or a list of text blocks"
            if isinstance(sy, list) and any(b.get("cache_control") not in (None, {"type": "ephemeral"}) for b in sy):
                return "system.0.cache_control: Input tag does not match any of the expected tags"
        else:
            if body.get("stream") and body.get("stream_options") != {"include_usage": True}:
                return "expected stream_options.include_usage"
        t = body.get("temperature")
        if t is not None and not (0 <= t <= 2):
            return "temperature out of range"
        return None

    # ---- OpenAI ----
    def openai_body(self, body, model, text, stop):
        return {
            "id": "chatcmpl-1", "object": "chat.completion", "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text, "refusal": None},
                         "logprobs": None, "finish_reason": stop or "stop"}],
            "usage": {"prompt_tokens": prompt_tokens(body), "completion_tokens": len(pieces(text)),
                      "total_tokens": prompt_tokens(body) + len(pieces(text)),
                      "prompt_tokens_details": {"cached_tokens": 2 if self.cache is None else self.cache, "audio_tokens": 0},
                      "completion_tokens_details": {"reasoning_tokens": 0}},
            "system_fingerprint": "fp_test",
        }

    def stream_openai(self, body, model, text, stop, scen, n):
        def chunk(delta, finish=None, usage=False):
            c = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
                 "model": model, "system_fingerprint": "fp_test",
                 "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]}
            if usage:
                c["choices"] = []
                c["usage"] = {"prompt_tokens": prompt_tokens(body), "completion_tokens": len(pieces(text)),
                              "total_tokens": prompt_tokens(body) + len(pieces(text)),
                              "prompt_tokens_details": {"cached_tokens": 2 if self.cache is None else self.cache}}
            else:
                c["usage"] = None
            return json.dumps(c)
        self.start_stream()
        self.chunk(": keep-alive comment\n\n")
        self.event(chunk({"role": "assistant", "content": "", "refusal": None}))
        parts = pieces(text)
        for i, p in enumerate(parts):
            if scen in ("drop", "droponce") and i == 3 and (scen == "drop" or n == 1):
                self.cut_connection()
                return
            if scen == "streamerror" and i == 3 and n == 1:
                self.event(json.dumps({"error": {"message": "The server had an error while processing your request.", "type": "server_error"}}))
                self.end_chunks()
                return
            self.event(chunk({"content": p}))
        if scen in ("trunc", "trunconce") and (scen == "trunc" or n == 1):
            self.end_chunks()
            return
        self.event(chunk({}, stop or "stop"))
        self.event(chunk({}, usage=True))
        self.event("[DONE]")
        self.end_chunks()

    # ---- Anthropic ----
    def anthropic_body(self, body, model, text, stop):
        return {
            "id": "msg_1", "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "text", "text": text}],
            "stop_reason": "max_tokens" if stop else "end_turn", "stop_sequence": None,
            "usage": self.anthropic_usage(body, text),
        }

    def anthropic_usage(self, body, text, out=None):
        reads, writes = (2, 0) if self.cache is None else self.cache
        total = prompt_tokens(body)
        if self.cache is not None:
            total -= reads + writes  # input_tokens counts what the cache did not serve
        return {"input_tokens": total, "output_tokens": len(pieces(text)) if out is None else out,
                "cache_read_input_tokens": reads, "cache_creation_input_tokens": writes}

    def stream_anthropic(self, body, model, text, stop, scen, n):
        ev = lambda name, obj: self.event(json.dumps(obj), name)
        self.start_stream()
        ev("message_start", {"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": model,
            "stop_reason": None, "stop_sequence": None,
            "usage": self.anthropic_usage(body, text, 1)}})
        idx = 0
        if scen == "thinking":
            ev("content_block_start", {"type": "content_block_start", "index": 0,
                                       "content_block": {"type": "thinking", "thinking": ""}})
            ev("content_block_delta", {"type": "content_block_delta", "index": 0,
                                       "delta": {"type": "thinking_delta", "thinking": "Let me think."}})
            ev("content_block_delta", {"type": "content_block_delta", "index": 0,
                                       "delta": {"type": "signature_delta", "signature": "sig"}})
            ev("content_block_stop", {"type": "content_block_stop", "index": 0})
            idx = 1
        ev("content_block_start", {"type": "content_block_start", "index": idx,
                                   "content_block": {"type": "text", "text": ""}})
        ev("ping", {"type": "ping"})
        for i, p in enumerate(pieces(text)):
            if scen in ("drop", "droponce") and i == 3 and (scen == "drop" or n == 1):
                self.cut_connection()
                return
            if scen == "streamerror" and i == 3 and n == 1:
                ev("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
                self.end_chunks()
                return
            ev("content_block_delta", {"type": "content_block_delta", "index": idx,
                                       "delta": {"type": "text_delta", "text": p}})
        ev("content_block_stop", {"type": "content_block_stop", "index": idx})
        ev("message_delta", {"type": "message_delta",
                             "delta": {"stop_reason": "max_tokens" if stop else "end_turn", "stop_sequence": None},
                             "usage": {"output_tokens": len(pieces(text))}})
        if scen in ("trunc", "trunconce") and (scen == "trunc" or n == 1):
            self.end_chunks()
            return
        ev("message_stop", {"type": "message_stop"})
        self.end_chunks()


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # clients that hang up (deadlines, caps) are part of the tests, not failures
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


def main():
    global LOG
    port_file, LOG = sys.argv[1], sys.argv[2]
    srv = Server(("127.0.0.1", 0), Handler)
    threading.Timer(LIFETIME_S, lambda: os._exit(0)).start()
    tmp = port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(tmp, port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
