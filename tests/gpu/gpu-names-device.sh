#!/usr/bin/env bash
# On the GPU host: what nvidia-smi, NVML's label form and torch print for this GPU, and what our table says.
# Usage (GPU host): ORCHESTRATE=path/to/orchestrate tests/gpu/gpu-names-device.sh (default: one beside it).
set -u
orc=${ORCHESTRATE:-$(dirname "$0")/orchestrate}
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader | while IFS=, read -r name cc drv; do
  name=$(echo "$name" | sed 's/^ *//;s/ *$//'); cc=$(echo "$cc" | tr -d ' ')
  label=$(echo "$name" | tr -s ' ' '-')
  echo "nvidia-smi: name='$name' compute_cap=$cc driver=$drv"
  for n in "$name" "$label" "$label-SHARED"; do
    got=$("$orc" gpus "$n" --json 2>&1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["cc"])' 2>/dev/null || echo "error: $("$orc" gpus "$n" 2>&1)")
    echo "  orchestrate gpus '$n' -> $got $( [ "$got" = "$cc" ] && echo AGREES || echo DIFFERS)"
  done
done
python3 - "$orc" <<'PY'
import subprocess, sys
try:
    import torch
except Exception as e:
    print("torch: not importable:", e); sys.exit(0)
for i in range(torch.cuda.device_count()):
    name = torch.cuda.get_device_name(i); cc = "%d.%d" % torch.cuda.get_device_capability(i)
    out = subprocess.run([sys.argv[1], "gpus", name, "--json"], capture_output=True, text=True)
    import json
    got = json.loads(out.stdout)["cc"] if out.returncode == 0 else "error: " + out.stderr.strip()
    print(f"torch: get_device_name='{name}' capability={cc} -> orchestrate {got} {'AGREES' if got == cc else 'DIFFERS'}")
PY
