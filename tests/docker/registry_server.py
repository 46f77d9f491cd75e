#!/usr/bin/env python3
"""A stand-in container registry over loopback HTTPS (python3 stdlib only), shaped after the OCI
distribution specification and the token flow Docker Hub and nvcr.io use for anonymous pulls.

registry_server.py STATE LOG_FILE --ready-fd FD --cert CRT --key KEY

Once it listens (on a free port of 127.0.0.1), it writes that port and a newline to FD, a file descriptor
inherited from whoever started it, and closes it.

STATE is a JSON file, read again for every request:
  {"token": "T",                  # null: no authentication; else manifests and blobs need "Bearer T"
   "token_status": 200,           # what GET /token answers (401: anonymous access refused)
   "realm": "https://...",        # the realm advertised (default: this server's /token)
   "private": ["nvidia/secret"],  # repositories no token opens (401 UNAUTHORIZED always)
   "manifests": {"NAME": {"TAG or DIGEST": {"type": MEDIA_TYPE, "body": TEXT, "digest_header": optional}}},
   "blobs": {"NAME": {"DIGEST": TEXT}},
   "blob_redirect": true}         # blobs answer 307 to https://localhost:PORT/cdn/... (another host name,
                                  # as a registry's storage is), which, like a storage bucket, refuses a
                                  # request that carries an Authorization header (400)

GET /v2/NAME/manifests/REF answers only when the Accept header names the stored media type (as a
registry that cannot convert does), with Content-Type and Docker-Content-Digest (the sha256 of the body,
or "digest_header" when given). Errors are {"errors": [{"code", "message"}]}. A 401 carries
WWW-Authenticate: Bearer realm="...",service="stand-in registry",scope="repository:NAME:pull".
LOG_FILE gets one JSON line per request: {"path", "status", "auth", "accept"}.
"""
import argparse
import hashlib
import http.server
import json
import os
import re
import ssl
import threading
import time
from urllib.parse import urlsplit

state = {}
ROUTE = re.compile(r"^/v2/(.+)/(manifests|blobs)/([^/]+)$")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("state")
    ap.add_argument("log_file")
    ap.add_argument("--ready-fd", type=int, required=True)
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    args = ap.parse_args()
    log = open(args.log_file, "a", buffering=1)
    lock = threading.Lock()
    port = [0]

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def send(self, status, body, headers=()):
            data = body if isinstance(body, bytes) else body.encode()
            # Logged before the answer goes out: a client that has its answer finds the request in the log.
            with lock:
                log.write(json.dumps({"path": self.path, "status": status,
                                      "auth": self.headers.get("Authorization", ""),
                                      "accept": self.headers.get("Accept", "")}) + "\n")
            self.send_response(status)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def error(self, status, code, message, headers=()):
            body = json.dumps({"errors": [{"code": code, "message": message, "detail": None}]})
            self.send(status, body, [("Content-Type", "application/json")] + list(headers))

        def challenge(self, name):
            realm = state.get("realm") or f"https://127.0.0.1:{port[0]}/token"
            value = f'Bearer realm="{realm}",service="stand-in registry",scope="repository:{name}:pull"'
            self.error(401, "UNAUTHORIZED", "authentication required", [("WWW-Authenticate", value)])

        def do_GET(self):
            global state
            with open(args.state) as f:  # read per request: a test rewrites it between scenarios
                state = json.load(f)
            url = urlsplit(self.path)
            if url.path == "/token":
                status = state.get("token_status", 200)
                if status != 200:
                    return self.send(status, json.dumps({"details": "incorrect username or password"}),
                                     [("Content-Type", "application/json")])
                token = state.get("token") or ""
                body = json.dumps({"token": token, "access_token": token, "expires_in": 300,
                                   "issued_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
                return self.send(200, body, [("Content-Type", "application/json")])
            if url.path.startswith("/cdn/"):
                if self.headers.get("Authorization"):
                    return self.send(400, "Only one auth mechanism allowed\n")
                name, _, digest = url.path[5:].rpartition("/")
                blob = state.get("blobs", {}).get(name, {}).get(digest)
                if blob is None:
                    return self.send(404, "no such object\n")
                return self.send(200, blob, [("Content-Type", "application/octet-stream")])
            m = ROUTE.match(url.path)
            if not m:
                return self.error(404, "NOT_FOUND", "not found")
            name, kind, ref = m.groups()
            token = state.get("token")
            if token and self.headers.get("Authorization") != "Bearer " + token:
                return self.challenge(name)
            if name in state.get("private", []):
                return self.challenge(name)
            if kind == "blobs":
                blob = state.get("blobs", {}).get(name, {}).get(ref)
                if blob is None:
                    return self.error(404, "BLOB_UNKNOWN", "blob unknown to registry")
                if state.get("blob_redirect"):
                    return self.send(307, "", [("Location", f"https://localhost:{port[0]}/cdn/{name}/{ref}")])
                return self.send(200, blob, [("Content-Type", "application/octet-stream"),
                                             ("Docker-Content-Digest", ref)])
            entry = state.get("manifests", {}).get(name, {}).get(ref)
            accept = [a.strip().split(";")[0] for a in self.headers.get("Accept", "").split(",")]
            if entry is None or entry["type"] not in accept:
                return self.error(404, "MANIFEST_UNKNOWN", "manifest unknown")
            body = entry["body"].encode()
            digest = entry.get("digest_header") or "sha256:" + hashlib.sha256(body).hexdigest()
            self.send(200, body, [("Content-Type", entry["type"]), ("Docker-Content-Digest", digest)])

    parent = os.getppid()

    def watchdog():  # exit with whoever started us, even when it was SIGKILLed
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watchdog, daemon=True).start()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(args.cert, args.key)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    port[0] = server.server_address[1]
    os.write(args.ready_fd, b"%d\n" % port[0])  # listening since ThreadingHTTPServer()
    os.close(args.ready_fd)
    server.serve_forever()


if __name__ == "__main__":
    main()
