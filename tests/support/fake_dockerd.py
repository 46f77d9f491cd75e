#!/usr/bin/env python3
"""A stand-in Docker Engine API on a unix socket (python3 stdlib only), shaped after Docker's API reference.

usage: fake_dockerd.py SOCKET RECORD [STATE] [--ready-fd FD]

With --ready-fd, FD is a file descriptor inherited from whoever started it: once it accepts connections
(and handles SIGHUP) it writes "ready" and a newline there, and after each SIGHUP's re-read "reloaded" and a
newline, so a test blocks on FD instead of polling the socket.

Every request is recorded as one JSON line in RECORD ({"method", "path", "query", "body"}).

Without STATE (the launch round-trip tests): /_ping, /version and /info answer; POST /containers/create is
recorded and refused with HTTP 400 "fake dockerd: create recorded", so the docker CLI stops there.

With STATE, a JSON file describing the engine, it behaves like an engine whose images come from a registry:
  {"version": "28.3.2", "api_version": "1.51",
   "daemon_json": "/etc/docker/daemon.json",       # read at start and on SIGHUP, like dockerd
   "hook": "/usr/bin/nvidia-container-runtime-hook", # dockerd registers the "nvidia" GPU driver when it exists
   "cdi_dirs": ["/etc/cdi", "/var/run/cdi"],
   "registry": {"nvcr.io/nvidia/pytorch:23.10-py3":   # what a pull can fetch (tag or @digest)
       {"digest": "sha256:...", "id": "sha256:...", "env": ["CUDA_VERSION=12.2.2.009", ...],
        "layers": [1000, 2000], "bin": "/path/to/image/bin"}},
   "images": {...same shape: images already present...},
   "pid_file": "/var/run/docker.pid",
   "store": "/var/lib/docker/images.json"}          # pulled images persist here, as dockerd's do

Endpoints: GET /_ping, /version, /info (Runtimes, DefaultRuntime, CDISpecDirs, DiscoveredDevices,
ContainersRunning), POST /images/create (chunked stream of progress JSON lines), GET /images/{name}/json,
GET /distribution/{name}/json, GET /containers/json, POST /containers/create, POST /containers/{id}/start,
POST /containers/{id}/wait, GET /containers/{id}/logs (multiplexed frames), DELETE /containers/{id}.
Errors are {"message": ...} with the engine's wording. A started container runs its Cmd here with PATH
set to the image's "bin" first, and gets GPU access only the way dockerd gives it: DeviceRequests with
capabilities [["gpu"]] need the nvidia hook, Driver "cdi" needs CDI enabled and a spec naming the device,
HostConfig.Runtime must be registered. The GPU environment (NVIDIA_VISIBLE_DEVICES) is what the toolkit sets.
"""
import glob
import json
import os
import re
import signal
import socketserver
import struct
import subprocess
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, unquote, urlsplit

API_VERSION = "1.47"
LOCK = threading.Lock()


def norm(ref):
    """docker.io/library/ implied; returns (name, tag_or_None, digest_or_None)."""
    digest = None
    if "@" in ref:
        ref, digest = ref.split("@", 1)
    tag = None
    slash = ref.rfind("/")
    colon = ref.rfind(":")
    if colon > slash:
        ref, tag = ref[:colon], ref[colon + 1:]
    first = ref.split("/", 1)[0]
    if "/" not in ref or not ("." in first or ":" in first or first == "localhost"):
        ref = "docker.io/" + ("library/" + ref if "/" not in ref else ref)
    return ref, tag, digest


