# gpuprep's measurement program: what `gpuprep accept` measures on every GPU of a server at once.
#
# Started by gpuprep as `python3 -c PROGRAM ARGS` (the protocol is in src/accept/program.h; the records in
# docs/json.md, "accept measurements"). It uses only PyTorch API that both PyTorch 1.13 (Debian's
# python3-torch) and 2.x (NGC's images) have. The parent process never initialises CUDA: it forks one worker
# per GPU, and the workers run every phase together, meeting at a barrier between phases. The parent prints
# what they report, one JSON object per line, and a phase's "done" once every worker has finished it.
#
# Methods:
# - matmul_bf16: dense bf16 products of a few large shapes, the best TFLOP/s of them, timed with CUDA events
#   as the "maximum achievable matmul" (MAMF) finder times them (below).
# - hbm_copy: a device-to-device copy; the rate counts the bytes read and the bytes written.
# - h2d, d2h: pinned host memory to the GPU and back.
# - p2p: one direction, GPU i to GPU (i + r) mod n in round r, where peer access exists: every GPU sends
#   to one peer and receives from another at a time.
# - all_reduce: torch.distributed (NCCL; gloo on the CPU) over all GPUs; bus bandwidth as nccl-tests
#   defines it (algorithm bandwidth x 2(n-1)/n).
# - burn (with --burn-seconds): seeded bf16 products on every GPU for that long, each product's bit-exact
#   digest compared with the GPU's first (below, "The burn").
# - all_reduce_nodes (with --nnodes N above 1, the only phase then): every GPU of every node in one
#   all-reduce, the nodes meeting at --master HOST:PORT (node 0 listens there); one program runs on each
#   node with its own --node-rank, and each node's program reports the same collective's bus bandwidth.
# --device cpu --tiny runs every phase's code on the CPU, with tiny sizes, for tests.
import argparse
import datetime
import json
import math
import multiprocessing
import multiprocessing.connection
import os
import shutil
import signal
import sys
import tempfile
import time

import torch
import torch.distributed as dist

PHASES = ["matmul_bf16", "hbm_copy", "h2d", "d2h", "p2p", "all_reduce"]
BURN = "burn"  # run after the others when --burn-seconds is above 0
NODES = "all_reduce_nodes"  # the only phase with --nnodes above 1
GIB = 1 << 30
MIB = 1 << 20


def parse_args(argv):
    p = argparse.ArgumentParser(prog="gpuprep-measure", add_help=False)
    p.add_argument("--device", choices=["cuda", "cpu"], required=True)
    p.add_argument("--tiny", action="store_true")
    p.add_argument("--fast", action="store_true")
    p.add_argument("--gpus", type=int, required=True)
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--allreduce-bytes", type=int, action="append", default=[])
    p.add_argument("--phases", default=",".join(PHASES))
    p.add_argument("--burn-seconds", type=float, default=0.0)
    # Tests only: flip one bit of GPU G's product at iteration I ("G:I"), or of its CPU-checked product
    # ("G:check"), which the comparison must then catch.
    p.add_argument("--plant-flip", default="")
    p.add_argument("--nnodes", type=int, default=1)
    p.add_argument("--node-rank", type=int, default=0)
    p.add_argument("--master", default="")
    p.add_argument("--rendezvous-seconds", type=float, default=300.0)
    args = p.parse_args(argv)
    args.phases = [x for x in args.phases.split(",") if x]
    for name in args.phases:
        if name not in PHASES + [BURN, NODES]:
            p.error("unknown phase %r" % name)
    check_nodes(p, args)
    if not 0 <= args.burn_seconds <= 86400:
        p.error("--burn-seconds must be 0 to 86400")
    if args.burn_seconds > 0 and BURN not in args.phases:
        args.phases.append(BURN)
    args.plant = None
    if args.plant_flip:
        gpu, _, at = args.plant_flip.partition(":")
        if not gpu.isdigit() or not (at == "check" or at.isdigit()):
            p.error("--plant-flip is GPU:ITERATION or GPU:check")
        args.plant = (int(gpu), at if at == "check" else int(at))
    if not 1 <= args.gpus <= 64:
        p.error("--gpus must be 1 to 64")
    if not 0 < args.seconds <= 600:
        p.error("--seconds must be above 0 and at most 600")
    for b in args.allreduce_bytes:
        if not 0 < b <= 64 * GIB or b % 4:
            p.error("--allreduce-bytes must be a multiple of 4 up to 64 GiB")
    return args


