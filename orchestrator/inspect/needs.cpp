#include "orchestrator/inspect/needs.hpp"

#include <algorithm>

namespace orc::inspect {

namespace {

std::string_view base_name(std::string_view path) {
  // Member paths chain their container's ("x.whl!/lib/libx.so", "lib.a:k.o").
  const auto cut = path.find_last_of("/:");
  return cut == std::string_view::npos ? path : path.substr(cut + 1);
}

void collect_links(const FileReport& file, std::vector<LinkedLibrary>& out) {
  for (const std::string& name : file.needed) {
    auto linked = classify_soname(name);
    if (linked && std::ranges::find(out, linked->soname, &LinkedLibrary::soname) == out.end())
      out.push_back(std::move(*linked));
  }
  for (const FileReport& member : file.members) collect_links(member, out);
}

void collect_carried(const FileReport& file, std::set<std::string, std::less<>>& out) {
  if (!file.error) out.emplace(base_name(file.path));
  if (!file.soname.empty()) out.insert(file.soname);
  for (const FileReport& member : file.members) collect_carried(member, out);
}

// The table's order, then the soname's: reports list cuDNN's siblings
// together, the runtime first.
std::size_t row_of(const LinkedLibrary& l) { return static_cast<std::size_t>(l.library - cuda_libraries().data()); }

bool before(const LinkedLibrary& a, const LinkedLibrary& b) {
  return std::pair(row_of(a), std::string_view(a.soname)) < std::pair(row_of(b), std::string_view(b.soname));
}

}  // namespace

std::vector<LinkedLibrary> cuda_links(const FileReport& file) {
  std::vector<LinkedLibrary> out;
  collect_links(file, out);
  return out;
}

std::set<std::string, std::less<>> carried_sonames(const std::vector<FileReport>& files) {
  std::set<std::string, std::less<>> out;
  for (const FileReport& f : files) collect_carried(f, out);
  return out;
}

std::vector<LinkedLibrary> unmet_needs(const FileReport& file, const std::set<std::string, std::less<>>& carried) {
  std::vector<LinkedLibrary> out;
  for (LinkedLibrary& l : cuda_links(file))
    if (l.library->provider != Provider::driver && !carried.contains(l.soname)) out.push_back(std::move(l));
  std::ranges::sort(out, before);
  return out;
}

namespace {

void add_needs(std::vector<SetNeed>& into, const std::vector<LinkedLibrary>& needs, const std::string& file) {
  for (const LinkedLibrary& l : needs) {
    auto it = std::ranges::find_if(into, [&](const SetNeed& n) { return n.library.soname == l.soname; });
    if (it == into.end()) it = into.insert(into.end(), SetNeed{l, {}});
    if (std::ranges::find(it->files, file) == it->files.end()) it->files.push_back(file);
  }
}

}  // namespace

std::vector<SetNeed> set_needs(const std::vector<FileReport>& files) {
  return set_needs(files, carried_sonames(files));
}

std::vector<SetNeed> set_needs(const std::vector<FileReport>& files,
                               const std::set<std::string, std::less<>>& carried) {
  std::vector<SetNeed> out;
  for (const FileReport& f : files) add_needs(out, unmet_needs(f, carried), f.path);
  std::ranges::stable_sort(out, before, &SetNeed::library);
  return out;
}

bool links_cuda_libraries(const FileReport& file) {
  return std::ranges::any_of(cuda_links(file),
                             [](const LinkedLibrary& l) { return l.library->provider != Provider::driver; });
}

std::string describe_need(const LinkedLibrary& library) { return describe(library) + " (" + library.soname + ")"; }

}  // namespace orc::inspect
