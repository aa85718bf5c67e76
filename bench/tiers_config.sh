#!/usr/bin/env bash
# Writes an orchestrate.yaml of N tiers on stdout, for timing `plan` on a
# configuration far larger than any cluster's (issue 11: 125,000 tiers, 3.9
# MB, took 33 s). Tier i is "t<i>" with one GPU; the one recipe (cmake, no
# build steps) uses every tier (MODE all, the default) or only the first
# (MODE one: then every other tier draws the "not used" warning).
#
#   bench/tiers_config.sh 125000 > /tmp/tiers.yaml
#   bench/tiers_config.sh 125000 one > /tmp/tiers-one.yaml
set -euo pipefail

n=${1:?usage: tiers_config.sh N [all|one]}
mode=${2:-all}
[[ $n =~ ^[1-9][0-9]*$ ]] || { echo "tiers_config.sh: N must be a positive number" >&2; exit 2; }
[[ $mode == all || $mode == one ]] || { echo "tiers_config.sh: MODE is 'all' or 'one'" >&2; exit 2; }

awk -v n="$n" -v mode="$mode" 'BEGIN {
  split("H100 A100 T4 8.6 L4 V100 B200", gpus, " ")
  print "toolkits: [\"11.8\", \"12.4\", \"12.8\", \"13.0\"]"
  print "tiers:"
  for (i = 1; i <= n; i++) printf "  t%d: {gpus: [%s]}\n", i, gpus[(i % 7) + 1]
  print "recipes:"
  print "  - name: app"
  print "    framework: cmake"
  print "    source: {path: src}"
  if (mode == "one") { print "    tiers: [t1]"; exit }
  # A flow list, ten names a line, keeps 125,000 tiers under the 4 MiB limit.
  printf "    tiers: [t1"
  for (i = 2; i <= n; i++) printf (i % 10 == 1 ? ",\n      t%d" : ", t%d"), i
  print "]"
}'