def check_nodes(p, args):
    """--nnodes above 1 measures only the all-reduce across the nodes, which meet at --master HOST:PORT."""
    if not 1 <= args.nnodes <= 1024:
        p.error("--nnodes must be 1 to 1024")
    if args.nnodes == 1:
        if NODES in args.phases:
            p.error("%s needs --nnodes above 1" % NODES)
        return
    if not 0 <= args.node_rank < args.nnodes:
        p.error("--node-rank must be 0 to --nnodes - 1")
    host, sep, port = args.master.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        p.error("--master must be HOST:PORT")
    if not 0 < args.rendezvous_seconds <= 3600:
        p.error("--rendezvous-seconds must be above 0 and at most 3600")
    if args.phases == PHASES:
        args.phases = [NODES]
    if args.phases != [NODES] or args.burn_seconds > 0:
        p.error("--nnodes above 1 measures only the %s phase" % NODES)


# The burn. cuBLAS's documentation ("Results reproducibility", docs.nvidia.com/cuda/cublas) states that its
# routines give bit-wise identical results at every run on GPUs with the same architecture and the same
# number of SMs, while one CUDA stream is active; with CUBLAS_WORKSPACE_CONFIG=:4096:8 (or :16:8) even when
# several streams share a handle. So: one worker process per GPU on PyTorch's one default stream, that
# environment variable set by gpuprep, and the same seeded inputs on every GPU. Every product of a GPU must
# then equal its first, and the first products of GPUs with the same SM count must be equal. A product is
# compared by its digest, the integer sum of its raw 16-bit words: exact (no float sum), and any one flipped
# bit changes it. Before the burn, one small product per GPU is checked against the CPU's.
BURN_SEED = 20261205
CHECK_SEED = 7
WORKSPACE_CONFIGS = (":4096:8", ":16:8")


def seeded_operands(seed, size, device):
    """A and B (size x size, bf16) from a seeded CPU generator: the same on every GPU and every run."""
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(size, size, generator=g).to(torch.bfloat16).to(device)
    b = torch.randn(size, size, generator=g).to(torch.bfloat16).to(device)
    return a, b


def digest(c):
    """The integer sum of the raw 16-bit words of a bf16 tensor, on its device (a 0-dimensional int64)."""
    return c.view(torch.int16).sum(dtype=torch.int64)


def flip_bit(c):
    """Flips one bit of the first value (tests only: the planted fault the comparison must catch)."""
    w = c.view(torch.int16).view(-1)
    w[:1].bitwise_xor_(0x4000)


def cpu_check(device, plant):
    """A 64 x 64 x 64 bf16 product on `device` against the CPU's integer product of the same values. The values
    are integers from -2 to 2: every partial sum is an integer of at most 256, exact in bf16 and in any order
    of accumulation, so the two must be equal. Returns (values that differ, values)."""
    g = torch.Generator().manual_seed(CHECK_SEED)
    a = torch.randint(-2, 3, (64, 64), generator=g)
    b = torch.randint(-2, 3, (64, 64), generator=g)
    want = torch.mm(a, b).to(torch.float32)
    got = torch.mm(a.to(torch.bfloat16).to(device), b.to(torch.bfloat16).to(device))
    if plant:
        flip_bit(got)
    return int((got.to(torch.float32).cpu() != want).sum()), want.numel()


