#!/usr/bin/env python3
"""Writes the hand-made seed inputs of every fuzz target into corpus/<target>/.

Run from anywhere: `python3 fuzz/seeds.py`. Files are named seed-*, so
inputs the fuzzer found (named by their SHA-1) and regression inputs
(regress-*) sit beside them untouched. Scenario seeds are also copied from
crates/scenario/examples/ when that folder exists.
"""
import os
import pathlib

HERE = pathlib.Path(__file__).resolve().parent
CORPUS = HERE / "corpus"


def write(target, name, data):
    d = CORPUS / target
    d.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    (d / f"seed-{name}").write_bytes(data)


# --- response_parser: 2-byte prefix (flags, k) + k read sizes + wire ------
def resp(name, wire, head=False, sizes=()):
    if isinstance(wire, str):
        wire = wire.encode()
    prefix = bytes([1 if head else 0, len(sizes)]) + bytes(s - 1 for s in sizes)
    write("response_parser", name, prefix + wire)


CRLF = "\r\n"
R = {
    "length": "HTTP/1.1 200 OK\r\nContent-Length: 12\r\nServer: nginx\r\n\r\nhello world\n",
    "length0": "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
    "chunked-ext-trailer": "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    "5;name=val\r\nhello\r\n1A ; q=\"x\"\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nX-T: 1\r\nX-U: 2\r\n\r\n",
    "chunked-upper-hex": "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\nA\r\n0123456789\r\n0\r\n\r\n",
    "chunked-not-last": "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\nbody to close",
    "continue-then-201": "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n"
    "HTTP/1.1 201 Created\r\nContent-Length: 3\r\n\r\nabc",
    "switching-101": "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n",
    "http10-close": "HTTP/1.0 200 OK\r\nServer: x\r\n\r\nsome body until close",
    "http10-keepalive": "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx",
    "http11-close": "HTTP/1.1 200 OK\r\nConnection: foo, Close\r\n\r\nabc",
    "no-length-11": "HTTP/1.1 200 OK\r\nDate: Sun, 22 Nov 2026 11:00:00 GMT\r\n\r\nrest of the stream",
    "204": "HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n",
    "304": "HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n",
    "bad-length-alpha": "HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n",
    "bad-length-dup": "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx",
    "same-length-dup": "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx",
    "bad-length-huge": "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n",
    "length-u64max": "HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551615\r\n\r\nabc",
    "length-signed": "HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\nhello",
    "length-short": "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
    "bad-chunk-size": "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    "chunk-no-crlf": "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n",
    "chunk-size-overflow": "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffff\r\n",
    "chunk-truncated": "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel",
    "chunk-bare-lf": "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\nabc\n0\n\n",
    "lf-only-head": "HTTP/1.1 200 OK\nContent-Length: 2\n\nhi",
    "smtp": "220 smtp.example.com ESMTP ready\r\n\r\n",
    "http2-preface": "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
    "head-cut": "HTTP/1.1 200 OK\r\nContent-Le",
    "status-999": "HTTP/1.1 999 Whatever\r\nContent-Length: 0\r\n\r\n",
    "no-reason": "HTTP/1.1 404\r\nContent-Length: 0\r\n\r\n",
    "obs-fold": "HTTP/1.1 200 OK\r\nX-Long: a\r\n b\r\nContent-Length: 1\r\n\r\nx",
    "pipelined": "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"
    "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 4\r\n\r\nbusy",
    "cl-and-te": "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n",
}
for name, wire in R.items():
    resp(name, wire)
resp("length-split-1-2-7", R["length"], sizes=(1, 2, 7))
resp("chunked-byte-at-a-time", R["chunked-ext-trailer"], sizes=(1,))
resp("continue-split", R["continue-then-201"], sizes=(3, 25, 1))
resp("pipelined-split", R["pipelined"], sizes=(40, 7))
resp("head-request", "HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n", head=True)
resp("head-request-chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", head=True, sizes=(5,))
many = "HTTP/1.1 200 OK\r\n" + "".join(f"X-H{i}: v\r\n" for i in range(101)) + "\r\n"
resp("too-many-headers", many, sizes=(100,))
resp("empty", "")

# --- fcgi_response: 1-byte prefix (k) + k read sizes + FastCGI records -----
def rec(kind, rid, content=b"", pad=None):
    if pad is None:
        pad = (8 - len(content) % 8) % 8
    return bytes([1, kind, rid >> 8, rid & 255, len(content) >> 8, len(content) & 255, pad, 0]) + content + bytes(pad)


def end(rid, app=0, proto=0):
    return rec(3, rid, app.to_bytes(4, "big") + bytes([proto, 0, 0, 0]))


def fcgi(name, wire, sizes=()):
    write("fcgi_response", name, bytes([len(sizes)]) + bytes(s - 1 for s in sizes) + wire)


