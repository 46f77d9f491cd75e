#!/usr/bin/env python3
"""Pushes an image to the simulated registry (registry.sh) over the Distribution API, no Docker needed.

    registry_push.py push REF [--rootfs DIR] [--format docker|oci|oci-index|docker-list] [--platforms LIST]
                          [--extra-layer-mb N] [--cmd ARG]... [--label K=V]... [--json FILE] [ENV=VALUE]...
    registry_push.py request [--auth] [-H 'Name: value']... METHOD URL

Both connect to --connect (default 127.0.0.1) whatever host a URL names, and check the server's certificate
against --cacert for that host name, as a client that resolves nvcr.io to the registry would.

push builds one gzip'd tar layer from --rootfs (files owned by root, times fixed, so the same tree gives the
same digests), plus with --extra-layer-mb N a second layer holding N MiB of incompressible bytes (a seeded
generator: the same REF gives the same layer), an image configuration like NGC's (config.Env: a PATH and the
ENV=VALUE arguments; rootfs.diff_ids; history), and uploads blobs (POST, then a monolithic PUT ?digest=) and
manifests (PUT) as the API describes (https://distribution.github.io/distribution/spec/api/). Formats:
`docker` (default): one application/vnd.docker.distribution.manifest.v2+json for the first platform; `oci`:
one application/vnd.oci.image.manifest.v1+json; `oci-index`: an application/vnd.oci.image.index.v1+json over
--platforms (default amd64,arm64), each platform its own configuration and manifest; `docker-list`: the same
as a Docker manifest list. --platforms without --format means oci-index. It prints the digest `docker pull
REF` records (the manifest's, or the index's). With --json FILE it also writes every digest it pushed.

A registry that answers 401 with `WWW-Authenticate: Bearer realm=...,service=...` gets the token dance of
https://distribution.github.io/distribution/spec/auth/token/: GET realm?service=S&scope=repository:NAME:pull,push,
then the request again with `Authorization: Bearer TOKEN`.

request prints the answer's status line, headers, a blank line and the body (--auth: the token dance too);
with --wait SECONDS it retries a refused connection until then. Standard library only.
"""

import argparse
import base64
import gzip
import hashlib
import http.client
import io
import json
import os
import random
import re
import socket
import ssl
import sys
import tarfile
import tempfile
import time
import urllib.parse

DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"
DOCKER_CONFIG = "application/vnd.docker.container.image.v1+json"
DOCKER_LAYER = "application/vnd.docker.image.rootfs.diff.tar.gzip"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
OCI_LAYER = "application/vnd.oci.image.layer.v1.tar+gzip"
DEFAULT_PATH = "PATH=/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
CREATED = "2025-12-01T00:00:00Z"
VARIANTS = {"arm64": "v8", "arm": "v7"}


