#!/bin/sh
# Makes the parallel-shell fixtures (README.md): the real pdsh, dshbak,
# clush and clubak (Debian's pdsh and clustershell packages, on PATH), their
# exec workers standing in for ssh. Each "node" prints what nvidia-smi
# printed on the H200 (gpu-h200.csv); gpu-old what the 470 branch's
# nvidia-smi prints for the query (it has no compute_cap field), gpu-down
# fails as an unreachable node does. Usage: parallel-shells.sh OUTDIR
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=$1
node='case %h in
  gpu-old*) printf "Field \"compute_cap\" is not a valid field to query.\n\n"; exit 2;;
  gpu-down*) exit 255;;
  *) cat '"$here"'/gpu-h200.csv;;
esac'
nodes=gpu-h200-[01-03]
pdsh -R exec -w "$nodes" sh -c "$node" > "$out/pdsh-format-csv.txt"
pdsh -R exec -w "$nodes" sh -c "$node" | dshbak > "$out/dshbak.txt"
pdsh -R exec -w "$nodes" sh -c "$node" | dshbak -c > "$out/dshbak-c.txt"
pdsh -N -R exec -w "$nodes" sh -c "$node" > "$out/pdsh-N.txt"
pdsh -R exec -w "$nodes",gpu-old01,gpu-down01 sh -c "$node" > "$out/pdsh-broken-nodes.txt" 2>&1 || true
clush -R exec -w "$nodes" "sh -c '$node'" > "$out/clush.txt"
clush -R exec -b -w "$nodes" "sh -c '$node'" > "$out/clush-b.txt"
clush -R exec -w "$nodes" "sh -c '$node'" | clubak -b > "$out/clubak-b.txt"