def burn_products(device, size, seconds, chunk, plant_at=None, clock=time.perf_counter):
    """Seeded products for `seconds` (at least one chunk of `chunk`), each one's digest compared with the
    first's; digests are read back once a chunk. Returns a dict: iterations, digest (the first product's),
    mismatches, and the first mismatching iteration (0 is the first product) and its digest, if any."""
    a, b = seeded_operands(BURN_SEED, size, device)
    c = torch.empty(size, size, dtype=torch.bfloat16, device=device)
    digests = torch.empty(chunk, dtype=torch.int64, device=device)
    out = {"iterations": 0, "digest": None, "mismatches": 0}
    end = clock() + seconds
    while out["iterations"] == 0 or clock() < end:
        base = out["iterations"]
        for i in range(chunk):
            torch.mm(a, b, out=c)
            if plant_at == base + i:
                flip_bit(c)
            digests[i] = digest(c)
        for i, d in enumerate(digests.tolist()):
            if out["digest"] is None:
                out["digest"] = d
            elif d != out["digest"]:
                out["mismatches"] += 1
                if "first_mismatch_iteration" not in out:
                    out["first_mismatch_iteration"] = base + i
                    out["first_mismatch_digest"] = d
        out["iterations"] += chunk
    return out


class Clock:
    """Times work on one device: CUDA events on a GPU, the wall clock on the CPU."""

    def __init__(self, device):
        self.cuda = device.type == "cuda"

    def time(self, fn, iters):
        if self.cuda:
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(iters):
                fn()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / 1000.0
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        return time.perf_counter() - t0

    def each(self, fn, iters, between):
        """Seconds of each of `iters` calls, `between` run untimed before each; one synchronisation at the
        end, so the GPU works through them back to back."""
        if self.cuda:
            starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
            ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
            for i in range(iters):
                between()
                starts[i].record()
                fn()
                ends[i].record()
            torch.cuda.synchronize()
            return [s.elapsed_time(e) / 1000.0 for s, e in zip(starts, ends)]
        out = []
        for _ in range(iters):
            between()
            t0 = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t0)
        return out

    def measure(self, fn, seconds):
        """Warms up, sizes the iteration count to about `seconds`, and returns (iterations, elapsed)."""
        fn()
        fn()
        once = max(self.time(fn, 1), 1e-6)
        iters = int(min(10000, max(3, seconds / once)))
        return iters, self.time(fn, iters)


