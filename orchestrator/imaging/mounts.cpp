#include "orchestrator/imaging/mounts.hpp"

#include <sys/mount.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "orchestrator/util/diagnostic.hpp"
#include "orchestrator/util/fs.hpp"
#include "orchestrator/util/strings.hpp"

namespace orc::imaging {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(std::string message) {
  throw util::Failure(util::ExitCode::outside_failure, std::move(message));
}

}  // namespace

ProcMount::ProcMount(const fs::path& root) : m_target(root / "proc") {
  std::error_code ec;
  fs::create_directories(m_target, ec);
  if (::mount("proc", m_target.c_str(), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
    fail("cannot mount proc on " + m_target.string() + ": " + std::strerror(errno));
}

ProcMount::~ProcMount() {
  if (::umount2(m_target.c_str(), 0) != 0) ::umount2(m_target.c_str(), MNT_DETACH);
}

void remove_work_dir(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return;
  const std::string prefix = fs::weakly_canonical(dir, ec).string() + "/";
  // Field 5 of mountinfo is the mount point.
  std::vector<std::string> mounts;
  const std::string info = util::read_file("/proc/self/mountinfo").value_or("");
  for (const auto& line : util::split_any(info, "\n")) {
    const auto fields = util::split_any(line, " ");
    if (fields.size() > 4 && fields[4].starts_with(prefix)) mounts.push_back(fields[4]);
  }
  std::ranges::sort(mounts, std::greater<>());
  for (const auto& m : mounts)
    if (::umount2(m.c_str(), 0) != 0 && ::umount2(m.c_str(), MNT_DETACH) != 0)
      fail("cannot unmount " + m + " (left by an interrupted build): " + std::strerror(errno));
  fs::remove_all(dir, ec);
  if (ec) fail("cannot remove " + dir.string() + ": " + ec.message());
}

}  // namespace orc::imaging