STATUS = b'Content-type: application/json\r\n\r\n{"pool":"www","active processes":1}'
F = {
    "status-json": rec(6, 1, STATUS) + rec(6, 1) + end(1),
    "not-found": rec(7, 1, b"Primary script unknown") + rec(6, 1, b"Status: 404 Not Found\r\n\r\nFile not found.\n") + rec(6, 1) + end(1),
    "location-302": rec(6, 1, b"Location: http://x/\n\n") + end(1),
    "overloaded": end(1, 0, 2),
    "cant-mpx": end(1, 0, 1),
    "kept-two": rec(6, 1, b"\r\nab") + end(1) + rec(6, 1, b"\r\ncd") + end(1),
    "byte-records": b"".join(rec(6, 1, bytes([c]), i % 8) for i, c in enumerate(b"Status: 200 OK\r\n\r\nx")) + end(1),
    "length-lies": bytes([1, 6, 0, 1, 255, 255, 255, 0]) + b"Status: 20",
    "padding-abuse": rec(6, 1, b"\r\n", 255) + end(1),
    "stderr-flood": rec(7, 1, b"PHP Warning: x\n" * 200) + rec(6, 1, b"\r\nok") + end(1),
    "other-request": rec(6, 9, b"x"),
    "version-2": b"\x02\x06\x00\x01\x00\x00\x00\x00",
    "http-answer": b"HTTP/1.1 200 OK\r\n\r\n",
    "end-short": rec(3, 1, bytes(7)),
    "stdout-after-end": rec(6, 1) + rec(6, 1, b"late"),
    "values-result": rec(10, 0, b"\x0f\x01FCGI_MPXS_CONNS0") + rec(6, 1, b"\r\n") + end(1),
    "unknown-type": rec(11, 0, bytes([9, 0, 0, 0, 0, 0, 0, 0])) + rec(6, 1, b"\r\n") + end(1),
}
for name, wire in F.items():
    fcgi(name, wire)
fcgi("status-json-split", F["status-json"], sizes=(1, 7, 3))

# --- plan_inputs: URLs, durations, counts, think times, thresholds ---------
P = {
    "url": "http://127.0.0.1:8080/",
    "url-query": "http://example.com/sleep?ms=20&x=%20",
    "url-noscheme": "localhost:8080/path",
    "url-v6": "http://[::1]:8080/a",
    "url-https": "https://example.com",
    "url-ftp": "ftp://example.com/",
    "url-nohost": "http:///x",
    "url-userinfo": "http://u:p@host:65535/p#frag",
    "url-badport": "http://host:99999/",
    "url-idna": "http://bücher.example/",
    "dur-ms": "500ms",
    "dur-s": "30s",
    "dur-m": "2m",
    "dur-compound": "1h 2m 3s",
    "dur-plain": "1.5",
    "dur-dot": ".",
    "dur-huge": "99999999999999999",
    "count-k": "10k",
    "count-M": "1.5M",
    "count-G": "2G",
    "count-underscore": "1_000_000",
    "count-neg": "-1",
    "count-frac": "0.5",
    "think-fixed": "2s",
    "think-uniform": "uniform(1s, 3s)",
    "think-uniform-rev": "uniform(3s,1s)",
    "think-exp": "exponential(2s)",
    "think-none": "none",
    "thr-p99": "p99<200ms",
    "thr-p999": "p99.9 <= 1s",
    "thr-errors": "errors<1%",
    "thr-rps": "rps>500",
    "thr-rps-pct": "rps>5%",
    "thr-dropped": "dropped==0",
    "thr-step": "checks<1%\0login",
    "thr-us": "max<500µs",
    "thr-noop": "p99 200ms",
    "thr-bad-pct": "p101<1s",
}
for name, text in P.items():
    write("plan_inputs", name, text)

# --- scenario_toml / scenario_yaml -----------------------------------------
TOML = {
    "minimal": 'base = "http://127.0.0.1:8080"\n[load]\nusers = 1\nduration = "1s"\n'
    '[[journey]]\nname = "j"\n[[journey.step]]\nname = "s"\nurl = "/"\n',
    "rate": 'base = "http://127.0.0.1:8080"\n[load]\nrate = 100\nduration = "10s"\n'
    '[[journey]]\nname = "j"\n[[journey.step]]\nname = "s"\nurl = "/x?a={{n}}"\n[vars]\nn = "1"\n',
    "bad-line3": 'base = "http://127.0.0.1:8080"\n[load]\nusers = "many"\n',
    "syntax-error": 'base = "http://127.0.0.1:8080\n[load\n',
    "empty": "",
}
YAML = {
    "minimal": 'base: "http://127.0.0.1:8080"\nload:\n  users: 1\n  duration: 1s\n'
    "journey:\n  - name: j\n    step:\n      - name: s\n        url: /\n",
    "bad-indent": "base: http://x\n  load: 1\n",
    "tabs": "base:\thttp://x\nload:\n\t users: 1\n",
    "anchors": "a: &x {users: 1}\nload: *x\n",
    "empty": "",
}
for name, text in TOML.items():
    write("scenario_toml", name, text)
for name, text in YAML.items():
    write("scenario_yaml", name, text)
examples = HERE.parent / "crates" / "scenario" / "examples"
if examples.is_dir():
    for f in sorted(examples.iterdir()):
        target = {".toml": "scenario_toml", ".yaml": "scenario_yaml", ".yml": "scenario_yaml"}.get(f.suffix)
        if target:
            write(target, f"example-{f.stem}", f.read_bytes())
    # One with a response that exercises cookies and JSON extraction.
    journey = examples / "journey.toml"
    if journey.exists():
        write("scenario_toml", "example-journey-response", journey.read_bytes() + b"\0"
              b"HTTP/1.1 200 OK\r\nSet-Cookie: YACESESSID=abc; Path=/; Max-Age=60\r\n"
              b"Date: Sun, 22 Nov 2026 11:00:00 GMT\r\nTransfer-Encoding: chunked\r\n\r\n"
              b"f\r\n{\"token\":\"abc\"}\r\n0\r\n\r\n")
