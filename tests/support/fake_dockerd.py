#!/usr/bin/env python3
"""A stand-in Docker Engine API on a unix socket, for the launch round-trip tests (python3 stdlib only).

The real docker CLI (docker run ...) talks to it through DOCKER_HOST=unix://SOCKET. It answers the calls
`docker run` makes before a container exists (/_ping, /version, /info) and records every request as one
JSON line in RECORD ({"method", "path", "query", "body"}). POST /containers/create is recorded and then
refused with HTTP 400 "fake dockerd: create recorded", so the CLI stops there (exit 125) without
attaching or starting anything. Anything else gets 404.

usage: fake_dockerd.py SOCKET RECORD
"""
import json
import os
import socketserver
import sys
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit

API_VERSION = "1.47"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def address_string(self):  # unix sockets have no peer address
        return "unix"

    def log_message(self, fmt, *args):
        pass

    def _record(self, body):
        url = urlsplit(self.path)
        entry = {"method": self.command, "path": url.path, "query": parse_qs(url.query), "body": body}
        with open(self.server.record_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")

    def _reply(self, status, payload, content_type="application/json"):
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Api-Version", API_VERSION)
        self.send_header("Docker-Experimental", "false")
        self.send_header("Ostype", "linux")
        self.send_header("Server", "fake-dockerd")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _route(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        self._record(body)
        path = urlsplit(self.path).path
        parts = path.strip("/").split("/")
        if parts and parts[0].startswith("v1."):
            parts = parts[1:]
        route = "/".join(parts)
        if route == "_ping":
            return self._reply(200, b"OK", "text/plain; charset=utf-8")
        if route == "version":
            return self._reply(200, {"Version": "28.3.0", "ApiVersion": API_VERSION, "MinAPIVersion": "1.24",
                                     "Os": "linux", "Arch": "amd64", "KernelVersion": "5.15.0"})
        if route == "info":
            return self._reply(200, {"ID": "fake", "OSType": "linux", "Runtimes": {"runc": {}, "nvidia": {}},
                                     "DefaultRuntime": "runc", "CDISpecDirs": ["/etc/cdi", "/var/run/cdi"]})
        if route == "containers/create" and self.command == "POST":
            return self._reply(400, {"message": "fake dockerd: create recorded"})
        return self._reply(404, {"message": "fake dockerd: not implemented: " + self.command + " " + path})

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = _route


class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


def main():
    sock, record = sys.argv[1], sys.argv[2]
    if os.path.exists(sock):
        os.unlink(sock)
    server = Server(sock, Handler)
    server.record_path = record
    open(record, "a").close()
    try:
        server.serve_forever()
    finally:
        os.unlink(sock)


if __name__ == "__main__":
    main()
