#!/usr/bin/env python3
"""pyroscope_stub.py - a stand-in for a Pyroscope server's ingest API, for push_test.sh.

    pyroscope_stub.py DIR [--mode MODE] [--port PORT]

Listens on 127.0.0.1 on a free port (or PORT), writes the port to DIR/port once it
listens, and serves POST /ingest?name=APP{k=v,...}&from=S&until=S&format=pprof
as documented for Pyroscope: the body is the pprof itself, or a
multipart/form-data form whose `profile` field holds it. Each request it
accepts is saved as DIR/req-N.pb.gz (the profile) and DIR/req-N.json (path,
query, headers, how the body came: raw or multipart). Requests it answers with
an error are counted in DIR/failed.

MODE (what the server answers):
  ok       200 to every valid request (a malformed one gets 400 with a reason)
  500-1    500 to the first request, then as ok
  400      400 "invalid profile: piano test refusal" to every request
  slow     sleeps 5 s before answering (a client timeout is shorter)
DIR/mode, when present, overrides --mode at each request.
"""
import email.parser
import email.policy
import gzip
import json
import os
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIR = sys.argv[1]
OPTS = dict(zip(sys.argv[2::2], sys.argv[3::2]))
MODE = OPTS.get("--mode", "ok")
lock = threading.Lock()
counts = {"requests": 0, "saved": 0, "failed": 0}


def mode():
    try:
        with open(os.path.join(DIR, "mode")) as f:
            return f.read().strip()
    except OSError:
        return MODE


def profile_of(ctype, body):
    """The pprof in the body: raw, or the `profile` field of a multipart form."""
    if ctype.startswith("multipart/form-data"):
        msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + body)
        if not msg.is_multipart():
            raise ValueError("multipart body without parts")
        for part in msg.iter_parts():
            if part.get_param("name", header="content-disposition") == "profile":
                return part.get_payload(decode=True), "multipart"
        raise ValueError("no 'profile' field in the form")
    return body, "raw"


def check_query(q):
    for k in ("name", "from", "until"):
        if k not in q:
            raise ValueError("missing query parameter " + k)
    if q.get("format", ["folded"])[0] != "pprof":
        raise ValueError("format is not pprof")
    name = q["name"][0]
    if "{" not in name or not name.endswith("}"):
        raise ValueError("name is not APP{labels}: " + name)
    if int(q["from"][0]) > int(q["until"][0]):
        raise ValueError("from after until")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def answer(self, code, text):
        body = (text + "\n").encode()
        self.send_response(code)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def fail(self, code, text):
        with lock:
            counts["failed"] += 1
            with open(os.path.join(DIR, "failed"), "w") as f:
                f.write(str(counts["failed"]))
        self.answer(code, text)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        with lock:
            counts["requests"] += 1
            n = counts["requests"]
        m = mode()
        if m == "slow":
            time.sleep(5)
        if m == "400":
            return self.fail(400, "invalid profile: piano test refusal")
        if m == "500-1" and n == 1:
            return self.fail(500, "internal error: try later")
        url = urllib.parse.urlsplit(self.path)
        if url.path != "/ingest":
            return self.fail(404, "not found: " + url.path)
        q = urllib.parse.parse_qs(url.query)
        try:
            check_query(q)
            profile, how = profile_of(self.headers.get("Content-Type", ""), body)
            gzip.decompress(profile)
        except (ValueError, OSError, EOFError) as e:
            return self.fail(400, "bad request: %s" % e)
        with lock:
            counts["saved"] += 1
            k = counts["saved"]
        base = os.path.join(DIR, "req-%d" % k)
        with open(base + ".pb.gz", "wb") as f:
            f.write(profile)
        meta = {"path": url.path, "query": {a: b[0] for a, b in q.items()}, "body": how,
                "tenant": self.headers.get("X-Scope-OrgID")}
        with open(base + ".json.tmp", "w") as f:
            json.dump(meta, f)
        os.rename(base + ".json.tmp", base + ".json")   # whole once seen
        self.answer(200, "")


def main():
    ThreadingHTTPServer.allow_reuse_address = True
    srv = ThreadingHTTPServer(("127.0.0.1", int(OPTS.get("--port", 0))), Handler)
    srv.handle_error = lambda request, address: None   # a client that timed out and left
    srv.daemon_threads = True
    with open(os.path.join(DIR, "port.tmp"), "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(os.path.join(DIR, "port.tmp"), os.path.join(DIR, "port"))
    srv.serve_forever()


if __name__ == "__main__":
    main()
