#include "orchestrator/arch/compute_capability.hpp"

#include <cctype>

#include "orchestrator/util/strings.hpp"

namespace orc::arch {

namespace {

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

std::string not_a_cc(std::string_view original) {
  return quoted(original) +
         " is not a compute capability (write it as 8.6, 86, sm_86, compute_86, 9.0a or 100f)";
}

}  // namespace

std::expected<ComputeCapability, std::string> ComputeCapability::parse(std::string_view text) {
  const std::string_view original = text;
  text = util::trim(text);
  const std::string lowered = util::to_lower(text);
  std::string_view s = lowered;
  for (std::string_view prefix : {"compute_", "sm_", "lto_"}) {
    if (s.starts_with(prefix)) {
      s.remove_prefix(prefix.size());
      break;
    }
  }
  Variant variant = Variant::none;
  if (!s.empty() && (s.back() == 'a' || s.back() == 'f')) {
    variant = s.back() == 'a' ? Variant::arch_specific : Variant::family;
    s.remove_suffix(1);
  }
  int major = 0, minor = 0;
  if (const auto dot = s.find('.'); dot != std::string_view::npos) {
    const auto maj = s.substr(0, dot), min = s.substr(dot + 1);
    if (!all_digits(maj) || maj.size() > 2 || !all_digits(min) || min.size() != 1) return std::unexpected(not_a_cc(original));
    major = std::stoi(std::string(maj));
    minor = min[0] - '0';
  } else {
    // Two digits are major+minor (86); three are two-digit major + minor (120).
    if (!all_digits(s) || s.size() < 2 || s.size() > 3) return std::unexpected(not_a_cc(original));
    major = std::stoi(std::string(s.substr(0, s.size() - 1)));
    minor = s.back() - '0';
  }
  if (major < 1) return std::unexpected(not_a_cc(original));
  return ComputeCapability(major, minor, variant);
}

std::string ComputeCapability::suffix() const {
  switch (m_variant) {
    case Variant::none:
      return "";
    case Variant::arch_specific:
      return "a";
    case Variant::family:
      return "f";
  }
  return "";
}

std::string ComputeCapability::dotted() const { return std::to_string(m_major) + "." + std::to_string(m_minor) + suffix(); }
std::string ComputeCapability::digits() const { return std::to_string(number()) + suffix(); }
std::string ComputeCapability::sm() const { return "sm_" + digits(); }
std::string ComputeCapability::compute() const { return "compute_" + digits(); }
std::string ComputeCapability::lto() const { return "lto_" + digits(); }

bool ComputeCapability::sass_runs_on(ComputeCapability device) const {
  const ComputeCapability dev = device.base();
  switch (m_variant) {
    case Variant::arch_specific:
      return base() == dev;
    case Variant::family:
    case Variant::none:
      return m_major == dev.major() && m_minor <= dev.minor();
  }
  return false;
}

bool ComputeCapability::ptx_runs_on(ComputeCapability device) const {
  const ComputeCapability dev = device.base();
  switch (m_variant) {
    case Variant::arch_specific:
      return base() == dev;
    case Variant::family:
      return m_major == dev.major() && m_minor <= dev.minor();
    case Variant::none:
      return base() <= dev;
  }
  return false;
}

std::expected<ArchToken, std::string> parse_arch_token(std::string_view text) {
  const std::string_view original = util::trim(text);
  std::string lowered = util::to_lower(original);
  std::string_view s = lowered;
  ArchToken token;
  if (s.ends_with("+ptx")) {
    s.remove_suffix(4);
    token.sass = token.ptx = true;
  } else if (s.ends_with("-real")) {
    s.remove_suffix(5);
    token.sass = true;
  } else if (s.ends_with("-virtual")) {
    s.remove_suffix(8);
    token.ptx = true;
  } else if (s.starts_with("sm_")) {
    token.sass = true;
  } else if (s.starts_with("compute_")) {
    token.ptx = true;
  } else if (s.starts_with("lto_")) {
    token.lto = true;
  } else {
    token.sass = true;
  }
  const bool prefixed = s.starts_with("sm_") || s.starts_with("compute_") || s.starts_with("lto_");
  if (prefixed && s.size() != lowered.size()) {
    return std::unexpected("'" + std::string(original) + "' mixes a prefix (sm_/compute_/lto_) with a suffix (+PTX/-real/-virtual)");
  }
  auto cc = ComputeCapability::parse(s);
  if (!cc) return std::unexpected("'" + std::string(original) + "' is not an arch (write 8.6, 86, sm_86, compute_86, 8.6+PTX, 86-real, 86-virtual, lto_90, 9.0a or 100f)");
  token.cc = *cc;
  return token;
}

}  // namespace orc::arch
