#!/usr/bin/env python3
"""Parses an OpenMetrics exposition (stdin) with Prometheus' own Python
parser (prometheus_client.openmetrics.parser, strict: it raises on anything
the format does not allow) and prints {sample name + labels: value} as JSON."""
import json
import sys

from prometheus_client.openmetrics.parser import text_string_to_metric_families

out = {}
for family in text_string_to_metric_families(sys.stdin.read()):
    for s in family.samples:
        labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
        out[s.name + ("{" + labels + "}" if labels else "")] = s.value
print(json.dumps(out))
