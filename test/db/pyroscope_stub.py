#!/usr/bin/env python3
"""pyroscope_stub.py - a stand-in for a Pyroscope server's ingestion, for push_test.sh
and the push_* e2e cases.

    pyroscope_stub.py DIR [--mode MODE] [--port PORT] [--auth USER:PASS]

Listens on 127.0.0.1 on a free port (or PORT), writes the port to DIR/port once it
listens. It follows grafana/pyroscope at commit 3fe6a457a32004efc46da819cbc114472d07415e
(Aug 2026), its default limits (pkg/validation/limits.go), in these files:

  POST /push.v1.PusherService/Push  (connect, application/proto: push.v1.PushRequest)
      pkg/distributor/distributor.go  Push, PushBatch, pushSeries: the tenant (401),
      each sample's pprof decoded (gzip or raw; one that does not decode: 500, as a
      plain Go error becomes connect's "unknown"; past 4 MiB: 400), then
      ValidateProfile and ValidateLabels (400 invalid_argument), then the backend
      (503 unavailable in MODE backend-down).
  POST /ingest?name=APP{k=v,...}&from=&until=&format=...
      pkg/ingester/pyroscope/ingest_handler.go, ingest_adapter.go,
      pkg/og/convert/pprof/profile.go: the name parsed first (labelset.Parse: 400),
      then the body dispatched in the handler's order: format=pprof takes the WHOLE
      body as the pprof (a multipart body then fails to decode), other formats this
      stub does not decode (422); no format and a multipart/form-data body: its
      `profile` field. Then, as the adapter answers every error after the body is
      read: 422, a rate limit excepted (429) -- decoding, the tenant, the
      validation, and the backend (MODE backend-down) alike. time_nanos 0 (or in
      1970) is the `from` parameter (fixTime). Labels: __name__ from the sample
      types (metricName), __delta__=false, pyroscope_spy, service_name=APP, the
      name's labels.
  Validation (pkg/validation/validate.go, api/model/labelset/validate.go, dskit's
  tenant.ValidTenantID):
      time_nanos > 0 outside (now - 1 h, now + 10 min); > 4 MiB uncompressed;
      > 16,000 samples; > 100 labels in a sample; a location or function id 0; a
      sample's value count not its sample types'; a string index out of the table;
      a sample type with '-'; a string that is not UTF-8; > 30 label names; a label
      name > 1024 or a value > 2048 bytes; an empty service_name; a label value not
      UTF-8; a label name outside [A-Za-z_][A-Za-z0-9_.]* (stricter than the
      server's default, -validation.disable-label-sanitization=true, which takes any
      UTF-8 name; the same as /ingest's labelset and the legacy rule); a duplicate
      label name; an app name (/ingest) outside [A-Za-z0-9_.\\-/]; X-Scope-OrgID
      (when given: a multi-tenant server) outside [A-Za-z0-9!\\-_.*'()], over 150
      bytes, "." or "..".

Each profile it accepts is saved as DIR/req-N.pb.gz (the pprof, gzipped) and
DIR/req-N.json (api: push or ingest, path, query, body: raw or multipart, labels as
the server stores them, time_nanos as it stores it, tenant, auth). Requests it
answers with an error are counted in DIR/failed, the last answer in DIR/last-error.

MODE (what the server does):
  ok            as the server, every check above
  500-1         500 to the first request, then as ok
  400           400 "invalid profile: piano test refusal" to every request
  backend-down  the backend fails: /ingest 422, Push 503 (after every check)
  slow          sleeps 5 s before answering (a client timeout is shorter)
DIR/mode, when present, overrides --mode at each request. --auth USER:PASS: 401
without that basic authentication.
"""
import base64
import email.parser
import email.policy
import gzip
import json
import os
import re
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIR = sys.argv[1]
OPTS = dict(zip(sys.argv[2::2], sys.argv[3::2]))
MODE = OPTS.get("--mode", "ok")
AUTH = OPTS.get("--auth")
lock = threading.Lock()
counts = {"requests": 0, "saved": 0, "failed": 0}

MAX_PROFILE_BYTES = 4 * 1024 * 1024
MAX_SAMPLES = 16000
MAX_SAMPLE_LABELS = 100
MAX_LABEL_NAMES = 30
MAX_NAME_LEN = 1024
MAX_VALUE_LEN = 2048
REJECT_OLDER_NS = 3600 * 10**9
REJECT_NEWER_NS = 600 * 10**9


