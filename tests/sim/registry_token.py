#!/usr/bin/env python3
"""The token server of the simulated registry (registry.sh), as NGC's realm plays it for nvcr.io.

    registry_token.py --listen 127.0.0.1:PORT --cert CRT --key KEY --sign-key KEY --sign-cert CRT
                      --issuer NAME [--log FILE]

Answers GET /proxy_auth?service=S&scope=repository:NAME:ACTIONS (scope repeatable, any account, anonymous
included) over HTTPS with {"token", "access_token", "expires_in", "issued_at"}: a JWT (RFC 7519) signed RS256
by --sign-key through openssl, whose header carries --sign-cert in `x5c` (RFC 7515 4.1.6), the chain the
registry checks against its `auth.token.rootcertbundle`; claims iss, sub, aud (= service), exp, nbf, iat, jti
and `access` as https://distribution.github.io/distribution/spec/auth/jwt/ describes. Every request is logged
to --log as one line: `service=S scope=SCOPE... account=A`. Standard library only (and the openssl command).
"""

import argparse
import base64
import json
import os
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def cert_der(path):
    with open(path) as f:
        pem = f.read()
    body = pem.split("-----BEGIN CERTIFICATE-----")[1].split("-----END CERTIFICATE-----")[0]
    return base64.b64decode("".join(body.split()))


class Issuer:
    def __init__(self, sign_key, sign_cert, issuer):
        self.sign_key, self.issuer = sign_key, issuer
        self.x5c = [base64.b64encode(cert_der(sign_cert)).decode()]
        self.count = 0
        self.lock = threading.Lock()

    def token(self, service, scopes, account):
        now = int(time.time())
        with self.lock:
            self.count += 1
            jti = "sim-%d-%d" % (os.getpid(), self.count)
        access = []
        for scope in scopes:
            kind, _, rest = scope.partition(":")
            name, _, actions = rest.rpartition(":")
            if kind and name:
                access.append({"type": kind, "name": name, "actions": [a for a in actions.split(",") if a]})
        claims = {"iss": self.issuer, "sub": account, "aud": service, "exp": now + 3600, "nbf": now - 60,
                  "iat": now, "jti": jti, "access": access}
        head = {"typ": "JWT", "alg": "RS256", "x5c": self.x5c}
        signing_input = b64url(json.dumps(head).encode()) + "." + b64url(json.dumps(claims).encode())
        sig = subprocess.run(["openssl", "dgst", "-sha256", "-sign", self.sign_key], input=signing_input.encode(),
                             capture_output=True, check=True).stdout
        return signing_input + "." + b64url(sig), now


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--listen", required=True)
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--sign-key", required=True)
    ap.add_argument("--sign-cert", required=True)
    ap.add_argument("--issuer", required=True)
    ap.add_argument("--log")
    args = ap.parse_args()
    issuer = Issuer(args.sign_key, args.sign_cert, args.issuer)
    log_lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *a):
            pass

        def do_GET(self):
            u = urllib.parse.urlsplit(self.path)
            q = urllib.parse.parse_qs(u.query)
            account = q.get("account", [""])[0]
            auth = self.headers.get("Authorization", "")
            if not account and auth.lower().startswith("basic "):
                try:
                    account = base64.b64decode(auth[6:]).decode().split(":", 1)[0]
                except ValueError:
                    account = "?"
            if u.path != "/proxy_auth":
                self.answer(404, {"errors": [{"code": "NOT_FOUND", "message": "no such path"}]})
                return
            service = q.get("service", [""])[0]
            scopes = q.get("scope", [])
            if args.log:
                with log_lock, open(args.log, "a") as f:
                    f.write("service=%s scope=%s account=%s\n" % (service, " ".join(scopes), account or "-"))
            token, now = issuer.token(service, scopes, account)
            self.answer(200, {"token": token, "access_token": token, "expires_in": 3600,
                              "issued_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))})

        def answer(self, status, doc):
            body = json.dumps(doc).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    host, port = args.listen.rsplit(":", 1)
    server = ThreadingHTTPServer((host, int(port)), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(args.cert, args.key)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    server.daemon_threads = True
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
