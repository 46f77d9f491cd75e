#!/usr/bin/env python3
"""`python3 -m http.server` for the tests, which says when it is listening instead of being polled.

serve_dir.py DIR BIND_ADDR PORT READY_FD
Serves DIR over plain HTTP on BIND_ADDR:PORT (PORT 0: a free port), logging each request to stderr as
http.server does; once it listens, writes the port it has and a newline to the inherited file descriptor
READY_FD and closes it.
"""
import functools
import http.server
import os
import sys


def main():
    directory, addr, port, ready_fd = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=directory)
    server = http.server.ThreadingHTTPServer((addr, port), handler)  # bound and listening
    os.write(ready_fd, b"%d\n" % server.server_address[1])
    os.close(ready_fd)
    server.serve_forever()


if __name__ == "__main__":
    main()
