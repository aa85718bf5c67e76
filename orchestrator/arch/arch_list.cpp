#include "orchestrator/arch/arch_list.hpp"

#include <algorithm>

namespace orc::arch {

ArchList ArchList::sass(const std::set<ComputeCapability>& ccs) {
  std::vector<std::string> names;
  for (const auto& cc : ccs) names.push_back(cc.sm());
  return ArchList(std::move(names));
}

ArchList ArchList::ptx(const std::set<ComputeCapability>& ccs) {
  std::vector<std::string> names;
  for (const auto& cc : ccs) names.push_back(cc.compute());
  return ArchList(std::move(names));
}

ArchList ArchList::union_of(std::span<const ArchList* const> lists) {
  std::set<std::string> all;
  for (const auto* list : lists) all.insert(list->m_names.begin(), list->m_names.end());
  return ArchList(std::vector<std::string>(all.begin(), all.end()));
}

std::vector<ComputeCapability> ArchList::ccs() const {
  std::vector<ComputeCapability> out;
  for (const auto& name : m_names)
    if (auto cc = ComputeCapability::parse(name)) out.push_back(*cc);
  return out;
}

std::set<ComputeCapability> ArchList::cc_set() const {
  const auto all = ccs();
  return {all.begin(), all.end()};
}

std::vector<std::string> ArchList::unread() const {
  std::vector<std::string> out;
  for (const auto& name : m_names)
    if (!ComputeCapability::parse(name)) out.push_back(name);
  return out;
}

std::string ArchList::digits() const {
  std::string out;
  for (const auto& name : m_names) {
    if (!out.empty()) out += ',';
    const auto cc = ComputeCapability::parse(name);
    out += cc ? cc->digits() : name;
  }
  return out;
}

std::string ArchList::joined(std::string_view separator, std::string_view none) const {
  if (m_names.empty()) return std::string(none);
  std::string out;
  for (const auto& name : m_names) {
    if (!out.empty()) out += separator;
    out += name;
  }
  return out;
}

}  // namespace orc::arch
