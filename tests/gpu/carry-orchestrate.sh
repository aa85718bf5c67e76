# Sourced by the carry-*.sh scripts on the development machine:
#   carry_orchestrate BUILD_DIR CARRY_DIR
# puts a stripped orchestrate in CARRY_DIR and the shared libraries it needs
# in CARRY_DIR/lib (not glibc's or the compiler runtime's; nor libxml2 and
# ICU, which the GPU host (Ubuntu 24.04) has, and whose ICU data alone is
# 31 MB of the 64 MiB a device run carries).
carry_orchestrate() {
  local build=$1 carry=$2 archive
  mkdir -p "$carry/lib"
  strip -o "$carry/orchestrate" "$build/orchestrator/orchestrate"
  # libarchive is loaded when first needed (cmake/LazyLibrary.cmake), so ldd of
  # the binary no longer names it: its chain comes from ldd of libarchive itself.
  # libnettle stays behind too: the GPU host's GnuTLS (its curl) needs its own.
  archive=$(ldconfig -p | awk '/libarchive\.so\.13 / {print $NF; exit}')
  { ldd "$build/orchestrator/orchestrate"; echo "x => $archive (0)"; ldd "$archive"; } | awk '$3 ~ /^\// {print $3}' |
    { grep -v -E '/(libc|libm|libpthread|libdl|librt|libstdc\+\+|libgcc_s|ld-linux[^/]*|libxml2|libicu[a-z]*|libnettle)\.so' || true; } |
    sort -u | while read -r lib; do cp -L "$lib" "$carry/lib/"; done
}