class Refused(Exception):
    """A refusal: kind is 'validation' (400 on Push), 'decode' (500 on Push) or 'tenant' (401 on Push)."""
    def __init__(self, kind, msg):
        super().__init__(msg)
        self.kind = kind


def mode():
    try:
        with open(os.path.join(DIR, "mode")) as f:
            return f.read().strip()
    except OSError:
        return MODE


# ---- protobuf, as Go's generated UnmarshalVT reads it: a known field with the wrong wire type fails ----

def varint(b, i):
    v = shift = 0
    while True:
        if i >= len(b) or shift > 63:
            raise Refused("decode", "unexpected EOF")
        c = b[i]
        i += 1
        v |= (c & 0x7f) << shift
        if not c & 0x80:
            return v, i
        shift += 7


def fields(b, wire):
    """(field, value) of message b; wire: the wire type of each known field (0 or 2;
    'p': repeated scalar, varint or packed)."""
    i = 0
    while i < len(b):
        tag, i = varint(b, i)
        f, wt = tag >> 3, tag & 7
        if f == 0:
            raise Refused("decode", "proto: illegal tag 0")
        want = wire.get(f)
        if want == "p":
            if wt == 0:
                v, i = varint(b, i)
                yield f, v
                continue
            if wt != 2:
                raise Refused("decode", "proto: wrong wireType = %d for field %d" % (wt, f))
            n, i = varint(b, i)
            if i + n > len(b):
                raise Refused("decode", "unexpected EOF")
            j, end = i, i + n
            while j < end:
                v, j = varint(b, j)
                yield f, v
            i = end
            continue
        if want is not None and wt != want:
            raise Refused("decode", "proto: wrong wireType = %d for field %d" % (wt, f))
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i)
            if i + n > len(b):
                raise Refused("decode", "unexpected EOF")
            v, i = b[i:i + n], i + n
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise Refused("decode", "proto: illegal wireType %d" % wt)
        if i > len(b):
            raise Refused("decode", "unexpected EOF")
        if want is not None:
            yield f, v


PROFILE = {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 7: "p", 8: "p", 9: 0, 10: 0, 11: 2, 12: 0, 13: "p", 14: 0}


def decode_pprof(data):
    """pprof.RawFromBytesWithLimit: gzip or raw, at most 4 MiB uncompressed; returns (profile dict, raw size)."""
    if data[:2] == b"\x1f\x8b":
        try:
            d = gzip.GzipFile(fileobj=__import__("io").BytesIO(data))
            raw = d.read(MAX_PROFILE_BYTES + 1)
        except (OSError, EOFError) as e:
            raise Refused("decode", "gzip: %s" % e)
        if len(raw) > MAX_PROFILE_BYTES:
            raise Refused("validation", "uncompressed profile payload size exceeds limit of 4.2 MB")
    else:
        raw = data
    p = {"sample_type": [], "sample": [], "location": [], "function": [], "strings": [], "time_nanos": 0,
         "duration": 0, "refs": []}
    for f, v in fields(raw, PROFILE):
        if f in (1, 11):
            vt = dict(fields(v, {1: 0, 2: 0}))
            p["refs"] += [vt.get(1, 0), vt.get(2, 0)]
            if f == 1:
                p["sample_type"].append(vt.get(1, 0))
        elif f == 2:
            s = {"loc": [], "val": [], "labels": 0}
            for g, x in fields(v, {1: "p", 2: "p", 3: 2}):
                if g == 1:
                    s["loc"].append(x)
                elif g == 2:
                    s["val"].append(x)
                else:
                    s["labels"] += 1
            p["sample"].append(s)
        elif f == 4:
            p["location"].append(dict(fields(v, {1: 0, 2: 0, 3: 0, 4: 2, 5: 0})).get(1, 0))
        elif f == 5:
            fn = dict(fields(v, {1: 0, 2: 0, 3: 0, 4: 0, 5: 0}))
            p["function"].append(fn.get(1, 0))
            p["refs"] += [fn.get(2, 0), fn.get(3, 0), fn.get(4, 0)]
        elif f == 6:
            p["strings"].append(v)
        elif f == 9:
            p["time_nanos"] = v - (1 << 64) if v >= 1 << 63 else v
        elif f == 10:
            p["duration"] = v
        elif f in (13, 14):
            p["refs"].append(v)
    return p, len(raw)


