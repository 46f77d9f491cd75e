#!/usr/bin/env python3
"""Loopback HTTP server for the simulated GPU server's apt repository (tests/sim).

http_server.py ROOT PORT_FILE LOG_FILE [CERT KEY]: serves ROOT on 127.0.0.1 at a free port (HTTPS when a
certificate and key are given), writes the port to PORT_FILE once listening, and appends one line per
response to LOG_FILE: "METHOD PATH STATUS BYTES".
"""
import http.server
import os
import ssl
import sys
import threading
import time


def main():
    root, port_file, log_file = sys.argv[1:4]
    log = open(log_file, "a", buffering=1)
    lock = threading.Lock()

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=root, **kwargs)

        def log_request(self, code="-", size="-"):
            self._sim_code = code

        def send_header(self, keyword, value):
            super().send_header(keyword, value)
            if keyword.lower() == "content-length":  # one line per response, with its size
                with lock:
                    log.write(f"{self.command} {self.path} {int(getattr(self, '_sim_code', 0))} {value}\n")

        def log_message(self, *args):
            pass


    # Exit with the test script that started us, even when it is SIGKILLed (ctest's timeout) and its trap
    # cannot stop us.
    parent = os.getppid()

    def watchdog():
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watchdog, daemon=True).start()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if len(sys.argv) > 5:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(sys.argv[4], sys.argv[5])
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    tmp = port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(tmp, port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
