#pragma once
// The targets a stored set records, as the names it recorded them by:
// "sm_80", "sm_90a", "compute_90". A manifest, an index row and a fetched
// file keep the names (the signed bytes and the index columns are these
// names), and every reader asks this type for the CCs instead of parsing
// them again. A name this version cannot read ("sm_130x" written by a newer
// one) is kept in place and reported by unread(), never dropped.
#include <initializer_list>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "orchestrator/arch/compute_capability.hpp"

namespace orc::arch {

class ArchList {
 public:
  ArchList() = default;
  explicit ArchList(std::vector<std::string> names) : m_names(std::move(names)) {}
  ArchList(std::initializer_list<std::string> names) : m_names(names) {}

  // SASS names ("sm_80") and PTX names ("compute_90") of a set of CCs,
  // ascending.
  static ArchList sass(const std::set<ComputeCapability>& ccs);
  static ArchList ptx(const std::set<ComputeCapability>& ccs);
  // The names of several lists, each once, sorted as text (the order the
  // index has always stored a set's union in).
  static ArchList union_of(std::span<const ArchList* const> lists);

  const std::vector<std::string>& names() const { return m_names; }
  bool empty() const { return m_names.empty(); }
  std::size_t size() const { return m_names.size(); }
  auto begin() const { return m_names.begin(); }
  auto end() const { return m_names.end(); }

  // The CCs of the names this version reads, in the list's order.
  std::vector<ComputeCapability> ccs() const;
  std::set<ComputeCapability> cc_set() const;
  // The names it does not read, in the list's order.
  std::vector<std::string> unread() const;

  // "80,90a": each name as CMake's digits; a name it cannot read stays as
  // written, so a newer target is shown rather than lost.
  std::string digits() const;
  // The names joined by `separator`; `none` when the list is empty.
  std::string joined(std::string_view separator, std::string_view none = "-") const;

  friend bool operator==(const ArchList&, const ArchList&) = default;

 private:
  std::vector<std::string> m_names;
};

}  // namespace orc::arch
