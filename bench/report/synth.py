#!/usr/bin/env python3
"""A synthetic long result for the report benchmark: the committed
`levels` fixture (a real open-model run) stretched to N seconds of a busy
run, with noisy rates and latencies as the recorder writes them (coarse
histogram values), lag, client CPU, in-flight, and a one-second stall
every hour. Deterministic (seeded).

usage: bench/report/synth.py SECONDS OUT.json
"""
import json
import math
import os
import random
import sys

here = os.path.dirname(os.path.abspath(__file__))
fixture = os.path.join(here, "../../crates/report/tests/render/fixtures/levels.json")
seconds, out = int(sys.argv[1]), sys.argv[2]
r = json.load(open(fixture))
template = r["series"][1]
rnd = random.Random(7)


def coarse(v):
    v = max(1, int(v))
    shift = max(0, v.bit_length() - 7)
    return float(((v >> shift) << shift) + (1 << shift) - 1)


rows = []
for s in range(seconds):
    row = dict(template)
    stall = s % 3600 == 1800
    n = 3 if stall else int(rnd.gauss(2000, 40))
    base = 900_000.0 if stall else 6_800.0
    row.update(
        second=s, responses=n, status_2xx=n, bytes_in=n * 103, bytes_out=n * 88,
        latency_mean_us=round(rnd.gauss(base, 150), 1),
        latency_p50_us=coarse(rnd.gauss(base, 120)),
        latency_p90_us=coarse(rnd.gauss(base * 1.08, 150)),
        latency_p99_us=coarse(rnd.gauss(base * 1.15, 250)),
        latency_max_us=coarse(rnd.gauss(base * 1.5, 900)),
        in_flight=round(rnd.gauss(13, 2), 2),
        client_cpu_s=round(rnd.gauss(0.2, 0.01), 6),
        lag_p99_us=coarse(rnd.gauss(1100, 60)),
        lag_max_us=coarse(rnd.gauss(3000, 500)),
    )
    rows.append(row)
r["series"] = rows
r["summary"]["duration_s"] = float(seconds)
json.dump(r, open(out, "w"), indent=2)
