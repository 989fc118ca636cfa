#!/usr/bin/env python3
"""Write every PromQL query of a Grafana dashboard JSON as a Prometheus recording rule, so
that `promtool check rules` parses them all (tests/console/test_metrics.c), and list the
metric names the queries use (one per line, after the rules file is written)."""
import json, re, sys

dash = json.load(open(sys.argv[1]))
exprs = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
with open(sys.argv[2], "w") as f:
    f.write("groups:\n  - name: dashboard\n    rules:\n")
    for i, e in enumerate(exprs):
        f.write("      - record: dashboard:query%d\n        expr: %s\n" % (i, json.dumps(e)))
names = sorted({m for e in exprs for m in re.findall(r"\bmc_[a-z_]+", e)})
print("\n".join(names))
