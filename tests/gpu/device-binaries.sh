# Sourced by the GPU-host scripts (smoke-device.sh, verdicts-device.sh):
#   device_binaries TARGET...
# sets $bin to a directory holding the named binaries (orchestrate, and
# gpu_smoke when asked): build-carry/ (stripped binaries and the shared
# libraries they need, from tests/gpu/carry-verdicts.sh on the development
# machine) when they run here, else a CMake build in build-gpu/.
device_binaries() {
  bin=$root/build-carry
  export LD_LIBRARY_PATH=$bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  "$bin/orchestrate" --version >/dev/null 2>&1 && return 0
  echo "== carried binaries do not run here; building $*"
  unset LD_LIBRARY_PATH
  cmake -S "$root" -B "$root/build-gpu" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null &&
    ninja -C "$root/build-gpu" "$@" | tail -n 2
  bin=$root/build-gpu/bin
  mkdir -p "$bin"
  ln -sf "$root/build-gpu/orchestrator/orchestrate" "$bin/orchestrate"
  [[ " $* " != *" gpu_smoke "* ]] || ln -sf "$root/build-gpu/tests/gpu/gpu_smoke" "$bin/gpu_smoke"
}