class Engine:
    def __init__(self, state_path):
        self.state = {}
        self.images = {}      # "name:tag" and "name@digest" -> image dict
        self.containers = {}
        self.daemon = {}
        if state_path:
            with open(state_path) as f:
                self.state = json.load(f)
            for ref, img in self.state.get("images", {}).items():
                self._add_image(ref, img)
            store = self.state.get("store")
            if store and os.path.exists(store):
                self.images.update(json.load(open(store)))
        self.reload()

    def _add_image(self, ref, img):
        name, tag, digest = norm(ref)
        img = dict(img)
        img.setdefault("repo", name)
        self.images[name + ":" + (tag or "latest")] = img
        if img.get("digest"):
            self.images[name + "@" + img["digest"]] = img

    def reload(self):
        path = self.state.get("daemon_json")
        daemon = {}
        if path and os.path.exists(path):
            text = open(path).read()
            if text.strip():
                daemon = json.loads(text)  # dockerd refuses to (re)load an invalid file; so do we
        self.daemon = daemon or {}

    def runtimes(self):
        rts = {"io.containerd.runc.v2": {"path": "runc"}, "runc": {"path": "runc"}}
        for k, v in (self.daemon.get("runtimes") or {}).items():
            rts[k] = v
        return rts

    def cdi_enabled(self):
        feats = self.daemon.get("features") or {}
        if "cdi" in feats:
            return bool(feats["cdi"])
        major, minor = (int(x) for x in self.version().split(".")[:2])
        return (major, minor) >= (28, 3)

    def version(self):
        return self.state.get("version", "28.3.0")

    def cdi_devices(self):
        devices = []
        for d in self.state.get("cdi_dirs", ["/etc/cdi", "/var/run/cdi"]):
            for spec in sorted(glob.glob(os.path.join(d, "*.yaml")) + glob.glob(os.path.join(d, "*.json"))):
                kind, names = None, []
                for line in open(spec):
                    m = re.match(r'^kind:\s*"?([^"\s]+)"?', line)
                    if m:
                        kind = m.group(1)
                    m = re.match(r'^\s*-\s*name:\s*"?([^"\s]+)"?', line)
                    if m:
                        names.append(m.group(1))
                if kind:
                    devices += [kind + "=" + n for n in names]
        return devices

    def find_image(self, ref):
        name, tag, digest = norm(ref)
        key = name + "@" + digest if digest else name + ":" + (tag or "latest")
        img = self.images.get(key)
        if img is None and re.fullmatch(r"(sha256:)?[0-9a-f]{12,64}", ref):
            for i in self.images.values():
                if i.get("id", "").replace("sha256:", "").startswith(ref.replace("sha256:", "")):
                    return i
        return img

    def registry_image(self, name, tag):
        for ref, img in self.state.get("registry", {}).items():
            n, t, d = norm(ref)
            if n != name:
                continue
            if tag.startswith("sha256:") and img.get("digest") == tag:
                return img
            if t == tag:
                return img
        return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def address_string(self):  # unix sockets have no peer address
        return "unix"

    def log_message(self, fmt, *args):
        pass

    @property
    def engine(self):
        return self.server.engine

    def _record(self, body):
        url = urlsplit(self.path)
        entry = {"method": self.command, "path": url.path, "query": parse_qs(url.query), "body": body}
        with LOCK, open(self.server.record_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")

    def _headers(self, status, content_type):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Api-Version", self.engine.state.get("api_version", API_VERSION))
        self.send_header("Docker-Experimental", "false")
        self.send_header("Ostype", "linux")
        self.send_header("Server", "fake-dockerd")

    def _reply(self, status, payload, content_type="application/json"):
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self._headers(status, content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD" and data:
            self.wfile.write(data)

    def _error(self, status, message):
        return self._reply(status, {"message": message})

    def _stream(self, lines):
        """Chunked transfer of JSON lines, as dockerd streams a pull."""
        self._headers(200, "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for obj in lines:
            data = (json.dumps(obj) + "\r\n").encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")

    def _route(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        self._record(body)
        url = urlsplit(self.path)
        path = unquote(url.path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        m = re.match(r"^/v(1\.\d+)(/.*)$", path)
        if m:
            major_minor = tuple(int(x) for x in m.group(1).split("."))
            if major_minor > tuple(int(x) for x in self.engine.state.get("api_version", API_VERSION).split(".")):
                return self._error(400, "client version %s is too new. Maximum supported API version is %s"
                                   % (m.group(1), self.engine.state.get("api_version", API_VERSION)))
            path = m.group(2)
        stateful = bool(self.engine.state)
        e = self.engine
        if path == "/_ping":
            return self._reply(200, b"OK", "text/plain; charset=utf-8")
        if path == "/version":
            return self._reply(200, {"Version": e.version(), "ApiVersion": e.state.get("api_version", API_VERSION),
                                     "MinAPIVersion": "1.24", "Os": "linux", "Arch": "amd64",
                                     "KernelVersion": "5.15.0"})
        if path == "/info":
            if not stateful:
                return self._reply(200, {"ID": "fake", "OSType": "linux", "Runtimes": {"runc": {}, "nvidia": {}},
                                         "DefaultRuntime": "runc", "CDISpecDirs": ["/etc/cdi", "/var/run/cdi"]})
            running = sum(1 for c in e.containers.values() if c["state"] == "running")
            info = {"ID": "fake", "OSType": "linux", "ServerVersion": e.version(), "Runtimes": e.runtimes(),
                    "DefaultRuntime": e.daemon.get("default-runtime", "runc"),
                    "Containers": len(e.containers), "ContainersRunning": running,
                    "Images": len({id(i) for i in e.images.values()})}
            if e.cdi_enabled():
                info["CDISpecDirs"] = e.state.get("cdi_dirs", ["/etc/cdi", "/var/run/cdi"])
                info["DiscoveredDevices"] = [{"Source": "cdi", "ID": d} for d in e.cdi_devices()]
            else:
                info["CDISpecDirs"] = []
            return self._reply(200, info)
        if not stateful:
            if path == "/containers/create" and self.command == "POST":
                return self._error(400, "fake dockerd: create recorded")
            return self._error(404, "fake dockerd: not implemented: " + self.command + " " + path)
        if path == "/images/create" and self.command == "POST":
            return self._pull(query)
        m = re.match(r"^/images/(.+)/json$", path)
        if m and self.command == "GET":
            img = e.find_image(m.group(1))
            if img is None:
                return self._error(404, "No such image: " + m.group(1))
            return self._reply(200, {"Id": img.get("id", ""), "RepoTags": [], "Size": sum(img.get("layers", [])),
                                     "RepoDigests": [img["repo"] + "@" + img["digest"]] if img.get("digest") else [],
                                     "Config": {"Env": img.get("env", []), "Cmd": ["/bin/bash"]}})
        m = re.match(r"^/distribution/(.+)/json$", path)
        if m and self.command == "GET":
            name, tag, digest = norm(m.group(1))
            img = e.registry_image(name, digest or tag or "latest")
            if img is None:
                return self._error(403, "manifest unknown: manifest unknown")
            return self._reply(200, {"Descriptor": {"mediaType": "application/vnd.oci.image.index.v1+json",
                                                    "digest": img["digest"], "size": 1234},
                                     "Platforms": [{"architecture": "amd64", "os": "linux"}]})
        if path == "/containers/json" and self.command == "GET":
            return self._reply(200, [{"Id": cid, "State": c["state"]} for cid, c in e.containers.items()
                                     if c["state"] == "running" or query.get("all") in ("1", "true")])
        if path == "/containers/create" and self.command == "POST":
            return self._create(body or {})
        m = re.match(r"^/containers/([0-9a-f]+)(/start|/wait|/logs)?$", path)
        if m:
            c = e.containers.get(m.group(1))
            if c is None:
                return self._error(404, "No such container: " + m.group(1))
            action = m.group(2)
            if action == "/start" and self.command == "POST":
                return self._start(m.group(1), c)
            if action == "/wait" and self.command == "POST":
                return self._reply(200, {"StatusCode": c.get("exit", 0), "Error": None})
            if action == "/logs" and self.command == "GET":
                out = b""
                for stream, data in c.get("logs", []):
                    if (stream == 1 and query.get("stdout") in ("1", "true")) or \
                       (stream == 2 and query.get("stderr") in ("1", "true")):
                        out += struct.pack(">BxxxL", stream, len(data)) + data
                return self._reply(200, out, "application/vnd.docker.multiplexed-stream")
            if action is None and self.command == "DELETE":
                del e.containers[m.group(1)]
                return self._reply(204, b"", "text/plain")
        return self._error(404, "page not found")

    def _pull(self, query):
        e = self.engine
        name, _, _ = norm(query.get("fromImage", ""))
        tag = query.get("tag") or "latest"
        img = e.registry_image(name, tag)
        if img is None:
            if tag.startswith("sha256:"):
                return self._error(404, "manifest for %s@%s not found: manifest unknown: manifest unknown" % (name, tag))
            return self._error(404, "manifest for %s:%s not found: manifest unknown: manifest unknown" % (name, tag))
        lines = [{"status": "Pulling from " + name.split("/", 1)[1], "id": tag}]
        layer_ids = ["%012x" % (abs(hash((name, i))) % (1 << 48)) for i in range(len(img.get("layers", [])))]
        for lid in layer_ids:
            lines.append({"status": "Pulling fs layer", "progressDetail": {}, "id": lid})
        for lid, size in zip(layer_ids, img.get("layers", [])):
            for cur in (size // 2, size):
                lines.append({"status": "Downloading", "progressDetail": {"current": cur, "total": size},
                              "progress": "[=====>   ]", "id": lid})
            lines.append({"status": "Download complete", "progressDetail": {}, "id": lid})
            lines.append({"status": "Pull complete", "progressDetail": {}, "id": lid})
        lines.append({"status": "Digest: " + img["digest"]})
        shown = name + ("@" if tag.startswith("sha256:") else ":") + tag
        lines.append({"status": "Status: Downloaded newer image for " + shown})
        with LOCK:
            stored = dict(img)
            stored["repo"] = name
            if not tag.startswith("sha256:"):
                e.images[name + ":" + tag] = stored
            e.images[name + "@" + img["digest"]] = stored
            store = e.state.get("store")
            if store:
                os.makedirs(os.path.dirname(store), exist_ok=True)
                with open(store + ".new", "w") as f:
                    json.dump(e.images, f)
                os.replace(store + ".new", store)
        return self._stream(lines)

    def _create(self, body):
        e = self.engine
        image = body.get("Image", "")
        if e.find_image(image) is None:
            return self._error(404, "No such image: " + image)
        hc = body.get("HostConfig") or {}
        runtime = hc.get("Runtime") or e.daemon.get("default-runtime") or "runc"
        if runtime not in e.runtimes():
            return self._error(400, "unknown or invalid runtime name: " + runtime)
        cid = uuid.uuid4().hex + uuid.uuid4().hex
        e.containers[cid] = {"state": "created", "body": body, "runtime": runtime}
        return self._reply(201, {"Id": cid, "Warnings": []})

    def _start(self, cid, c):
        e = self.engine
        body = c["body"]
        hc = body.get("HostConfig") or {}
        env = dict(os.environ)
        for kv in e.find_image(body["Image"]).get("env", []) + (body.get("Env") or []):
            k, _, v = kv.partition("=")
            env[k] = v
        gpu = False
        for req in hc.get("DeviceRequests") or []:
            if req.get("Driver") == "cdi":
                if not e.cdi_enabled():
                    return self._error(500, 'could not select device driver "cdi" with capabilities: []')
                known = e.cdi_devices()
                missing = [d for d in req.get("DeviceIDs") or [] if d not in known]
                if missing:
                    return self._error(500, "failed to inject CDI devices: unresolvable CDI devices " +
                                       ", ".join(missing))
                gpu = True
            elif any("gpu" in caps for caps in req.get("Capabilities") or []):
                if not os.path.exists(e.state.get("hook", "/usr/bin/nvidia-container-runtime-hook")):
                    caps = json.dumps(req.get("Capabilities")).replace('"', "").replace(", ", " ")
                    return self._error(500, 'could not select device driver "%s" with capabilities: %s'
                                       % (req.get("Driver", ""), caps))
                gpu = True
        runtime_path = e.runtimes()[c["runtime"]].get("path", "")
        if c["runtime"] != "runc" and "/" in runtime_path and not os.path.exists(runtime_path):
            return self._error(500, "failed to create task for container: exec: \"%s\": stat %s: no such file or "
                               "directory" % (runtime_path, runtime_path))
        if not gpu:
            env["NVIDIA_VISIBLE_DEVICES"] = "void"
        img = e.find_image(body["Image"])
        if img.get("bin"):
            env["PATH"] = img["bin"] + ":" + env.get("PATH", "/usr/bin:/bin")
        try:
            p = subprocess.run(body.get("Cmd") or [], env=env, capture_output=True, timeout=120)
            c["exit"] = p.returncode
            c["logs"] = [(1, p.stdout), (2, p.stderr)]
        except FileNotFoundError:
            return self._error(400, "failed to create task for container: exec: \"%s\": executable file not found "
                               "in $PATH" % (body.get("Cmd") or [""])[0])
        c["state"] = "exited"
        return self._reply(204, b"", "text/plain")

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = _route


class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


def main():
    args = sys.argv[1:]
    ready_fd = None
    if "--ready-fd" in args:
        at = args.index("--ready-fd")
        ready_fd = int(args[at + 1])
        del args[at:at + 2]
    sock, record = args[0], args[1]
    engine = Engine(args[2] if len(args) > 2 else None)
    if os.path.exists(sock):
        os.unlink(sock)
    server = Server(sock, Handler)
    server.record_path = record
    server.engine = engine
    open(record, "a").close()
    def hup(*_):  # as dockerd: re-reads daemon.json; then acknowledges it on the readiness fd
        try:
            engine.reload()
        finally:
            if ready_fd is not None:
                os.write(ready_fd, b"reloaded\n")

    signal.signal(signal.SIGHUP, hup)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    pid_file = engine.state.get("pid_file")
    if pid_file:
        with open(pid_file, "w") as f:
            f.write(str(os.getpid()))
    if ready_fd is not None:  # listening since Server(), and SIGHUP is handled
        os.write(ready_fd, b"ready\n")
    try:
        server.serve_forever()
    finally:
        os.unlink(sock)
        if pid_file and os.path.exists(pid_file):
            os.unlink(pid_file)


if __name__ == "__main__":
    main()