class Client:
    """HTTPS to one address for every host name, with the Bearer token dance on 401."""

    def __init__(self, connect, cacert, scope_actions="pull,push"):
        self.connect = connect
        self.ctx = ssl.create_default_context(cafile=cacert) if cacert else ssl.create_default_context()
        self.tokens = {}  # repository name -> token
        self.scope_actions = scope_actions

    def raw(self, method, url, headers=None, body=None, length=None):
        u = urllib.parse.urlsplit(url)
        port = u.port or (443 if u.scheme == "https" else 80)
        if u.scheme == "https":
            conn = http.client.HTTPSConnection(u.hostname, port, context=self.ctx, timeout=120)
        else:
            conn = http.client.HTTPConnection(u.hostname, port, timeout=120)
        # the socket goes to --connect, the TLS check (SNI, name) stays the URL's host
        conn.sock = socket.create_connection((self.connect, port), timeout=120)
        if u.scheme == "https":
            conn.sock = self.ctx.wrap_socket(conn.sock, server_hostname=u.hostname)
        path = u.path + ("?" + u.query if u.query else "")
        hdrs = {"User-Agent": "gpuprep-sim-registry-push"}
        hdrs.update(headers or {})
        if length is not None:
            hdrs["Content-Length"] = str(length)
        conn.request(method, path or "/", body=body, headers=hdrs)
        resp = conn.getresponse()
        data = resp.read()
        conn.close()
        return resp.status, resp.getheaders(), data

    def call(self, method, url, repo, headers=None, body=None, length=None):
        hdrs = dict(headers or {})
        if repo in self.tokens:
            hdrs["Authorization"] = "Bearer " + self.tokens[repo]
        if hasattr(body, "seek"):
            body.seek(0)
        status, rh, data = self.raw(method, url, hdrs, body, length)
        challenge = header(rh, "WWW-Authenticate")
        if status == 401 and challenge and challenge.lower().startswith("bearer "):
            self.tokens[repo] = self.token(challenge, repo)
            hdrs["Authorization"] = "Bearer " + self.tokens[repo]
            if hasattr(body, "seek"):
                body.seek(0)
            status, rh, data = self.raw(method, url, hdrs, body, length)
        return status, rh, data

    def token(self, challenge, repo):
        params = dict(re.findall(r'(\w+)="([^"]*)"', challenge))
        if "realm" not in params:
            raise SystemExit("registry_push: a Bearer challenge without realm: " + challenge)
        query = {"service": params.get("service", "")}
        query["scope"] = "repository:%s:%s" % (repo, self.scope_actions) if repo else params.get("scope", "")
        url = params["realm"] + ("&" if "?" in params["realm"] else "?") + urllib.parse.urlencode(query)
        status, _, data = self.raw("GET", url)
        if status != 200:
            raise SystemExit("registry_push: token server answered %d: %s" % (status, data[:200]))
        answer = json.loads(data)
        return answer.get("token") or answer["access_token"]


def header(headers, name):
    for k, v in headers:
        if k.lower() == name.lower():
            return v
    return None


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return "sha256:" + h.hexdigest()


def _reset(info):
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    info.mtime = 1764547200  # CREATED
    return info


def layer_from_rootfs(rootfs, workdir, name):
    """(tar.gz path, compressed digest, size, diff_id) of the tree under rootfs."""
    tar_path = os.path.join(workdir, name + ".tar")
    with tarfile.open(tar_path, "w", format=tarfile.PAX_FORMAT) as tar:
        for top, dirs, files in os.walk(rootfs):
            dirs.sort()
            for entry in sorted(dirs + files):
                full = os.path.join(top, entry)
                arc = os.path.relpath(full, rootfs)
                tar.add(full, arcname=arc, recursive=False, filter=_reset)
    return gzip_layer(tar_path, workdir, name, 6)


def layer_random(megabytes, seed, workdir, name):
    tar_path = os.path.join(workdir, name + ".tar")
    rng = random.Random(seed)
    size = megabytes << 20
    with tarfile.open(tar_path, "w", format=tarfile.PAX_FORMAT) as tar:
        info = _reset(tarfile.TarInfo("opt"))
        info.type, info.mode = tarfile.DIRTYPE, 0o755
        tar.addfile(info)
        info = _reset(tarfile.TarInfo("opt/random.bin"))
        info.size, info.mode = size, 0o644
        tar.addfile(info, io.BytesIO(rng.randbytes(size)))
    return gzip_layer(tar_path, workdir, name, 1)


