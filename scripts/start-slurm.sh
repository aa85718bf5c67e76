#!/usr/bin/env bash
# Starts a one-host Slurm cluster for the Slurm suite, everything under DIR
# (Debian's slurmctld, slurmd and munge; no /etc, /run or /var/log written):
#   DIR/munge/    munged's key, socket, log and pid (its own key, not /etc's;
#                 in /tmp/orc-munge.* named by DIR/munge-dir when the munge
#                 user cannot reach DIR)
#   DIR/slurm.conf, DIR/gres.conf, DIR/state/, DIR/spool/<node>/, DIR/*.log
#   DIR/env       SLURM_CONF=DIR/slurm.conf, for clients: `. DIR/env`
# Fake GPU nodes, each its own slurmd on a free port of 127.0.0.1 with fake
# GPU devices (character devices 195:N under DIR/dev, as the NVIDIA driver
# numbers them), one partition per tier plus a default one holding all:
#   a100node  Features=sm_80  Gres=gpu:a100:1  partitions ampere, debug
#   h100node  Features=sm_90  Gres=gpu:h100:2  partitions hopper, debug
# With --gpu-node, one node of this machine's own GPU instead (gpunode,
# Gres=gpu:TYPE:1 on /dev/nvidia0, Features=sm_XY from nvidia-smi's
# compute_cap, partitions debug and gpu): a real GPU node for the GPU
# machine's run (tests/gpu/slurm-smoke.sh). --plugin-dir names where
# Slurm's plugins are when its packages were unpacked rather than installed.
# Prints the controller's PID once `sinfo` sees every node idle. Stop it
# with stop-slurm.sh DIR. Needs root (slurmd runs jobs as their user).
#
#   scripts/start-slurm.sh DIR [--timeout S] [--gpu-node] [--plugin-dir DIR]
set -euo pipefail

usage() { echo "usage: $0 DIR [--timeout S] [--gpu-node] [--plugin-dir DIR]" >&2; exit 2; }
[ $# -ge 1 ] || usage
dir=$(realpath -m "$1")
shift
timeout_s=60 gpu_node=false plugin_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --timeout) [ $# -ge 2 ] || usage; timeout_s=$2; shift 2 ;;
    --gpu-node) gpu_node=true; shift ;;
    --plugin-dir) [ $# -ge 2 ] || usage; plugin_dir=$2; shift 2 ;;
    *) usage ;;
  esac
done
if [ "$(id -u)" -ne 0 ]; then
  echo "start-slurm: slurmd and munged need root" >&2
  exit 3
fi
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null ||
  ! command -v sbatch >/dev/null; then
  echo "start-slurm: installing slurmctld slurmd slurm-client munge" >&2
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -qq --no-install-recommends slurmctld slurmd slurm-client munge >/dev/null 2>&1; then
    echo "start-slurm: apt-get install slurmctld slurmd slurm-client munge failed" >&2
    exit 3
  fi
fi

mkdir -p "$dir/state" "$dir/spool" "$dir/dev"
chmod 0755 "$dir"
# munged runs as munge, which may not reach DIR (under a 0700 temporary
# directory, say): its files then go to a directory of their own in /tmp,
# named in DIR/munge-dir for stop-slurm.sh.
munge_dir="$dir/munge"
mkdir -p "$munge_dir"
chown munge:munge "$munge_dir"
if ! runuser -u munge -- test -w "$munge_dir"; then
  rmdir "$munge_dir"
  munge_dir=$(mktemp -d /tmp/orc-munge.XXXXXX)
  echo "$munge_dir" >"$dir/munge-dir"
fi
# munged refuses a key or directory others can write.
if [ ! -f "$munge_dir/munge.key" ]; then
  head -c 1024 /dev/urandom >"$munge_dir/munge.key"
fi
chown -R munge:munge "$munge_dir"
chmod 0700 "$munge_dir"
chmod 0400 "$munge_dir/munge.key"
socket="$munge_dir/munge.socket"
runuser -u munge -- munged --socket="$socket" --key-file="$munge_dir/munge.key" \
  --log-file="$munge_dir/munged.log" --pid-file="$munge_dir/munged.pid" --seed-file="$munge_dir/munged.seed" \
  --force
# The socket's directory must let slurm's daemons (root) and clients reach it.
chmod 0755 "$munge_dir"

# Free TCP ports for the controller and each slurmd.
read -r ctld_port a100_port h100_port < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(3)]
for s in socks: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in socks])')

