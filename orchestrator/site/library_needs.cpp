#include "orchestrator/site/library_needs.hpp"

#include <algorithm>
#include <utility>

#include "orchestrator/inspect/needs.hpp"

namespace orc::site {

namespace {

const inspect::CudaLibrary* row_of(const cache::LibraryNeed& need) {
  const auto& table = inspect::cuda_libraries();
  const auto row = std::ranges::find(table, need.library, &inspect::CudaLibrary::key);
  return row == table.end() ? nullptr : &*row;
}

// The table's row (a library this version does not know last), then the soname.
std::pair<std::size_t, std::string_view> report_rank(const cache::LibraryNeed& need) {
  const auto* row = row_of(need);
  const auto& table = inspect::cuda_libraries();
  return {row ? static_cast<std::size_t>(row - table.data()) : table.size(), need.soname};
}

}  // namespace

cache::LibraryNeed library_need(const inspect::LinkedLibrary& linked) {
  return {.library = std::string(linked.library->key), .major = linked.major, .soname = linked.soname};
}

void record_needs(cache::Manifest& manifest, const std::vector<inspect::FileReport>& reports) {
  const auto carried = inspect::carried_sonames(reports);
  for (cache::ManifestFile& file : manifest.files) {
    const auto report = std::ranges::find(reports, file.path, &inspect::FileReport::path);
    if (report == reports.end()) continue;
    file.needs.clear();
    for (const auto& linked : inspect::unmet_needs(*report, carried)) file.needs.push_back(library_need(linked));
  }
}

std::string library_name(const cache::LibraryNeed& need) {
  const auto* row = row_of(need);
  return row ? std::string(row->name) : std::string();
}

std::string describe(const cache::LibraryNeed& need) {
  const auto* row = row_of(need);
  if (!row) return need.soname;
  return inspect::describe_need({.library = row, .soname = need.soname, .major = need.major});
}

void sort_for_reports(std::vector<cache::LibraryNeed>& needs) { std::ranges::stable_sort(needs, {}, report_rank); }

std::vector<SetNeed> set_needs(const cache::Manifest& manifest) {
  std::vector<SetNeed> out;
  for (const auto& file : manifest.files)
    for (const auto& need : file.needs) {
      auto it = std::ranges::find_if(out, [&](const SetNeed& n) { return n.need.soname == need.soname; });
      if (it == out.end()) it = out.insert(out.end(), SetNeed{need, {}});
      it->files.push_back(file.path);
    }
  std::ranges::stable_sort(out, {}, [](const SetNeed& n) { return report_rank(n.need); });
  return out;
}

}  // namespace orc::site
