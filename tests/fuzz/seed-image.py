#!/usr/bin/env python3
"""Writes the seeds of the image fuzz target (corpus/image/): layer tars
(plain, gzip, whiteouts and an opaque directory, a '..' name, a hard link
out of the root, a layer of zero blocks, library links out of the root) and image archives as an engine's
export writes them (docker save before 25, and the OCI layout with
manifest.json beside it, and one naming a layer it lacks), around a small
real CUDA library. The library the committed seeds hold was made with

  printf '__global__ void k(float* x){ x[threadIdx.x] *= 2.0f; }\\n' > k.cu
  nvcc -shared -Xcompiler -fPIC -cudart=none -gencode arch=compute_80,code=sm_80 \\
       -gencode arch=compute_80,code=compute_80 -o libk.so.12 k.cu && strip libk.so.12

(nvcc 13.0: 18 KiB, sm_80 SASS and compute_80 PTX).

usage: seed-image.py LIBRARY OUT_DIR
"""
import tarfile, io, gzip, json, hashlib, sys, os
lib = open(sys.argv[1], 'rb').read()
out = sys.argv[2]

def tar(entries, fmt=tarfile.PAX_FORMAT):
    b = io.BytesIO()
    with tarfile.open(fileobj=b, mode='w', format=fmt) as t:
        for e in entries:
            kind, name = e[0], e[1]
            ti = tarfile.TarInfo(name)
            if kind == 'file':
                ti.size = len(e[2]); t.addfile(ti, io.BytesIO(e[2]))
            elif kind == 'dir':
                ti.type = tarfile.DIRTYPE; t.addfile(ti)
            elif kind == 'sym':
                ti.type = tarfile.SYMTYPE; ti.linkname = e[2]; t.addfile(ti)
            elif kind == 'hard':
                ti.type = tarfile.LNKTYPE; ti.linkname = e[2]; t.addfile(ti)
    return b.getvalue()

status = b"""Package: libcublas-12-4
Status: install ok installed
Version: 12.4.5.8-1

"""
version_json = json.dumps({"libcublas": {"name": "CUDA cuBLAS", "version": "12.4.5.8"}}).encode()
layer1 = tar([('dir','usr/'),('dir','usr/lib/'),('file','usr/lib/libcublas.so.12.4.5.8',lib),
              ('sym','usr/lib/libcublas.so.12','libcublas.so.12.4.5.8'),
              ('hard','usr/lib/libcopy.so','usr/lib/libcublas.so.12.4.5.8'),
              ('file','var/lib/dpkg/status',status),('file','usr/local/cuda-12.4/version.json',version_json),
              ('file','opt/old/libold.so',lib)])
layer2 = tar([('file','opt/old/.wh.libold.so',b''),('dir','usr/local/'),('file','usr/local/.wh..wh..opq',b''),
              ('file','usr/lib/libcudart.so.12',b'\x7fELF'+b'\0'*60)])
hostile = tar([('file','../escape.so',lib)])
hostile_link = tar([('hard','usr/lib/x.so','../../etc/shadow')])
def w(name, data): open(os.path.join(out, name),'wb').write(data)
w('layer-plain.tar', layer1)
w('layer-gzip.tar.gz', gzip.compress(layer1, mtime=0))
w('layer-whiteouts.tar', layer2)
w('layer-dotdot.tar', hostile)
w('layer-hardlink-out.tar', hostile_link)
w('layer-empty-zero-blocks.tar', b'\0'*1024)
# Issue 28: library names that are links out of the image, missing, a loop,
# and one reached through a linked directory; a status.d file.
links = tar([('sym','lib','usr/lib'),('file','usr/lib/libcublas.so.12.4.5.8',lib),
             ('sym','usr/lib/libcublas.so.12','/lib/./libcublas.so.12.4.5.8'),
             ('sym','usr/lib/libcudart.so.12','/etc/shadow'),
             ('sym','usr/lib/libcufft.so.11','../../../../etc/shadow'),
             ('sym','usr/lib/libnccl.so.2','libnccl.so.2'),
             ('file','var/lib/dpkg/status.d/libcudnn9',
              b'Package: libcudnn9-cuda-12\nStatus: install ok installed\nVersion: 9.1.0.70-1\n')])
w('layer-links-out.tar', links)

def sha(b): return hashlib.sha256(b).hexdigest()
config = json.dumps({"architecture":"amd64","os":"linux","config":{"Env":["NVIDIA_REQUIRE_CUDA=cuda>=12.4"]},
                     "rootfs":{"type":"layers","diff_ids":["sha256:"+sha(layer1),"sha256:"+sha(layer2)]}}).encode()
# docker save before 25: <id>/layer.tar, <id>.json, manifest.json (written last)
legacy = tar([('file','aaa/layer.tar',layer1),('file','bbb/layer.tar',layer2),('file','ccc.json',config),
              ('file','manifest.json',json.dumps([{"Config":"ccc.json","RepoTags":["x:1"],"Layers":["aaa/layer.tar","bbb/layer.tar"]}]).encode())])
w('archive-legacy.tar', legacy)
# docker 25+: OCI layout blobs with manifest.json beside index.json
man = json.dumps({"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",
  "config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:"+sha(config),"size":len(config)},
  "layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:"+sha(l),"size":len(l)} for l in (layer1,layer2)]}).encode()
index = json.dumps({"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:"+sha(man),"size":len(man)}]}).encode()
oci = tar([('file','blobs/sha256/'+sha(layer1),layer1),('file','blobs/sha256/'+sha(layer2),layer2),
           ('file','blobs/sha256/'+sha(config),config),('file','blobs/sha256/'+sha(man),man),
           ('file','oci-layout',b'{"imageLayoutVersion":"1.0.0"}'),('file','index.json',index),
           ('file','manifest.json',json.dumps([{"Config":"blobs/sha256/"+sha(config),"RepoTags":["x:1"],
             "Layers":["blobs/sha256/"+sha(layer1),"blobs/sha256/"+sha(layer2)]}]).encode())])
w('archive-oci.tar', oci)
# manifest naming a layer the archive lacks
w('archive-missing-layer.tar', tar([('file','ccc.json',config),('file','manifest.json',json.dumps([{"Config":"ccc.json","Layers":["nope/layer.tar"]}]).encode())]))
