#!/usr/bin/env bash
# The test command (README, .ci/run): installs what the tests need, builds the
# project twice (release, and with AddressSanitizer + UBSan), and runs every
# suite. Suites whose outside part is missing skip with a printed reason and
# ctest counts them Skipped; the last lines say how many skipped and why,
# then ctest's summary.
#
#   ORC_SKIP_SANITIZE=1  skip the sanitizer build and its suites
#   ORC_SKIP_TOOLCHAINS=1  do not install Debian's CUDA 11.8 / 12.4 nvcc
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# Seconds per phase, printed before ctest's summary line so that a slow CI
# run says where its time went.
phases=()
phase_start=$SECONDS
phase() {
  phases+=("$1 $((SECONDS - phase_start)) s")
  phase_start=$SECONDS
}
run_start=$SECONDS

"$root/scripts/install-deps.sh" --test
phase "deps"

# The toolkits are mostly downloads into a private apt state (no dpkg lock),
# so they come while the release tree compiles. A mirror failure only makes
# their tests skip, it does not stop the run.
toolkits_log=$(mktemp)
toolkits_pid=
if [ "${ORC_SKIP_TOOLCHAINS:-0}" != 1 ]; then
  "$root/scripts/install-cuda-toolkits.sh" "$root/toolchains" >"$toolkits_log" 2>&1 &
  toolkits_pid=$!
fi

jobs=$(nproc)
# Release, not RelWithDebInfo: no suite reads our debug info, and without it
# orc_app and the modules below it built in 172 s instead of 228 s here
# (2 cores); the sanitizer build below keeps line tables (-g1) for its stack
# traces.
# -O1, not -O3: the release tree is compiled once and its suites wait on
# engines, debootstrap and Slurm far more than they compute. Measured here
# (user seconds, one file at a time): cli_test.cpp 22.2 -> 14.0,
# plan.cpp 8.6 -> 5.9, index_test.cpp 6.4 -> 4.5; the whole release build
# took 1669 s of a 5538 s CI run on 2 cores at -O3.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG" >/dev/null
cmake --build build -j "$jobs"
phase "release build"

if [ -n "$toolkits_pid" ]; then
  if ! wait "$toolkits_pid"; then
    echo "test: Debian CUDA toolkits not installed; their nvcc checks will skip"
  fi
  cat "$toolkits_log"
  phase "toolkits (after the build)"
fi
rm -f "$toolkits_log"

# The sanitizer build and its unit and fuzz runs go beside the release
# suites, niced: those wait on debootstrap, apt, engines and Slurm more than
# they compute, and the sanitizer work fills that time.
asan_pid=
if [ "${ORC_SKIP_SANITIZE:-0}" != 1 ]; then
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DORC_SANITIZE=ON >/dev/null
  (
    # Only what the unit and fuzz labels run (tests/CMakeLists.txt's
    # orc_unit_and_fuzz_binaries): the integration suites are not run here.
    nice -n 10 cmake --build build-asan -j "$jobs" --target orc_unit_and_fuzz_binaries >build-asan/build.log 2>&1 ||
      exit 2
    cd build-asan
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
      nice -n 10 ctest -L 'unit|fuzz' -j "$jobs" --output-on-failure >ctest.log 2>&1
  ) &
  asan_pid=$!
fi

cd build
# ctest lists skipped tests after its summary. The last lines of the run say
# instead how many suites skipped and why (scripts/ctest-skips.py, from the
# JUnit file, whose output of every suite is kept up to 64 KiB from its end,
# where the suites print their reasons), then repeat ctest's summary line;
# ctest's exit status is kept, and a sanitizer failure makes it 1.
set +e
rm -f ctest-junit.xml
ctest -j "$jobs" --output-on-failure --output-junit "$PWD/ctest-junit.xml" \
  --test-output-size-passed 65536 --test-output-truncation tail 2>&1 | tee ctest.log
rc=${PIPESTATUS[0]}
phase "release suites"

if [ -n "$asan_pid" ]; then
  wait "$asan_pid"
  asan_rc=$?
  phase "sanitizer build and suites (after the release suites)"
  if [ "$asan_rc" = 2 ]; then
    tail -n 60 "$root/build-asan/build.log"
    echo "test: the sanitizer build failed (build-asan/build.log)"
  elif [ "$asan_rc" != 0 ]; then
    cat "$root/build-asan/ctest.log"
  fi
  grep -E 'tests passed' "$root/build-asan/ctest.log" 2>/dev/null | sed 's/^/test: sanitizers: /'
  [ "$asan_rc" = 0 ] || rc=1
fi

python3 "$root/scripts/ctest-skips.py" ctest-junit.xml
echo "test: seconds per phase: ${phases[*]/%/;} total $((SECONDS - run_start)) s"
grep -E '^[0-9]+% tests passed' ctest.log | tail -n 1
exit "$rc"
