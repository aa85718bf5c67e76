#!/usr/bin/env bash
# The test command (README, .ci/run): installs what the tests need, builds the
# project twice (release, and with AddressSanitizer + UBSan), and runs every
# suite. Suites whose outside part is missing skip with a printed reason and
# ctest counts them Skipped; the last lines say how many skipped and why,
# then ctest's summary.
#
#   ORC_SKIP_SANITIZE=1  skip the sanitizer build (saves a few minutes)
#   ORC_SKIP_TOOLCHAINS=1  do not install Debian's CUDA 11.8 / 12.4 nvcc
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

"$root/scripts/install-deps.sh" --test
if [ "${ORC_SKIP_TOOLCHAINS:-0}" != 1 ]; then
  # Older nvcc for the real-compiler cross-check; a mirror failure only makes
  # those tests skip, it does not stop the run.
  "$root/scripts/install-cuda-toolkits.sh" "$root/toolchains" ||
    echo "test: Debian CUDA toolkits not installed (exit $?); their nvcc checks will skip"
fi

jobs=$(nproc)
# Release, not RelWithDebInfo: no suite reads our debug info, and without it
# orc_app and the modules below it built in 172 s instead of 228 s here
# (2 cores); the sanitizer build below keeps -g for its stack traces.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$jobs"

if [ "${ORC_SKIP_SANITIZE:-0}" != 1 ]; then
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DORC_SANITIZE=ON >/dev/null
  # Only what the unit and fuzz labels run (tests/CMakeLists.txt's
  # orc_unit_and_fuzz_binaries): the integration suites are not run here.
  cmake --build build-asan -j "$jobs" --target orc_unit_and_fuzz_binaries
  echo "test: unit and fuzz-corpus suites under AddressSanitizer + UBSan"
  if ! (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
          ctest -L 'unit|fuzz' -j "$jobs" --output-on-failure >ctest.log 2>&1); then
    cat build-asan/ctest.log
    exit 1
  fi
  grep -E 'tests passed' build-asan/ctest.log | sed 's/^/test: sanitizers: /'
fi

cd build
# ctest lists skipped tests after its summary. The last lines of the run say
# instead how many suites skipped and why (scripts/ctest-skips.py, from the
# JUnit file, whose output of every suite is kept up to 64 KiB from its end,
# where the suites print their reasons), then repeat ctest's summary line;
# ctest's exit status is kept.
set +e
rm -f ctest-junit.xml
ctest -j "$jobs" --output-on-failure --output-junit "$PWD/ctest-junit.xml" \
  --test-output-size-passed 65536 --test-output-truncation tail 2>&1 | tee ctest.log
rc=${PIPESTATUS[0]}
python3 "$root/scripts/ctest-skips.py" ctest-junit.xml
grep -E '^[0-9]+% tests passed' ctest.log | tail -n 1
exit "$rc"
