#!/usr/bin/env python3
"""Loopback HTTP(S) server for the redistributable-archive tests and benchmark (tests/redist, tests/sim,
bench/redist.sh): serves ROOT on 127.0.0.1 like NVIDIA's download server does for the archives, with byte
ranges (206 Partial Content) so an interrupted transfer can be resumed.

redist_server.py ROOT PORT_FILE LOG_FILE [--cert CRT --key KEY] [--throttle BYTES_PER_S] [--drop NAME:BYTES]
                 [--ready-fd FD]
  --throttle: paces every response body to that rate (the benchmark's 100 MB/s link).
  --drop:     the first GET of a path ending in NAME closes the connection after BYTES body bytes (a
              dropped transfer); later GETs are served whole.
  --ready-fd: once it listens, also writes the port and a newline to FD (a file descriptor inherited from
              whoever started it, which can block on it instead of polling PORT_FILE) and closes it.
LOG_FILE gets one line per response: "GET PATH STATUS START-END SENT".
"""
import argparse
import http.server
import os
import ssl
import threading
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root")
    ap.add_argument("port_file")
    ap.add_argument("log_file")
    ap.add_argument("--cert")
    ap.add_argument("--key")
    ap.add_argument("--throttle", type=float, default=0)
    ap.add_argument("--drop", action="append", default=[])
    ap.add_argument("--ready-fd", type=int)
    args = ap.parse_args()
    log = open(args.log_file, "a", buffering=1)
    lock = threading.Lock()
    drops = {}
    for d in args.drop:
        name, n = d.rsplit(":", 1)
        drops[name] = int(n)

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def do_GET(self):
            rel = self.path.split("?", 1)[0].lstrip("/")
            path = os.path.realpath(os.path.join(args.root, rel))
            if not path.startswith(os.path.realpath(args.root) + os.sep) or not os.path.isfile(path):
                body = b"not found\n"
                self.send_response(404)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                with lock:
                    log.write(f"GET {self.path} 404 - 0\n")
                return
            size = os.path.getsize(path)
            start, status = 0, 200
            rng = self.headers.get("Range")
            if rng and rng.startswith("bytes=") and rng.endswith("-"):
                start = int(rng[6:-1])
                status = 206
                if start >= size:
                    self.send_response(416)
                    self.send_header("Content-Range", f"bytes */{size}")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
            self.send_response(status)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(size - start))
            if status == 206:
                self.send_header("Content-Range", f"bytes {start}-{size - 1}/{size}")
            self.send_header("Accept-Ranges", "bytes")
            self.end_headers()
            limit = None
            with lock:
                for name in list(drops):
                    if self.path.endswith(name):
                        limit = drops.pop(name)
            sent = 0
            t0 = time.monotonic()
            with open(path, "rb") as f:
                f.seek(start)
                while True:
                    chunk = f.read(256 * 1024)
                    if not chunk:
                        break
                    if limit is not None and sent + len(chunk) > limit:
                        chunk = chunk[: max(0, limit - sent)]
                        self.wfile.write(chunk)
                        sent += len(chunk)
                        self.wfile.flush()
                        with lock:
                            log.write(f"GET {self.path} {status} {start}-{size - 1} {sent} dropped\n")
                        self.close_connection = True
                        try:
                            self.connection.shutdown(2)
                        except OSError:
                            pass
                        return
                    self.wfile.write(chunk)
                    sent += len(chunk)
                    if args.throttle:
                        ahead = sent / args.throttle - (time.monotonic() - t0)
                        if ahead > 0:
                            time.sleep(ahead)
            with lock:
                log.write(f"GET {self.path} {status} {start}-{size - 1} {sent}\n")

    parent = os.getppid()

    def watchdog():  # exit with whoever started us, even when it was SIGKILLed
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watchdog, daemon=True).start()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if args.cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.cert, args.key)
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(tmp, args.port_file)
    if args.ready_fd is not None:  # listening since ThreadingHTTPServer()
        os.write(args.ready_fd, b"%d\n" % server.server_address[1])
        os.close(args.ready_fd)
    server.serve_forever()


if __name__ == "__main__":
    main()
