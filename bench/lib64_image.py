#!/usr/bin/python3
"""A `docker load` archive of a CUDA lib64 directory's libraries in four
layers (cuBLAS, cuDNN, the math libraries, the rest), written to disk as it
goes: the multi-gigabyte real image bench/image_scan.sh and docs/inspecting.md's
scan use.

usage: lib64_image.py LIB64 OUT.tar REPO:TAG
"""
import hashlib, io, json, os, sys, tarfile
lib64, out, tag = sys.argv[1], sys.argv[2], sys.argv[3]
names = sorted(n for n in os.listdir(lib64) if ".so" in n)
groups = [[n for n in names if n.startswith("libcublas")], [n for n in names if n.startswith("libcudnn")],
          [n for n in names if n.startswith(("libcufft", "libcusparse", "libcusolver", "libcurand"))]]
groups.append([n for n in names if not any(n in g for g in groups)])
layers, diff_ids = [], []
for i, group in enumerate(groups):
    path = os.path.join(os.path.dirname(out), "layer%d.tar" % i)
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as t:
        for d in ("usr", "usr/local", "usr/local/cuda", "usr/local/cuda/lib64"):
            info = tarfile.TarInfo(d); info.type = tarfile.DIRTYPE; info.mode = 0o755; t.addfile(info)
        for n in group:
            t.add(os.path.join(lib64, n), "usr/local/cuda/lib64/" + n, recursive=False)
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    layers.append(path); diff_ids.append("sha256:" + h.hexdigest())
config = json.dumps({"architecture": "amd64", "os": "linux", "config": {"Env": ["PATH=/usr/bin:/bin"]},
                     "rootfs": {"type": "layers", "diff_ids": diff_ids},
                     "history": [{"created_by": "bench/image_scan.sh"} for _ in layers]}).encode()
with tarfile.open(out, "w") as t:
    names = []
    for i, path in enumerate(layers):
        names.append("%064x/layer.tar" % (i + 1)); t.add(path, names[-1]); os.unlink(path)
    for name, data in (("config.json", config), ("manifest.json", json.dumps(
            [{"Config": "config.json", "RepoTags": [tag], "Layers": names}]).encode())):
        info = tarfile.TarInfo(name); info.size = len(data); t.addfile(info, io.BytesIO(data))