class Worker:
    def __init__(self, rank, args, conn):
        self.rank = rank
        self.args = args
        self.conn = conn
        self.n = args.gpus
        if args.device == "cuda":
            torch.cuda.set_device(rank)
            self.device = torch.device("cuda", rank)
        else:
            self.device = torch.device("cpu")
        self.clock = Clock(self.device)

    def send(self, obj):
        self.conn.send(obj)

    def record(self, phase, **fields):
        rec = {"record": "phase", "phase": phase}
        rec.update(fields)
        self.send(("record", rec))

    def barrier(self):
        if self.n > 1 and dist.is_initialized():
            dist.barrier()

    def sync(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

    # Phases. Each reports its own records; a failure becomes an error record for this GPU.
    def matmul_bf16(self, seconds):
        # As the MAMF finder measures (stas00/ml-engineering@744d01e compute/accelerator/benchmarks/
        # mamf-finder.py, benchmark_mm): A (m x k) times B (n x k) transposed into C, 50 warm-up and 100
        # timed products, each timed alone with CUDA events after zeroing a 256 MiB buffer (the L2 cache)
        # and re-randomising C; the mean of the timed ones, the best shape's. Its README's table
        # (compute/accelerator/README.md, "reporting a mean of 100 iterations after 50 warmup iterations")
        # is what the expectation table quotes; a loop of back-to-back products instead settles at the power
        # limit (about 15% lower on an H200).
        if self.args.tiny:
            shapes, warmup, iters, cache = [(64, 64, 64), (96, 128, 64)], 2, 5, 1 << 16
        else:
            # The best shapes that table publishes: H100/H200, A100 SXM, B200, GB200; and 8192 cubed.
            shapes = [(2048, 2048, 13312), (1024, 10240, 5120), (1792, 16128, 3072), (4096, 9728, 2048),
                      (8192, 8192, 8192)]
            warmup, iters, cache = 50, 100, 256 * MIB
        l2 = torch.empty(cache // 4, dtype=torch.int32, device=self.device)
        best = None
        for m, n, k in shapes:
            a = torch.randn(m, k, device=self.device).to(torch.bfloat16)
            b = torch.randn(n, k, device=self.device).to(torch.bfloat16).t()
            c = torch.empty(m, n, device=self.device, dtype=torch.bfloat16)
            c_rand = torch.randn(m, n, device=self.device).to(torch.bfloat16)
            times = self.clock.each(lambda: torch.mm(a, b, out=c), warmup + iters,
                                    lambda: (l2.zero_(), c.copy_(c_rand)))[warmup:]
            mean = sum(times) / len(times)
            tflops = 2.0 * m * n * k / max(mean, 1e-9) / 1e12
            if best is None or tflops > best[0]:
                best = (tflops, m, n, k, sum(times))
            del a, b, c, c_rand
        self.record("matmul_bf16", gpu=self.rank, tflops=round(best[0], 3), m=best[1], n=best[2], k=best[3],
                    duration_s=round(best[4], 6))

    def hbm_copy(self, seconds):
        size = MIB if self.args.tiny else 2 * GIB
        src = torch.empty(size, dtype=torch.uint8, device=self.device).fill_(1)
        dst = torch.empty_like(src)
        iters, elapsed = self.clock.measure(lambda: dst.copy_(src), seconds)
        self.record("hbm_copy", gpu=self.rank, tb_per_s=round(2.0 * size * iters / elapsed / 1e12, 6),
                    bytes=size, duration_s=round(elapsed, 6))

    def host_copy(self, phase, seconds):
        size = MIB if self.args.tiny else GIB
        pinned = self.device.type == "cuda"
        host = torch.empty(size, dtype=torch.uint8, pin_memory=pinned).fill_(1)
        dev = torch.empty(size, dtype=torch.uint8, device=self.device).fill_(1)
        if phase == "h2d":
            fn = lambda: dev.copy_(host, non_blocking=True)
        else:
            fn = lambda: host.copy_(dev, non_blocking=True)
        iters, elapsed = self.clock.measure(fn, seconds)
        self.record(phase, gpu=self.rank, gb_per_s=round(size * iters / elapsed / 1e9, 6), bytes=size,
                    duration_s=round(elapsed, 6))

    def h2d(self, seconds):
        self.host_copy("h2d", seconds)

    def d2h(self, seconds):
        self.host_copy("d2h", seconds)

    def p2p(self, seconds):
        size = MIB if self.args.tiny else GIB
        rounds = self.n - 1
        src = torch.empty(size, dtype=torch.uint8, device=self.device).fill_(1)
        for r in range(1, self.n):
            peer = (self.rank + r) % self.n
            try:
                self.peer_copy(src, peer, seconds / rounds)
            except Exception as e:  # one pair failing does not stop the others
                self.send(("error", "p2p", self.rank, "to GPU %d: %s" % (peer, e)))
            self.barrier()

    def peer_copy(self, src, peer, seconds):
        if self.device.type == "cuda":
            if not torch.cuda.can_device_access_peer(self.rank, peer):
                return
            dst = torch.empty(src.numel(), dtype=torch.uint8, device=torch.device("cuda", peer))
        else:
            dst = torch.empty_like(src)
        iters, elapsed = self.clock.measure(lambda: dst.copy_(src, non_blocking=True), seconds)
        self.sync()
        self.record("p2p", gpu=self.rank, peer=peer, gb_per_s=round(src.numel() * iters / elapsed / 1e9, 6),
                    bytes=src.numel(), duration_s=round(elapsed, 6))
        del dst

    def all_reduce(self, seconds):
        for size, busbw, elapsed in self.all_reduce_sizes(seconds, self.n):
            if self.rank == 0:
                self.record("all_reduce", gpus=self.n, busbw_gb_per_s=busbw, message_bytes=size,
                            duration_s=round(elapsed, 6))

    def all_reduce_sizes(self, seconds, world):
        """Per message size: (bytes, bus bandwidth in GB/s, seconds) of all-reduces over `world` ranks."""
        sizes = self.args.allreduce_bytes or [4096 if self.args.tiny else GIB]
        for size in sizes:
            t = torch.ones(size // 4, dtype=torch.float32, device=self.device)
            dist.all_reduce(t)
            self.sync()
            once = self.timed_all_reduce(t, 1)
            iters = int(min(1000, max(3, seconds / len(sizes) / max(once, 1e-6))))
            elapsed = self.timed_all_reduce(t, iters)
            algbw = size * iters / elapsed / 1e9
            del t
            yield size, round(algbw * 2 * (world - 1) / world, 6), elapsed

    def all_reduce_nodes(self, seconds):
        # Every GPU of every node joins one process group: node R's GPU i is rank R x gpus + i. The nodes
        # meet at --master (node 0's GPU 0 listens there); a node that does not come within
        # --rendezvous-seconds fails the phase on every node that came.
        a = self.args
        world = a.nnodes * a.gpus
        backend = "nccl" if self.device.type == "cuda" else "gloo"
        try:
            dist.init_process_group(backend, init_method="tcp://" + a.master,
                                    rank=a.node_rank * a.gpus + self.rank, world_size=world,
                                    timeout=datetime.timedelta(seconds=a.rendezvous_seconds))
        except Exception as e:
            raise RuntimeError("the nodes did not all meet at %s within %g s (every node runs the check with "
                               "the same --nnodes and --master, its own --node-rank, and as many GPUs): %s"
                               % (a.master, a.rendezvous_seconds, e))
        self.n = world
        dist.barrier()  # NCCL connects the nodes here, before anything is timed
        for size, busbw, elapsed in self.all_reduce_sizes(seconds, world):
            if self.rank == 0:
                self.record(NODES, nodes=a.nnodes, gpus=world, busbw_gb_per_s=busbw, message_bytes=size,
                            duration_s=round(elapsed, 6))

    def timed_all_reduce(self, t, iters):
        """Wall time of `iters` all-reduces, the slowest rank's."""
        dist.barrier()
        self.sync()
        t0 = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(t)
        self.sync()
        elapsed = torch.tensor([time.perf_counter() - t0], dtype=torch.float64, device=self.device)
        dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
        return float(elapsed.item())

    def burn(self, seconds):
        plant = self.args.plant if self.args.plant and self.args.plant[0] == self.rank else (None, None)
        cuda = self.device.type == "cuda"
        if cuda and os.environ.get("CUBLAS_WORKSPACE_CONFIG") not in WORKSPACE_CONFIGS:
            raise RuntimeError("CUBLAS_WORKSPACE_CONFIG is not :4096:8 or :16:8: products are not comparable")
        wrong, values = cpu_check(self.device, plant[1] == "check")
        size = 128 if self.args.tiny else 8192
        t0 = time.perf_counter()
        out = burn_products(self.device, size, seconds, 8 if self.args.tiny else 64,
                            plant[1] if isinstance(plant[1], int) else None)
        fields = {"gpu": self.rank, "size": size, "check_values": values, "check_wrong": wrong,
                  "duration_s": round(time.perf_counter() - t0, 6)}
        fields.update(out)
        if cuda:
            fields["sm_count"] = torch.cuda.get_device_properties(self.device).multi_processor_count
        self.record("burn", **fields)

    def run(self):
        for phase in self.args.phases:
            if phase in ("p2p", "all_reduce") and self.n < 2:
                continue
            seconds = self.args.burn_seconds if phase == BURN else self.args.seconds
            # The budget it reports: the measuring time, and the wait for the other nodes.
            budget = seconds + (self.args.rendezvous_seconds if phase == NODES else 0)
            self.send(("start", phase, budget))
            try:
                getattr(self, phase)(seconds)
            except Exception as e:
                self.send(("error", phase, self.rank, str(e)))
            if self.device.type == "cuda":
                torch.cuda.empty_cache()
            self.barrier()  # inside the phase: its "done" means every GPU finished it
            self.send(("end", phase))


def worker_main(rank, args, conn, store):
    try:
        import ctypes
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: end with the parent
    except Exception:
        pass
    # NCCL writes its log (NCCL_DEBUG) on stdout; the parent's stdout carries only records, so a worker's
    # stdout is its stderr.
    os.dup2(2, 1)
    try:
        if args.gpus > 1 and args.nnodes == 1:
            backend = "nccl" if args.device == "cuda" else "gloo"
            if args.device == "cuda":
                torch.cuda.set_device(rank)
            dist.init_process_group(backend, init_method="file://" + store, rank=rank, world_size=args.gpus)
            dist.barrier()  # the collective's setup happens here, before the first phase
        Worker(rank, args, conn).run()
        conn.send(("exit",))
    except Exception as e:
        conn.send(("error", None, rank, "worker stopped: %s" % e))
        conn.send(("exit",))
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


def emit(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":"), allow_nan=False) + "\n")
    sys.stdout.flush()


def clean(text):
    text = " ".join(str(text).split())
    return text[:500]


class Parent:
    def __init__(self, n):
        self.n = n
        self.started = set()
        self.ended = {}

    def handle(self, msg):
        kind = msg[0]
        if kind == "start" and msg[1] not in self.started:
            self.started.add(msg[1])
            emit({"record": "progress", "phase": msg[1], "state": "start", "budget_s": msg[2]})
        elif kind == "record":
            emit(msg[1])
        elif kind == "error":
            emit({"record": "error", "phase": msg[1], "gpu": msg[2], "message": clean(msg[3])})
        elif kind == "end":
            self.ended[msg[1]] = self.ended.get(msg[1], 0) + 1
            if self.ended[msg[1]] == self.n:
                emit({"record": "progress", "phase": msg[1], "state": "done"})


def main(argv):
    args = parse_args(argv)
    store_dir = tempfile.mkdtemp(prefix="gpuprep-measure-")
    ctx = multiprocessing.get_context("fork")
    procs, conns = [], []
    try:
        for rank in range(args.gpus):
            reader, writer = ctx.Pipe(duplex=False)
            p = ctx.Process(target=worker_main, args=(rank, args, writer, os.path.join(store_dir, "store")))
            p.start()
            writer.close()
            procs.append(p)
            conns.append(reader)
        parent = Parent(args.gpus)
        live = dict(zip(conns, range(args.gpus)))
        exited = set()
        failed = False
        while live:
            for conn in multiprocessing.connection.wait(list(live)):
                try:
                    msg = conn.recv()
                except EOFError:
                    rank = live.pop(conn)
                    if rank not in exited:
                        emit({"record": "error", "phase": None, "gpu": rank,
                              "message": "worker for GPU %d ended without finishing" % rank})
                        failed = True
                    continue
                if msg[0] == "exit":
                    exited.add(live[conn])
                else:
                    parent.handle(msg)
            if failed:
                break
        for p in procs:
            p.join(timeout=0 if failed else 30)
            if p.is_alive():
                p.kill()
        emit({"record": "done"})
        return 1 if failed else 0
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()
        shutil.rmtree(store_dir, ignore_errors=True)


def on_term(signum, frame):
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, on_term)
    sys.exit(main(sys.argv[1:]))