if $gpu_node; then
  # This machine's first GPU, as nvidia-smi names it: "NVIDIA H200", 9.0.
  IFS=, read -r gpu_name gpu_cc < <(nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader | head -n 1)
  gpu_type=$(echo "$gpu_name" | tr 'A-Z' 'a-z' | sed -e 's/^nvidia //' -e 's/[^a-z0-9]//g')
  gpu_feature="sm_$(echo "$gpu_cc" | tr -d ' .')"
  nodes="NodeName=gpunode NodeHostname=localhost NodeAddr=127.0.0.1 Port=$a100_port CPUs=2 RealMemory=4000 Features=$gpu_feature Gres=gpu:$gpu_type:1 State=UNKNOWN
PartitionName=debug Nodes=gpunode Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
PartitionName=gpu Nodes=gpunode Default=NO MaxTime=60 State=UP OverSubscribe=YES"
  gres="NodeName=gpunode Name=gpu Type=$gpu_type File=/dev/nvidia0"
  node_names="gpunode"
else
  for i in 0 1 2; do
    [ -e "$dir/dev/nvidia$i" ] || mknod "$dir/dev/nvidia$i" c 195 "$i"
  done
  nodes="NodeName=a100node NodeHostname=localhost NodeAddr=127.0.0.1 Port=$a100_port CPUs=2 RealMemory=4000 Features=sm_80 Gres=gpu:a100:1 State=UNKNOWN
NodeName=h100node NodeHostname=localhost NodeAddr=127.0.0.1 Port=$h100_port CPUs=2 RealMemory=4000 Features=sm_90 Gres=gpu:h100:2 State=UNKNOWN
PartitionName=debug Nodes=a100node,h100node Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
PartitionName=ampere Nodes=a100node Default=NO MaxTime=60 State=UP OverSubscribe=YES
PartitionName=hopper Nodes=h100node Default=NO MaxTime=60 State=UP OverSubscribe=YES"
  gres="NodeName=a100node Name=gpu Type=a100 File=$dir/dev/nvidia0
NodeName=h100node Name=gpu Type=h100 File=$dir/dev/nvidia[1-2]"
  node_names="a100node h100node"
fi

cat >"$dir/slurm.conf" <<EOF
ClusterName=orc
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld_port
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmctldPidFile=$dir/slurmctld.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/jobcomp.txt
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
SwitchType=switch/none
SlurmdParameters=config_overrides
MinJobAge=300
KillWait=5
GresTypes=gpu
SlurmdSpoolDir=$dir/spool/%n
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmdLogFile=$dir/slurmd-%n.log
$nodes
EOF
[ -n "$plugin_dir" ] && echo "PluginDir=$plugin_dir" >>"$dir/slurm.conf"
printf '%s\n' "$gres" >"$dir/gres.conf"
# On a cgroup v2 host with no systemd to ask (a container, a small VM: no
# system.slice), slurmd makes its cgroup hierarchy itself, under a
# system.slice made here with the controllers it needs enabled.
if [ -f /sys/fs/cgroup/cgroup.controllers ] && [ ! -d /sys/fs/cgroup/system.slice ]; then
  for c in cpuset cpu memory; do echo "+$c" >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || true; done
  mkdir -p /sys/fs/cgroup/system.slice
  for c in cpuset cpu memory; do echo "+$c" >/sys/fs/cgroup/system.slice/cgroup.subtree_control 2>/dev/null || true; done
  printf 'CgroupPlugin=cgroup/v2\nIgnoreSystemd=yes\n' >"$dir/cgroup.conf"
fi
echo "SLURM_CONF=$dir/slurm.conf; export SLURM_CONF" >"$dir/env"
export SLURM_CONF="$dir/slurm.conf"

slurmctld -f "$SLURM_CONF"
for node in $node_names; do
  mkdir -p "$dir/spool/$node"
  slurmd -f "$SLURM_CONF" -N "$node"
done
want=$(echo $node_names | wc -w)

deadline=$((SECONDS + timeout_s))
while :; do
  idle=$(sinfo -h -N -o '%N %T' 2>/dev/null | awk '$2 == "idle"' | sort -u | wc -l)
  [ "$idle" -ge "$want" ] && break
  if [ $SECONDS -ge $deadline ]; then
    echo "start-slurm: the nodes were not idle after ${timeout_s} s:" >&2
    sinfo -N 2>&1 >&2 || true
    tail -n 20 "$dir/slurmctld.log" >&2 || true
    exit 3
  fi
  sleep 0.5
done
cat "$dir/slurmctld.pid"
