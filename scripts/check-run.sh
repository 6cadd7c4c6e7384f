#!/usr/bin/env bash
# Checks that a built or installed yace runs: 2000 requests against its
# embedded target, all answered, the JSON result read back.
#
#   scripts/check-run.sh BIN RESULT.json WHO
#
# WHO names the binary in the line printed ("the installed yace").
set -euo pipefail
bin=$1 out=$2 who=$3
"$bin" run -n 2000 -c 4 -q --json "$out" >/dev/null
python3 - "$out" "$who" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
assert s["responses"] == 2000 and s["errors"] == 0, s
print(f"  {sys.argv[2]} ran 2000 requests against its embedded target: {s['rps']:.0f} responses/s")
EOF
