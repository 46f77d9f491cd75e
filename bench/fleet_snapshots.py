"""Writes N fleet snapshots for bench/fleet.sh: each one a real `gpuprep doctor --json` output of a fixture
host (tests/fixtures/hosts/*), with the host's identity made its own (hostname, machine-id, GPU UUIDs and
serials) so that no two hosts are the same.

  fleet_snapshots.py [--compact] OUT_DIR N BASE.json...
Written as doctor writes them (indented by 2), or on one line with --compact (the browser test, which needs
only many of them). Prints the number of files, their total and their median size in bytes.
"""
import copy
import json
import os
import random
import statistics
import sys


def main(out, n, bases, compact=False):
    docs = []
    for b in bases:
        with open(b) as f:
            docs.append(json.load(f))
    r = random.Random(24)
    os.makedirs(out, exist_ok=True)
    sizes = []
    for i in range(n):
        d = copy.deepcopy(docs[i % len(docs)])
        h = d["host"]
        h["hostname"] = "gpu-%05d.dc%d.example" % (i, i % 3)
        h["machine_id"] = "%032x" % r.getrandbits(128)
        for g in h.get("gpus", []):
            g["uuid"] = "GPU-%08x-%04x-%04x-%04x-%012x" % (r.getrandbits(32), r.getrandbits(16), r.getrandbits(16),
                                                         r.getrandbits(16), r.getrandbits(48))
            g["serial"] = "%013d" % r.getrandbits(40)
        text = (json.dumps(d, separators=(",", ":")) if compact else json.dumps(d, indent=2)) + "\n"
        with open(os.path.join(out, "host-%05d.json" % i), "w") as f:
            f.write(text)
        sizes.append(len(text))
    print("%d snapshots, %d bytes, median %d bytes" % (n, sum(sizes), statistics.median(sizes)))


if __name__ == "__main__":
    args = sys.argv[1:]
    compact = args[:1] == ["--compact"]
    args = args[1:] if compact else args
    if len(args) < 3:
        sys.exit(__doc__)
    main(args[0], int(args[1]), args[2:], compact)
