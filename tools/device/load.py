# A job with known phases on GPU 0, for recording `gpuprep watch` on a real GPU:
#   busy      bf16 matrix products back to back
#   idle      the process holds its memory and launches nothing
#   starved   a short kernel, then the CPU busy for a while (an input pipeline that cannot keep up)
#   busy      again, to the end
# Usage: python3 load.py SECONDS_PER_PHASE   Prints each phase's start time (UTC) on stdout.
import sys
import time
from datetime import datetime, timezone

import torch

seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 15.0
dev = torch.device("cuda", 0)
a = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)


def mark(name):
    print("%s %s" % (datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ"), name), flush=True)


def busy(until):
    while time.time() < until:
        for _ in range(20):
            torch.matmul(a, b)
        torch.cuda.synchronize()


def starved(until):
    small = torch.randn(1024, 1024, device=dev)
    while time.time() < until:
        torch.matmul(small, small)
        torch.cuda.synchronize()
        t = time.time() + 0.2
        x = 0
        while time.time() < t:
            x += 1


for name, fn in (("busy", busy), ("idle", lambda u: time.sleep(max(0, u - time.time()))),
                 ("starved", starved), ("busy", busy)):
    mark(name)
    fn(time.time() + seconds)
mark("end")
