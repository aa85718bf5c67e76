#!/usr/bin/env bash
# Scanning a real multi-gigabyte image (issue 16): the CUDA libraries of
# /usr/local/cuda/lib64 packed into an image of four layers, loaded into a
# private dockerd through the Engine API (POST /images/load) and pushed by
# that engine to a local docker-registry (POST /images/{name}/push: gzip
# layers, as every image on a registry has). Then, in the same run, best of
# three, alternating:
#   curl     the registry's plain download of every layer blob (no check)
#   curl|sha the same piped through sha256sum: the download with the digest
#            check every pull makes
#   curl|gz  the same piped through gzip -dc: download and inflate, the
#            least any reader of a gzip layer's content does
#   ours     orchestrate inspect oci://... --json: every layer streamed,
#            its digest checked, inflated, every ELF read and judged
# and the engine's side: its export alone (curl of GET /images/NAME/get)
# against inspect docker://, which reads that export
# and the same for an image pushed with uncompressed layers (the same
# libraries), where the download alone is the floor. The issue's goal: no
# slower than the download alone. dockerd and the registry are started
# here and stopped by PID.
#
#   bench/image_scan.sh [BUILD_DIR]   (default: build)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
[[ $build = /* ]] || build=$root/$build
orc=$build/orchestrator/orchestrate
[ -x "$orc" ] || { echo "image_scan: build $orc first" >&2; exit 2; }
lib64=${BENCH_LIB64:-/usr/local/cuda/lib64}

work=$(mktemp -d "${TMPDIR:-/tmp}/orc-image-bench.XXXXXX")
cleanup() {
  "$root/scripts/stop-registry.sh" "$work/registry" >/dev/null 2>&1 || true
  "$root/scripts/stop-dockerd.sh" "$work/d" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

sock=$("$root/scripts/start-dockerd.sh" "$work/d" 90 | tail -n 1)
"$root/scripts/start-registry.sh" "$work/registry" >/dev/null
port=$(cat "$work/registry/port")
registry=127.0.0.1:$port

# The image: four layers of lib64's regular files (symlinks kept as links).
/usr/bin/python3 "$root/bench/lib64_image.py" "$lib64" "$work/image.tar" cuda-libs:13.0
curl -sf --unix-socket "$sock" -X POST -H 'Content-Type: application/x-tar' -T "$work/image.tar" \
  'http://localhost/images/load?quiet=1' >/dev/null
rm -f "$work/image.tar"
auth=$(printf '{}' | base64)
curl -sf --unix-socket "$sock" -X POST "http://localhost/images/cuda-libs:13.0/tag?repo=$registry/cuda-libs&tag=13.0"
curl -sf --unix-socket "$sock" -X POST -H "X-Registry-Auth: $auth" \
  "http://localhost/images/$registry/cuda-libs/push?tag=13.0" >"$work/push.log"
if grep -q '"error"' "$work/push.log"; then echo "image_scan: push failed: $(tail -c 400 "$work/push.log")" >&2; exit 3; fi
# The same layers uncompressed, pushed by the suite's fixture (no engine compresses them).
/usr/bin/python3 - "$work" "$registry" "$root" <<'PY'
import json, os, sys, urllib.request
work, registry, root = sys.argv[1:]
sys.path.insert(0, os.path.join(root, "tests/integration/coverage"))
import image_fixture as fx
accept = {"Accept": "application/vnd.docker.distribution.manifest.v2+json,application/vnd.oci.image.manifest.v1+json"}
_, _, body = fx._request("GET", "http://%s/v2/cuda-libs/manifests/13.0" % registry, None, accept)
m = json.loads(body)
layers = []
for l in m["layers"]:
    # Inflate each gzip layer through a file, never the whole image in memory.
    import gzip, shutil, hashlib
    path = os.path.join(work, "plain.tar")
    with urllib.request.urlopen("http://%s/v2/cuda-libs/blobs/%s" % (registry, l["digest"])) as r, \
            gzip.open(r) as g, open(path, "wb") as f:
        shutil.copyfileobj(g, f, 1 << 20)
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    digest = "sha256:" + h.hexdigest()
    size = os.path.getsize(path)
    _, headers, _ = fx._request("POST", "http://%s/v2/cuda-libs-plain/blobs/uploads/" % registry)
    loc = headers["Location"]
    loc = ("http://" + registry + loc) if loc.startswith("/") else loc
    with open(path, "rb") as f:
        req = urllib.request.Request(loc + ("&" if "?" in loc else "?") + "digest=" + digest, data=f, method="PUT",
                                     headers={"Content-Length": str(size), "Content-Type": "application/octet-stream"})
        urllib.request.urlopen(req).read()
    os.unlink(path)
    layers.append({"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": digest, "size": size})
cfg = fx.registry_blob(registry, "cuda-libs", m["config"]["digest"])
manifest = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                       "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                                  "digest": fx.push_blob(registry, "cuda-libs-plain", cfg), "size": len(cfg)},
                       "layers": layers}).encode()
fx._request("PUT", "http://%s/v2/cuda-libs-plain/manifests/13.0" % registry, manifest,
            {"Content-Type": "application/vnd.oci.image.manifest.v1+json"})
PY

blobs() {  # the layer blob URLs of REPO:13.0
  curl -sf -H 'Accept: application/vnd.docker.distribution.manifest.v2+json,application/vnd.oci.image.manifest.v1+json' \
    "http://$registry/v2/$1/manifests/13.0" |
    /usr/bin/python3 -c 'import json,sys; [print(l["digest"], l["size"]) for l in json.load(sys.stdin)["layers"]]'
}
cat >"$work/tiers.yaml" <<'YAML'
tiers:
  tier-new: {gpus: ["A100", "RTX 4090", "H100", "H200"], driver: "580.95.05"}
  tier-next: {gpus: ["B200", "RTX 5090"], driver: "580.95.05"}
recipes: []
YAML

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (a < b ? a : b) }'; }

declare -A best
for repo in cuda-libs cuda-libs-plain; do
  mapfile -t layer_lines < <(blobs "$repo")
  urls=() total=0
  for line in "${layer_lines[@]}"; do
    read -r digest size <<<"$line"
    urls+=("http://$registry/v2/$repo/blobs/$digest")
    total=$((total + size))
  done
  best[$repo.bytes]=$total
  best[$repo.layers]=${#urls[@]}
  best[$repo.curl]=999999 best[$repo.sha]=999999 best[$repo.gz]=999999 best[$repo.ours]=999999
  for round in 1 2 3; do
    t0=$(now)
    for u in "${urls[@]}"; do curl -sf -o /dev/null "$u"; done
    best[$repo.curl]=$(min "$(since "$t0")" "${best[$repo.curl]}")
    t0=$(now)
    for u in "${urls[@]}"; do curl -sf "$u" | sha256sum >/dev/null; done
    best[$repo.sha]=$(min "$(since "$t0")" "${best[$repo.sha]}")
    if [ "$repo" = cuda-libs ]; then
      t0=$(now)
      for u in "${urls[@]}"; do curl -sf "$u" | gzip -dc >/dev/null; done
      best[$repo.gz]=$(min "$(since "$t0")" "${best[$repo.gz]}")
    fi
    t0=$(now)
    rc=0
    "$orc" inspect "oci://$registry/$repo:13.0" -f "$work/tiers.yaml" --json >"$work/$repo.json" 2>"$work/$repo.err" || rc=$?
    best[$repo.ours]=$(min "$(since "$t0")" "${best[$repo.ours]}")
    [ "$rc" -le 1 ] || { echo "image_scan: inspect failed ($rc): $(cat "$work/$repo.err")" >&2; exit 3; }
  done
done

# The same image from the engine: its export (what `docker save` streams)
# alone, and the scan of docker://.
best[engine.curl]=999999 best[engine.ours]=999999
for round in 1 2 3; do
  t0=$(now)
  curl -sf --unix-socket "$sock" -o /dev/null "http://localhost/images/cuda-libs:13.0/get"
  best[engine.curl]=$(min "$(since "$t0")" "${best[engine.curl]}")
  t0=$(now)
  rc=0
  DOCKER_HOST=unix://$sock "$orc" inspect docker://cuda-libs:13.0 -f "$work/tiers.yaml" --json >/dev/null 2>"$work/engine.err" || rc=$?
  best[engine.ours]=$(min "$(since "$t0")" "${best[engine.ours]}")
  [ "$rc" -le 1 ] || { echo "image_scan: inspect docker:// failed ($rc): $(cat "$work/engine.err")" >&2; exit 3; }
done

mb() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.0f", b / 1e6 / s }'; }
files=$(/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(len(t["rows"]) for t in d["tiers"][:1]))' "$work/cuda-libs.json")
echo "image: $lib64's libraries, ${best[cuda-libs.layers]} layers, $files libraries with device code judged on 2 tiers"
printf '%-58s %9s %8s %10s\n' "scan of a registry image, best of 3" "bytes" "seconds" "MB/s"
for repo in cuda-libs cuda-libs-plain; do
  kind=gzip; [ "$repo" = cuda-libs-plain ] && kind=uncompressed
  b=${best[$repo.bytes]}
  printf '%-58s %9s %8.3f %10s\n' "curl, every layer blob ($kind)" "$b" "${best[$repo.curl]}" "$(mb "$b" "${best[$repo.curl]}")"
  printf '%-58s %9s %8.3f %10s\n' "curl | sha256sum, every layer blob (the digest check)" "$b" "${best[$repo.sha]}" \
    "$(mb "$b" "${best[$repo.sha]}")"
  [ "$repo" = cuda-libs ] &&
    printf '%-58s %9s %8.3f %10s\n' "curl | gzip -dc, every layer blob" "$b" "${best[$repo.gz]}" "$(mb "$b" "${best[$repo.gz]}")"
  printf '%-58s %9s %8.3f %10s\n' "orchestrate inspect oci://... ($kind; digests checked)" "$b" "${best[$repo.ours]}" \
    "$(mb "$b" "${best[$repo.ours]}")"
  awk -v o="${best[$repo.ours]}" -v c="${best[$repo.curl]}" -v k="$kind" \
    'BEGIN { printf "ratio, %s: download alone / ours = %.2fx (goal >= 1.00x)\n", k, c / o }'
  awk -v o="${best[$repo.ours]}" -v c="${best[$repo.sha]}" -v k="$kind" \
    'BEGIN { printf "ratio, %s: download with its digest checked / ours = %.2fx\n", k, c / o }'
done
b=${best[cuda-libs-plain.bytes]}
printf '%-58s %9s %8.3f %10s\n' "curl of the engine's export (GET /images/NAME/get)" "$b" "${best[engine.curl]}" \
  "$(mb "$b" "${best[engine.curl]}")"
printf '%-58s %9s %8.3f %10s\n' "orchestrate inspect docker://..." "$b" "${best[engine.ours]}" "$(mb "$b" "${best[engine.ours]}")"
awk -v o="${best[engine.ours]}" -v c="${best[engine.curl]}" \
  'BEGIN { printf "ratio, engine: export alone / ours = %.2fx (goal >= 1.00x)\n", c / o }'
awk -v o="${best[cuda-libs.ours]}" -v g="${best[cuda-libs.gz]}" \
  'BEGIN { printf "ratio, gzip: download and inflate / ours = %.2fx\n", g / o }'
