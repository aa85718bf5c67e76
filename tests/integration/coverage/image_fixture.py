"""Container images made byte by byte for the coverage suite (issue 16).

Layers are tar files written with Python's tarfile, so a test decides every
entry: whiteouts, hard links, names no engine would accept. An image goes
to the engine as a `docker load` archive (legacy layout: manifest.json,
config, <id>/layer.tar) or to a registry as OCI blobs and a manifest,
through the distribution API's monolithic upload. Only the standard library.
"""
import base64
import gzip
import hashlib
import http.client
import io
import json
import socket
import tarfile
import urllib.request


def sha256(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def layer(entries):
    """entries: tuples ("file", path, bytes), ("dir", path), ("symlink",
    path, target), ("hardlink", path, target), ("whiteout", path): a
    .wh. file for path, ("opaque", dir), ("declare", path, size): a header
    that declares size bytes with none after it."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for e in entries:
            kind, path = e[0], e[1]
            info = tarfile.TarInfo(path)
            info.mtime = 0
            if kind == "file":
                info.size = len(e[2])
                info.mode = 0o755
                tar.addfile(info, io.BytesIO(e[2]))
            elif kind == "dir":
                info.type = tarfile.DIRTYPE
                info.mode = 0o755
                tar.addfile(info)
            elif kind == "symlink":
                info.type = tarfile.SYMTYPE
                info.linkname = e[2]
                tar.addfile(info)
            elif kind == "hardlink":
                info.type = tarfile.LNKTYPE
                info.linkname = e[2]
                tar.addfile(info)
            elif kind in ("whiteout", "opaque"):
                parent, _, base = path.rpartition("/")
                name = ".wh..wh..opq" if kind == "opaque" else ".wh." + base
                info = tarfile.TarInfo((path if kind == "opaque" else parent) + "/" + name)
                info.mtime = 0
                tar.addfile(info, io.BytesIO(b""))
            elif kind == "declare":
                info.size = e[2]
                tar.addfile(info)  # the header alone: the data never follows
                return out.getvalue() + b"\0" * 1024
            else:
                raise ValueError(kind)
    return out.getvalue()


def config(layers, env=None, extra=None):
    """extra: raw JSON text set as the config's "x" (Python's json module
    cannot write the nesting a hostile config has)."""
    text = json.dumps({
        "architecture": "amd64",
        "os": "linux",
        "config": {"Env": env or ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
                   "Cmd": ["/bin/true"]},
        "rootfs": {"type": "layers", "diff_ids": [sha256(l) for l in layers]},
        "history": [{"created_by": "coverage fixture"} for _ in layers],
    }, sort_keys=True).encode()
    return text if extra is None else text[:-1] + b', "x": ' + extra + b"}"


def docker_archive(layers, tag, env=None):
    """A `docker load` archive of the layers (uncompressed tars) tagged tag."""
    cfg = config(layers, env)
    cfg_name = hashlib.sha256(cfg).hexdigest() + ".json"
    out = io.BytesIO()
    names = []
    with tarfile.open(fileobj=out, mode="w") as tar:
        def add(name, data):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 0
            tar.addfile(info, io.BytesIO(data))
        for i, l in enumerate(layers):
            name = "%064x/layer.tar" % (i + 1)
            names.append(name)
            add(name, l)
        add(cfg_name, cfg)
        add("manifest.json", json.dumps([{"Config": cfg_name, "RepoTags": [tag], "Layers": names}]).encode())
    return out.getvalue()


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout=300):
        super().__init__("localhost", timeout=timeout)
        self.unix_path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.unix_path)


def engine(sock, method, path, body=None, headers=None):
    conn = _UnixConnection(str(sock))
    conn.request(method, path, body=body, headers=headers or {})
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, data


def load(sock, archive):
    status, body = engine(sock, "POST", "/images/load?quiet=1", archive, {"Content-Type": "application/x-tar"})
    if status != 200 or b'"error"' in body:
        raise RuntimeError("docker load failed: %d %s" % (status, body[:400]))
    return body


def image_config(sock, ref):
    status, body = engine(sock, "GET", "/images/%s/json" % ref)
    if status != 200:
        raise RuntimeError("no image %s: %d %s" % (ref, status, body[:200]))
    return json.loads(body)


def _request(method, url, body=None, headers=None, auth=None):
    """auth: "USER:PASSWORD" for a registry that asks for Basic auth."""
    headers = dict(headers or {})
    if auth:
        headers["Authorization"] = "Basic " + base64.b64encode(auth.encode()).decode()
    req = urllib.request.Request(url, data=body, method=method, headers=headers)
    with urllib.request.urlopen(req, timeout=300) as resp:
        return resp.status, dict(resp.headers), resp.read()


def push_blob(registry, repo, data, auth=None):
    digest = sha256(data)
    _, headers, _ = _request("POST", "http://%s/v2/%s/blobs/uploads/" % (registry, repo), auth=auth)
    location = headers["Location"]
    if location.startswith("/"):
        location = "http://" + registry + location
    sep = "&" if "?" in location else "?"
    _request("PUT", location + sep + "digest=" + digest, data,
             {"Content-Type": "application/octet-stream", "Content-Length": str(len(data))}, auth)
    return digest


def push(registry, repo, tag, layers, compress=True, env=None, extra=None, auth=None):
    """Pushes an OCI image of the layers; returns the manifest's digest."""
    cfg = config(layers, env, extra)
    descriptors = []
    for l in layers:
        blob = gzip.compress(l, mtime=0) if compress else l
        descriptors.append({
            "mediaType": "application/vnd.oci.image.layer.v1.tar" + ("+gzip" if compress else ""),
            "digest": push_blob(registry, repo, blob, auth), "size": len(blob)})
    manifest = json.dumps({
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                   "digest": push_blob(registry, repo, cfg, auth), "size": len(cfg)},
        "layers": descriptors}).encode()
    _request("PUT", "http://%s/v2/%s/manifests/%s" % (registry, repo, tag), manifest,
             {"Content-Type": "application/vnd.oci.image.manifest.v1+json"}, auth)
    return sha256(manifest)


def registry_manifest(registry, repo, ref, auth=None):
    _, headers, body = _request("GET", "http://%s/v2/%s/manifests/%s" % (registry, repo, ref), None,
                                {"Accept": "application/vnd.oci.image.manifest.v1+json,"
                                           "application/vnd.docker.distribution.manifest.v2+json"}, auth)
    return json.loads(body)


def registry_blob(registry, repo, digest, auth=None):
    _, _, body = _request("GET", "http://%s/v2/%s/blobs/%s" % (registry, repo, digest), auth=auth)
    return body


def registry_tags(registry, repo, auth=None):
    _, _, body = _request("GET", "http://%s/v2/%s/tags/list" % (registry, repo), auth=auth)
    return sorted(json.loads(body)["tags"])
