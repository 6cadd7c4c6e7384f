#!/usr/bin/env python3
"""bench/run.sh's stand-in OTLP collector for yace-prom: answers every POST
with 200 (the body read, not decoded); listens on 127.0.0.1 on a free port,
printed first, until killed."""
import http.server


class Sink(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *a):
        pass


srv = http.server.HTTPServer(("127.0.0.1", 0), Sink)
print(srv.server_address[1], flush=True)
srv.serve_forever()
