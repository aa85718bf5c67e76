#include "orchestrator/app/tiers/tiers_import.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <istream>
#include <nlohmann/json.hpp>

#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/escape.hpp"

namespace orc::app {

namespace {

namespace fs = std::filesystem;
using util::ExitCode;

// A file as it is (a regular file, a pipe such as <(kubectl ...), a
// device): read in pieces, to the input bound, never mapped or sized first.
class FileSource final : public inventory::ByteSource {
 public:
  explicit FileSource(int fd) : m_fd(fd) {}
  ~FileSource() override { ::close(m_fd); }
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;
  std::expected<std::size_t, std::string> read(std::span<char> into) override {
    for (;;) {
      const ssize_t n = ::read(m_fd, into.data(), into.size());
      if (n >= 0) return static_cast<std::size_t>(n);
      if (errno != EINTR) return std::unexpected(std::string(std::strerror(errno)));
    }
  }

 private:
  int m_fd;
};

class StreamSource final : public inventory::ByteSource {
 public:
  explicit StreamSource(std::istream& in) : m_in(in) {}
  std::expected<std::size_t, std::string> read(std::span<char> into) override {
    m_in.read(into.data(), static_cast<std::streamsize>(into.size()));
    if (m_in.bad()) return std::unexpected(std::string("the stream failed"));
    return static_cast<std::size_t>(m_in.gcount());
  }

 private:
  std::istream& m_in;
};

int open_input(const std::string& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw util::Failure(ExitCode::bad_input, util::printable(file) + ": cannot read it: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw util::Failure(ExitCode::bad_input,
                        util::printable(file) + ": is a directory; give tiers import the inventory files in it");
  }
  return fd;
}

}  // namespace

inventory::Proposal tiers_import(const TiersImportRequest& request) {
  if (request.files.empty())
    throw util::Failure(ExitCode::bad_input,
                        "orchestrate tiers import needs at least one file: nvidia-smi CSV, `scontrol show node -o` "
                        "or `kubectl get nodes -o json` output ('-' reads standard input)");
  inventory::Inventory all;
  for (const std::string& file : request.files) {
    inventory::InputSpec input{.file = {}, .node = {}, .limits = request.limits, .held = all.footprint()};
    std::optional<FileSource> from_file;
    std::optional<StreamSource> from_stream;
    inventory::ByteSource* source = nullptr;
    if (file == "-") {
      if (!request.stdin_stream)
        throw util::Failure(ExitCode::bad_input, "'-' names standard input, which is not given");
      input.file = "standard input";
      input.node = "stdin";
      source = &from_stream.emplace(*request.stdin_stream);
    } else {
      source = &from_file.emplace(open_input(file));
      input.file = util::printable(file);
      // One nvidia-smi file per node: the file's name says which
      // ("gpu01.csv", "gpu01" or "gpu01.nvidia-smi.csv").
      input.node = fs::path(file).filename().string();
      input.node = input.node.substr(0, input.node.find('.'));
    }
    auto parsed = inventory::parse_inventory(*source, input);
    if (!parsed) throw util::Failure(ExitCode::bad_input, {parsed.error()});
    all.merge(std::move(*parsed));
  }
  auto proposal = inventory::propose_tiers(all, request.group_by);
  if (!proposal) throw util::Failure(ExitCode::bad_input, proposal.error());
  return std::move(*proposal);
}

std::string tiers_json(const inventory::Proposal& proposal, inventory::GroupBy group_by) {
  using Json = nlohmann::ordered_json;
  Json tiers = Json::array();
  for (const auto& t : proposal.tiers) {
    Json ccs = Json::array();
    for (const auto& cc : t.ccs) ccs.push_back(cc.dotted());
    Json slurm = Json::object();
    if (!t.partition.empty()) slurm["partition"] = t.partition;
    if (!t.constraint.empty()) slurm["constraint"] = t.constraint;
    if (!t.gres.empty()) slurm["gres"] = t.gres;
    Json gpus = Json::array();
    for (const auto& g : t.gpus)
      gpus.push_back(g.declared ? Json{{"name", g.name}, {"cc", g.declared->dotted()}} : Json(g.name));
    tiers.push_back(Json{{"name", t.name},
                         {"gpus", std::move(gpus)},
                         {"ccs", std::move(ccs)},
                         {"driver", t.driver ? Json(t.driver->str()) : Json(nullptr)},
                         {"driver_branch", t.branch ? Json(*t.branch) : Json(nullptr)},
                         {"drivers", t.drivers},
                         {"nodes", t.nodes},
                         {"products", t.products},
                         {"slurm", slurm.empty() ? Json(nullptr) : slurm},
                         {"kubernetes", t.selector.empty() ? Json(nullptr) : Json{{"selector", t.selector}}},
                         {"notes", t.notes}});
  }
  Json problems = Json::array();
  for (const auto& p : proposal.problems)
    problems.push_back(Json{{"node", p.node}, {"file", p.file}, {"message", p.message}});
  return Json{{"nodes", proposal.nodes},
              {"group_by", inventory::to_string(group_by)},
              {"tiers", std::move(tiers)},
              {"problems", std::move(problems)}}
             .dump(2) +
         "\n";
}

}  // namespace orc::app