def gzip_layer(tar_path, workdir, name, level):
    diff_id = sha256_file(tar_path)
    gz_path = os.path.join(workdir, name + ".tar.gz")
    with open(tar_path, "rb") as src, open(gz_path, "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=level, mtime=0) as gz:
            for block in iter(lambda: src.read(1 << 20), b""):
                gz.write(block)
    os.unlink(tar_path)
    return gz_path, sha256_file(gz_path), os.path.getsize(gz_path), diff_id


class Pusher:
    def __init__(self, client, host, repo):
        self.client, self.base, self.repo = client, "https://%s/v2/%s" % (host, repo), repo

    def blob(self, path=None, data=None):
        """Uploads a blob (a file or bytes) unless the registry has it; returns (digest, size)."""
        if path is not None:
            digest, size = sha256_file(path), os.path.getsize(path)
        else:
            digest, size = "sha256:" + hashlib.sha256(data).hexdigest(), len(data)
        status, _, _ = self.client.call("HEAD", "%s/blobs/%s" % (self.base, digest), self.repo)
        if status == 200:
            return digest, size
        status, rh, body = self.client.call("POST", self.base + "/blobs/uploads/", self.repo, length=0)
        if status != 202:
            raise SystemExit("registry_push: upload start answered %d: %s" % (status, body[:300]))
        loc = urllib.parse.urljoin(self.base + "/", header(rh, "Location"))
        loc += ("&" if "?" in loc else "?") + urllib.parse.urlencode({"digest": digest})
        hdrs = {"Content-Type": "application/octet-stream"}
        if path is not None:
            with open(path, "rb") as f:
                status, _, body = self.client.call("PUT", loc, self.repo, hdrs, f, size)
        else:
            status, _, body = self.client.call("PUT", loc, self.repo, hdrs, data, size)
        if status != 201:
            raise SystemExit("registry_push: blob %s upload answered %d: %s" % (digest, status, body[:300]))
        return digest, size

    def manifest(self, reference, media_type, doc):
        data = json.dumps(doc, indent=3).encode()
        status, _, body = self.client.call("PUT", "%s/manifests/%s" % (self.base, reference), self.repo,
                                           {"Content-Type": media_type}, data, len(data))
        if status != 201:
            raise SystemExit("registry_push: manifest %s answered %d: %s" % (reference, status, body[:300]))
        return "sha256:" + hashlib.sha256(data).hexdigest(), len(data)


def parse_ref(ref):
    host, _, rest = ref.partition("/")
    if not rest or "." not in host and ":" not in host and host != "localhost":
        raise SystemExit("registry_push: REF must name its registry host: " + ref)
    if "@" in rest:
        raise SystemExit("registry_push: push by tag, not by digest: " + ref)
    repo, _, tag = rest.rpartition(":") if ":" in rest else (rest, "", "latest")
    return host, repo, tag


def push(args):
    host, repo, tag = parse_ref(args.ref)
    fmt = args.format or ("oci-index" if args.platforms else "docker")
    platforms = (args.platforms or ("amd64,arm64" if fmt in ("oci-index", "docker-list") else "amd64")).split(",")
    oci = fmt in ("oci", "oci-index")
    env = [DEFAULT_PATH] if not any(e.startswith("PATH=") for e in args.env) else []
    env += args.env
    for e in args.env:
        if "=" not in e:
            raise SystemExit("registry_push: not ENV=VALUE: " + e)
    client = Client(args.connect, args.cacert)
    pusher = Pusher(client, host, repo)
    report = {"ref": args.ref, "format": fmt, "layers": [], "manifests": {}}
    with tempfile.TemporaryDirectory(prefix="registry-push.") as work:
        layers = []
        if args.rootfs:
            layers.append(layer_from_rootfs(args.rootfs, work, "rootfs"))
        if args.extra_layer_mb:
            layers.append(layer_random(args.extra_layer_mb, args.ref, work, "extra"))
        if not layers:
            raise SystemExit("registry_push: no layer (give --rootfs DIR and/or --extra-layer-mb N)")
        descs = []
        for gz_path, digest, size, diff_id in layers:
            pusher.blob(path=gz_path)
            descs.append({"mediaType": OCI_LAYER if oci else DOCKER_LAYER, "size": size, "digest": digest})
            report["layers"].append({"digest": digest, "size": size, "diff_id": diff_id})
        entries = []
        for arch in platforms:
            config = {
                "architecture": arch,
                "os": "linux",
                "created": CREATED,
                "config": {"Env": env, "Cmd": args.cmd or ["/bin/sh"], "WorkingDir": args.workdir,
                           "Labels": dict(kv.split("=", 1) for kv in args.label) or None},
                "rootfs": {"type": "layers", "diff_ids": [layer[3] for layer in layers]},
                "history": [{"created": CREATED, "created_by": "registry_push.py layer %d" % i}
                            for i in range(len(layers))],
            }
            if arch in VARIANTS:
                config["variant"] = VARIANTS[arch]
            cdata = json.dumps(config, sort_keys=True).encode()
            cdigest, csize = pusher.blob(data=cdata)
            mtype = OCI_MANIFEST if oci else DOCKER_MANIFEST
            manifest = {"schemaVersion": 2, "mediaType": mtype,
                        "config": {"mediaType": OCI_CONFIG if oci else DOCKER_CONFIG, "size": csize, "digest": cdigest},
                        "layers": descs}
            single = fmt in ("docker", "oci")
            mdigest, msize = pusher.manifest(tag if single else "sha256:" + hashlib.sha256(
                json.dumps(manifest, indent=3).encode()).hexdigest(), mtype, manifest)
            report["manifests"][arch] = {"digest": mdigest, "config": cdigest}
            platform = {"architecture": arch, "os": "linux"}
            if arch in VARIANTS:
                platform["variant"] = VARIANTS[arch]
            entries.append({"mediaType": mtype, "size": msize, "digest": mdigest, "platform": platform})
            if single:
                report["digest"] = mdigest
                break
        if fmt in ("oci-index", "docker-list"):
            itype = OCI_INDEX if oci else DOCKER_LIST
            report["digest"], _ = pusher.manifest(tag, itype, {"schemaVersion": 2, "mediaType": itype,
                                                               "manifests": entries})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
    print(report["digest"])


def request(args):
    client = Client(args.connect, args.cacert, "pull")
    headers = dict(h.split(":", 1) for h in args.header)
    headers = {k.strip(): v.strip() for k, v in headers.items()}
    repo = ""
    m = re.match(r"https?://[^/]+/v2/(.+)/(manifests|blobs|tags)/", args.url)
    if m:
        repo = m.group(1)
    deadline = time.monotonic() + args.wait
    while True:
        try:
            if args.auth:
                status, rh, data = client.call(args.method, args.url, repo, headers)
            else:
                status, rh, data = client.raw(args.method, args.url, headers)
            break
        except (ConnectionRefusedError, ConnectionResetError, ssl.SSLError, socket.timeout) as e:
            if time.monotonic() >= deadline:
                print("registry_push: %s: %s" % (args.url, e), file=sys.stderr)
                return 7
            time.sleep(0.05)
    out = sys.stdout.buffer
    out.write(("HTTP %d\n" % status).encode())
    for k, v in rh:
        out.write(("%s: %s\n" % (k, v)).encode())
    out.write(b"\n" + data)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--connect", default="127.0.0.1", help="address every connection goes to")
    ap.add_argument("--cacert", help="CA bundle the server's certificate must chain to")
    sub = ap.add_subparsers(dest="mode", required=True)
    p = sub.add_parser("push")
    p.add_argument("ref")
    p.add_argument("env", nargs="*", help="ENV=VALUE for config.Env")
    p.add_argument("--rootfs")
    p.add_argument("--format", choices=["docker", "oci", "oci-index", "docker-list"])
    p.add_argument("--platforms")
    p.add_argument("--extra-layer-mb", type=int, default=0)
    p.add_argument("--cmd", action="append", default=[])
    p.add_argument("--label", action="append", default=[])
    p.add_argument("--workdir", default="/")
    p.add_argument("--json")
    r = sub.add_parser("request")
    r.add_argument("method")
    r.add_argument("url")
    r.add_argument("-H", "--header", action="append", default=[])
    r.add_argument("--auth", action="store_true")
    r.add_argument("--wait", type=float, default=0)
    args, rest = ap.parse_known_args()  # ENV=VALUE words may follow options
    bad = [w for w in rest if w.startswith("-") or "=" not in w or args.mode != "push"]
    if bad:
        ap.error("unrecognized arguments: " + " ".join(bad))
    if args.mode == "push":
        args.env += rest
        push(args)
        return 0
    return request(args)


if __name__ == "__main__":
    sys.exit(main())
