#!/usr/bin/env bash
# A fuzzing campaign over the libFuzzer targets (tests/fuzz): builds them with
# clang 19, ASan and UBSan in build-fuzz/, runs each for SECONDS (several at a
# time, FUZZ_JOBS, default: the number of cores), merges the inputs that add
# coverage into the committed corpus (tests/fuzz/corpus/TARGET), keeps every
# crash under build-fuzz/campaign/crashes/, and prints one line of figures
# per target.
#
#   scripts/fuzz.sh SECONDS [TARGET...]     (no TARGET: all of them)
#
# Needs `scripts/install-deps.sh --fuzz`. A crash makes the exit status 1;
# fix it, then copy the input from build-fuzz/campaign/crashes/ into the target's
# corpus so the replay in ctest (label fuzz) keeps it fixed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
seconds=${1:?usage: scripts/fuzz.sh SECONDS [TARGET...]}
shift
all=(config elf fatbin ar package manifest registry_manifest registry_http docker_api unpack tar_extract front image inventory stamp_config tiers debian_index redist)
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all[@]}")
jobs=${FUZZ_JOBS:-$(nproc)}

command -v clang++-19 >/dev/null || { echo "fuzz: clang++-19 missing (scripts/install-deps.sh --fuzz)" >&2; exit 2; }
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang-19 \
  -DCMAKE_CXX_COMPILER=clang++-19 -DORC_FUZZ=ON >/dev/null
ninja -C build-fuzz "${targets[@]/#/fuzz_}" >/dev/null

out=build-fuzz/campaign
rm -rf "$out" && mkdir -p "$out/crashes"
run_one() {
  local t=$1 new="$out/$1.new"
  rm -rf "$new" && mkdir -p "$new"
  # -timeout: an input slower than 60 s is a hang, kept as a crash (60, not
  # less: on a loaded machine a niced fuzzer stalls for seconds);
  # -rss_limit_mb: one input may not take more than 2 GB.
  set +e
  "build-fuzz/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=60 -rss_limit_mb=2048 -max_len=131072 \
    -print_final_stats=1 -artifact_prefix="$out/crashes/$t-" "$new" "tests/fuzz/corpus/$t" \
    >"$out/$t.log" 2>&1
  echo $? >"$out/$t.rc"
  # Inputs over 32 KiB stay out of the committed corpus (it replays in
  # every ctest run and lives in git); the merge keeps only the ones that
  # add coverage to what is there.
  find "$new" -type f -size +32k -delete
  local before=$(ls "tests/fuzz/corpus/$t" | wc -l)
  "build-fuzz/tests/fuzz/fuzz_$t" -merge=1 "tests/fuzz/corpus/$t" "$new" >"$out/$t.merge.log" 2>&1
  echo $(($(ls "tests/fuzz/corpus/$t" | wc -l) - before)) >"$out/$t.added"
}
export -f run_one
export seconds out
printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one {}'

status=0
printf '%-18s %8s %12s %9s %6s %8s %8s %s\n' target seconds executions exec/s cov added crashes "peak RSS"
for t in "${targets[@]}"; do
  log="$out/$t.log"
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log")
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -n 1 | cut -d' ' -f2)
  crashes=$(ls "$out/crashes" | grep -c "^$t-" || true)
  [ "$(cat "$out/$t.rc")" != 0 ] && status=1
  printf '%-18s %8s %12s %9s %6s %8s %8s %s\n' "$t" "$seconds" "${runs:-?}" "${rate:-?}" "${cov:-?}" \
    "$(cat "$out/$t.added")" "$crashes" "${rss:-?} MB"
done
exit "$status"
