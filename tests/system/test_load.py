"""Many simulated workers (tools/loadgen.py) claim, heartbeat and release
leases against gpud at full speed: every request is answered correctly and
the store stays consistent (each lease granted once per epoch, all back to
pending). The rate is a benchmark figure, not asserted here."""
import json
import os
import sqlite3
import subprocess
import sys

from harness import Cluster, check, run

LOADGEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "loadgen.py")


def test_load(cl: Cluster):
    # One token for every simulated worker, each a worker of its own.
    cl.gpud_args = ["--lease-units", str(1 << 20), "--log-level", "warn"]
    cl.start_gpud()
    cl.submit("graveler", battles="1e15")
    r = subprocess.run([sys.executable, LOADGEN, "--connect", "127.0.0.1:%d" % cl.port,
                        "--token-file", os.path.join(cl.data, "local-worker.token"),
                        "--workers", "50", "--seconds", "3", "--json"],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "loadgen failed: %s %s" % (r.stdout, r.stderr))
    out = json.loads(r.stdout)
    print("load:", out)
    check(out["errors"] == 0 and out["claims_per_s"] > 0 and out["heartbeats_per_s"] > 0, "loadgen: %s" % out)
    db = sqlite3.connect("file:%s/gpud.db?mode=ro" % cl.data, uri=True)
    states = dict(db.execute("SELECT state, count(*) FROM leases GROUP BY state"))
    grants = db.execute("SELECT count(*), count(DISTINCT lease_id || ':' || epoch) FROM events WHERE kind = 'grant'").fetchone()
    epochs = db.execute("SELECT sum(epoch) FROM leases").fetchone()[0]
    db.close()
    check(set(states) == {0}, "every lease should be pending again: %s" % states)
    check(grants[0] == grants[1] == epochs, "each (lease, epoch) granted exactly once: %s, epochs %s" % (grants, epochs))
    check(cl.gpud.poll() is None, "gpud died under load")


if __name__ == "__main__":
    run(test_load)
