#pragma once
// Compute capability: the value every table and emitter speaks.
//
// A CC is (major, minor, variant). The variant is 'a' (architecture-specific:
// runs only on exactly that CC) or 'f' (family-specific: runs on that CC and
// on later minors of the same family), see cuda-compat.md section 1.2. CCs
// compare numerically, never as floats or strings: 10.0 > 9.0, and "120" does
// not contain "20".
#include <compare>
#include <expected>
#include <string>
#include <string_view>

namespace orc::arch {

enum class Variant { none, arch_specific, family };

class ComputeCapability {
 public:
  constexpr ComputeCapability() = default;
  constexpr ComputeCapability(int major, int minor, Variant variant = Variant::none)
      : m_major(major), m_minor(minor), m_variant(variant) {}

  // Parses a bare CC in any notation users write for one: "8.6", "86",
  // "sm_86", "compute_86", "lto_90", "sm_90a", "9.0a", "100f", "120".
  // Target qualifiers (+PTX, -real, -virtual) belong to ArchToken, not here.
  static std::expected<ComputeCapability, std::string> parse(std::string_view text);

  constexpr int major() const { return m_major; }
  constexpr int minor() const { return m_minor; }
  constexpr Variant variant() const { return m_variant; }
  // 86 for 8.6, 120 for 12.0 (the digits nvcc uses).
  constexpr int number() const { return m_major * 10 + m_minor; }
  constexpr ComputeCapability base() const { return {m_major, m_minor}; }
  constexpr ComputeCapability with(Variant v) const { return {m_major, m_minor, v}; }

  std::string suffix() const;   // "", "a" or "f"
  std::string dotted() const;   // "8.6", "9.0a", "10.0f" (PyTorch)
  std::string digits() const;   // "86", "90a", "120f" (CMake, Caffe, Spack)
  std::string sm() const;       // "sm_86"
  std::string compute() const;  // "compute_86"
  std::string lto() const;      // "lto_86"

  // Whether SASS compiled for this CC loads natively on a device of `device`
  // (cuda-compat.md 6.2): same major and minor not above the device's; 'a'
  // only on the exact CC; 'f' within its family (same major, minor at or
  // above). A device is always a plain CC.
  bool sass_runs_on(ComputeCapability device) const;
  // Whether PTX for this CC can be JIT-compiled for `device`: any device CC at
  // or above (onion model); 'a' PTX only on the exact CC; 'f' only inside the
  // family.
  bool ptx_runs_on(ComputeCapability device) const;

  friend constexpr auto operator<=>(const ComputeCapability&, const ComputeCapability&) = default;

 private:
  int m_major = 0;
  int m_minor = 0;
  Variant m_variant = Variant::none;
};

// One entry of an arch list as the frameworks write it, with what it asks
// for: SASS (a real target), PTX (a virtual target), LTO-IR.
struct ArchToken {
  ComputeCapability cc;
  bool sass = false;
  bool ptx = false;
  bool lto = false;
};

// Parses every notation of an arch-list entry: "8.6" and "86" (SASS; PTX is
// the caller's policy), "8.6+PTX" (both), "86-real" (SASS), "86-virtual" (PTX),
// "sm_86" (SASS), "compute_86" (PTX), "lto_90" (LTO-IR), "sm_90a", "100f".
// A bare CC yields sass=true, ptx=false.
std::expected<ArchToken, std::string> parse_arch_token(std::string_view text);

}  // namespace orc::arch