def validate_profile(p, size, now_ns):
    """validation.ValidateProfile, in its order."""
    if not p["sample_type"]:
        raise Refused("validation", "empty profile")
    t = p["time_nanos"]
    if t > 0:
        # model.Time is milliseconds: t.After(now - 1h) && t.Before(now + 10m)
        tm, nm = t // 10**6, now_ns // 10**6
        if not (tm > nm - REJECT_OLDER_NS // 10**6 and tm < nm + REJECT_NEWER_NS // 10**6):
            raise Refused("validation", "profile is outside of ingestion window (profile timestamp: %s, the ingestion "
                          "window starts at %s and ends at %s)" % (
                              time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(tm / 1000)),
                              time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime((nm - REJECT_OLDER_NS // 10**6) / 1000)),
                              time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime((nm + REJECT_NEWER_NS // 10**6) / 1000))))
    else:
        p["time_nanos"] = now_ns
    if size > MAX_PROFILE_BYTES:
        raise Refused("validation", "the profile exceeds the size limit (max_profile_size_byte, actual: %d, limit: %d)"
                      % (size, MAX_PROFILE_BYTES))
    if len(p["sample"]) > MAX_SAMPLES:
        raise Refused("validation", "the profile exceeds the samples count limit (max_profile_stacktrace_samples, "
                      "actual: %d, limit: %d)" % (len(p["sample"]), MAX_SAMPLES))
    for s in p["sample"]:
        if s["labels"] > MAX_SAMPLE_LABELS:
            raise Refused("validation", "the profile exceeds the sample labels limit")
    if 0 in p["location"]:
        raise Refused("validation", "location id is 0")
    if 0 in p["function"]:
        raise Refused("validation", "function id is 0")
    for s in p["sample"]:
        if len(s["val"]) != len(p["sample_type"]):
            raise Refused("validation", "sample value length mismatch")
    if any(r >= len(p["strings"]) for r in p["refs"]):
        raise Refused("validation", "string table index out of range")
    for st in p["sample_type"]:
        if b"-" in p["strings"][st]:
            raise Refused("validation", "sample type contains -")
    for s in p["strings"]:
        try:
            s.decode("utf-8")
        except UnicodeDecodeError:
            raise Refused("validation", "invalid utf8 string hex: %s" % s.hex())


LEGACY_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")


def validate_labels(labels):
    """validation.ValidateLabels; labels: [(name bytes, value bytes)]."""
    if not labels:
        raise Refused("validation", "error at least one label pair is required per profile")
    labels = sorted(labels)
    if len(labels) > MAX_LABEL_NAMES:
        raise Refused("validation", "profile series has %d label names; limit %d" % (len(labels), MAX_LABEL_NAMES))
    d = dict(labels)
    if not d.get(b"__name__"):
        raise Refused("validation", "invalid labels: invalid metric name")
    if not d.get(b"service_name"):
        raise Refused("validation", "invalid labels: service name is not provided")
    last = None
    for n, v in labels:
        if len(n) > MAX_NAME_LEN:
            raise Refused("validation", "label name too long")
        if len(v) > MAX_VALUE_LEN:
            raise Refused("validation", "label value too long")
        try:
            name = n.decode("utf-8")
        except UnicodeDecodeError:
            name = None
        if name is None or not LEGACY_NAME.match(name):
            raise Refused("validation", "invalid labels: invalid label name %r" % n)
        try:
            v.decode("utf-8")
        except UnicodeDecodeError:
            raise Refused("validation", "invalid labels: invalid label value %r" % v)
        if n == last:
            raise Refused("validation", "duplicate label name: %r" % n)
        last = n


TENANT_CHARS = re.compile(r"^[A-Za-z0-9!\-_.*'()]*$")


def check_tenant(t):
    """dskit tenant.ValidTenantID (the header, when a multi-tenant server gets one)."""
    if t is None:
        return
    if not t or not TENANT_CHARS.match(t) or len(t.encode()) > 150 or t in (".", ".."):
        raise Refused("tenant", "tenant ID %r is not valid" % t)


def metric_name(p):
    """pprof.RawProfile.metricName (/ingest)."""
    types = [p["strings"][t].decode("utf-8", "replace") for t in p["sample_type"]]
    if "wall" in types:
        return "wall"
    for st in types:
        if "cpu" in st:
            return "process_cpu"
        if "alloc_" in st or "inuse_" in st or st in ("space", "objects"):
            return "memory"
        if "mutex_" in st:
            return "mutex"
        if "block_" in st:
            return "block"
        if "goroutines" in st:
            return "goroutines"
    return types[-1]


APP_CHARS = re.compile(r"^[A-Za-z0-9_.\-/]+$")
NAME_CHARS = re.compile(r"^[A-Za-z0-9_.]+$")


def parse_name(name):
    """labelset.Parse: APP{k=v,...}; app and keys checked, keys and values trimmed."""
    app, _, rest = name.partition("{")
    app = app.strip()
    if not app:
        raise ValueError("service name is required")
    if not APP_CHARS.match(app):
        raise ValueError("invalid service name: %s" % app)
    labels = {}
    rest = rest.split("}", 1)[0]
    for kv in rest.split(","):
        if "=" not in kv:
            continue
        k, v = kv.split("=", 1)
        k = k.strip()
        if k != "__name__":
            if not k:
                raise ValueError("label name is required")
            if not NAME_CHARS.match(k):
                raise ValueError("invalid label name: %s" % k)
        labels[k] = v.strip()
    return app, labels


def form_profile(ctype, body):
    """The `profile` field of a multipart form (loadPprofFromForm); prev_profile refused."""
    msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + body)
    if not msg.is_multipart():
        raise Refused("decode", "multipart: NextPart: EOF")
    prof = None
    for part in msg.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if name == "profile":
            prof = part.get_payload(decode=True)
        elif name == "prev_profile":
            raise Refused("decode", "unsupported client version. Please update github.com/grafana/pyroscope-go")
    return prof or b""


def push_request(body):
    """push.v1.PushRequest -> [(labels [(name, value)], [raw_profile...])]"""
    out = []
    for _, series in fields(body, {1: 2}):
        labels, samples = [], []
        for f, v in fields(series, {1: 2, 2: 2, 3: 2}):
            if f == 1:
                lp = dict(fields(v, {1: 2, 2: 2}))
                labels.append((lp.get(1, b""), lp.get(2, b"")))
            elif f == 2:
                samples.append(dict(fields(v, {1: 2, 2: 2})).get(1, b""))
        out.append((labels, samples))
    return out


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def answer(self, code, body, ctype="application/json"):
        if isinstance(body, str):
            body = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def fail(self, code, text, connect_code=None):
        with lock:
            counts["failed"] += 1
            with open(os.path.join(DIR, "failed"), "w") as f:
                f.write(str(counts["failed"]))
            with open(os.path.join(DIR, "last-error"), "w") as f:
                f.write("%d %s\n" % (code, text))
        if connect_code:   # connect's error body
            self.answer(code, json.dumps({"code": connect_code, "message": text}))
        else:              # httputil.ErrorWithStatus: {"code": ..., "message": ...}
            self.answer(code, json.dumps({"code": {400: "invalid_argument", 401: "unauthenticated",
                                                   422: "unknown", 429: "resource_exhausted"}.get(code, "unknown"),
                                          "message": text}))

    def save(self, api, raw_profile, labels, time_nanos, extra):
        with lock:
            counts["saved"] += 1
            k = counts["saved"]
        base = os.path.join(DIR, "req-%d" % k)
        with open(base + ".pb.gz", "wb") as f:
            f.write(raw_profile if raw_profile[:2] == b"\x1f\x8b" else gzip.compress(raw_profile))
        meta = {"api": api, "path": self.path.split("?")[0],
                "labels": {n.decode("utf-8", "replace"): v.decode("utf-8", "replace") for n, v in labels},
                "time_nanos": time_nanos, "tenant": self.headers.get("X-Scope-OrgID"),
                "auth": self.auth_user()}
        meta.update(extra)
        with open(base + ".json.tmp", "w") as f:
            json.dump(meta, f)
        os.rename(base + ".json.tmp", base + ".json")   # whole once seen

    def auth_user(self):
        h = self.headers.get("Authorization", "")
        if h.startswith("Basic "):
            try:
                return base64.b64decode(h[6:]).decode()
            except ValueError:
                return "?"
        return None

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        with lock:
            counts["requests"] += 1
            n = counts["requests"]
        m = mode()
        if m == "slow":
            time.sleep(5)
        if AUTH and self.auth_user() != AUTH:
            return self.fail(401, "authentication required", "unauthenticated")
        url = urllib.parse.urlsplit(self.path)
        push = url.path == "/push.v1.PusherService/Push"
        if m == "400":
            return self.fail(400, "invalid profile: piano test refusal", "invalid_argument" if push else None)
        if m == "500-1" and n == 1:
            return self.fail(500, "internal error: try later", "internal" if push else None)
        if push:
            return self.push(body, m)
        if url.path == "/ingest":
            return self.ingest(urllib.parse.parse_qs(url.query), body, m)
        return self.fail(404, "404 page not found")

    def push(self, body, m):
        """Distributor.Push"""
        if self.headers.get("Content-Type", "") != "application/proto":
            return self.fail(415, "unsupported content type (the stub takes application/proto)", "unknown")
        now = time.time_ns()
        try:
            check_tenant(self.headers.get("X-Scope-OrgID"))
            series = push_request(body)
            decoded = []
            for labels, samples in series:
                for s in samples:
                    decoded.append((labels, s) + decode_pprof(s))
            if not decoded:
                raise Refused("validation", "no profiles received")
            for labels, s, p, size in decoded:
                if not dict(labels).get(b"service_name"):
                    labels = labels + [(b"service_name", b"unknown_service")]
                validate_profile(p, size, now)
                validate_labels(labels)
        except Refused as e:
            code, cc = {"validation": (400, "invalid_argument"), "tenant": (401, "unauthenticated"),
                        "decode": (500, "unknown")}[e.kind]
            return self.fail(code, str(e), cc)
        if m == "backend-down":
            return self.fail(503, "ingester unavailable: piano test backend failure", "unavailable")
        for labels, s, p, size in decoded:
            self.save("push", s, labels, p["time_nanos"], {"query": {}, "body": "proto"})
        self.answer(200, b"", "application/proto")

    def ingest(self, q, body, m):
        """ingestHandler.ServeHTTP"""
        name = q.get("name", [""])[0]
        try:
            app, named = parse_name(name)
        except ValueError as e:
            return self.fail(400, "name: %s" % e)
        fmt = q.get("format", [""])[0]
        ctype = self.headers.get("Content-Type", "")
        now = time.time_ns()
        try:
            if fmt in ("trie", "tree", "lines", "jfr", "speedscope") or ctype in (
                    "binary/octet-stream+trie", "binary/octet-stream+tree"):
                raise Refused("decode", "format %s: not decoded by this stub" % fmt)
            if fmt == "pprof":
                how, prof = "raw", body
            elif "multipart/form-data" in ctype:
                how, prof = "multipart", form_profile(ctype, body)
            else:
                raise Refused("decode", "folded (groups) format: not decoded by this stub")
            if not prof:
                return self.answer(200, b"")
            check_tenant(self.headers.get("X-Scope-OrgID"))
            p, size = decode_pprof(prof)
            frm = int(q.get("from", ["0"])[0] or 0)
            if p["time_nanos"] == 0 or time.gmtime(p["time_nanos"] / 1e9).tm_year == 1970:   # fixTime
                p["time_nanos"] = (frm or now // 10**9) * 10**9
            labels = [(b"__name__", metric_name(p).encode()), (b"__delta__", b"false"),
                      (b"pyroscope_spy", q.get("spyName", ["unknown"])[0].encode())]
            if "service_name" not in named:
                labels.append((b"service_name", app.encode()))
            labels += [(k.encode(), v.encode()) for k, v in named.items() if not k.startswith("__")]
            validate_profile(p, size, now)
            validate_labels(labels)
        except Refused as e:
            return self.fail(422, "parsing IngestInput-pprof failed: %s" % e)
        if m == "backend-down":
            return self.fail(422, "pushing IngestInput-pprof failed: ingester unavailable: piano test backend failure")
        self.save("ingest", prof, labels, p["time_nanos"],
                  {"query": {a: b[0] for a, b in q.items()}, "body": how})
        self.answer(200, b"")


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
