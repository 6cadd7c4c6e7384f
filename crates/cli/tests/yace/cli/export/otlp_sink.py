#!/usr/bin/env python3
"""A stand-in OpenTelemetry collector for the tests: listens on 127.0.0.1,
answers every POST /v1/metrics with 200, decodes each body with
OpenTelemetry's own protobuf classes, and appends one JSON line per request
to the file given (metric name -> [points], and the request's headers).
Stops after --seconds."""
import argparse
import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)

ap = argparse.ArgumentParser()
ap.add_argument("--port", type=int, required=True)
ap.add_argument("--out", required=True)
ap.add_argument("--seconds", type=float, default=30)
args = ap.parse_args()


class Sink(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        req = ExportMetricsServiceRequest()
        req.ParseFromString(body)  # raises on a malformed body
        d = MessageToDict(req)
        metrics = {}
        for rm in d.get("resourceMetrics", []):
            resource = {a["key"]: a["value"].get("stringValue") for a in rm["resource"]["attributes"]}
            for sm in rm.get("scopeMetrics", []):
                for m in sm.get("metrics", []):
                    kind = next(k for k in ("sum", "gauge", "summary") if k in m)
                    metrics[m["name"]] = {"kind": kind, "unit": m.get("unit", ""), **m[kind]}
        line = {
            "path": self.path,
            "content_type": self.headers.get("Content-Type"),
            "authorization": self.headers.get("authorization"),
            "resource": resource,
            "metrics": metrics,
        }
        with open(args.out, "a") as f:
            f.write(json.dumps(line) + "\n")
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *a):
        pass


srv = HTTPServer(("127.0.0.1", args.port), Sink)
threading.Timer(args.seconds, srv.shutdown).start()
# "ready PORT": the port it bound (--port 0: any free one, never one a
# test picked before binding, which another test could take first).
print("ready", srv.server_address[1], flush=True)
srv.serve_forever()
