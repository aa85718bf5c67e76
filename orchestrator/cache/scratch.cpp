#include "orchestrator/cache/scratch.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <utility>

#include "orchestrator/cache/files.hpp"

namespace orc::cache {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view k_prefix = "build-";
constexpr std::string_view k_owner_lock = ".owner.lock";

// Removes `path` and what is under it; a build may leave directories without
// write permission (Go's module cache does), so those are opened up and
// the removal tried once more.
void remove_all_of(const fs::path& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (!ec) return;
  for (auto it = fs::recursive_directory_iterator(path, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    std::error_code chmod_ec;
    if (it->is_directory(chmod_ec) && !it->is_symlink(chmod_ec))
      fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, chmod_ec);
  }
  fs::remove_all(path, ec);
}

// Everything in `tree` but its owner lock, then the lock, then the tree: a
// removal cut short leaves a tree whose (free) lock still says abandoned.
void remove_tree(const fs::path& tree) {
  std::vector<fs::path> entries;
  std::error_code ec;
  for (auto it = fs::directory_iterator(tree, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
    if (it->path().filename() != k_owner_lock) entries.push_back(it->path());
  for (const auto& entry : entries) remove_all_of(entry);
  fs::remove(tree / k_owner_lock, ec);
  fs::remove(tree, ec);
}

// The bytes of the regular files under `tree`, links not followed.
std::uint64_t tree_bytes(const fs::path& tree) {
  std::uint64_t bytes = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(tree, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    std::error_code size_ec;
    if (it->is_regular_file(size_ec) && !it->is_symlink(size_ec)) bytes += it->file_size(size_ec);
  }
  return bytes;
}

}  // namespace

std::expected<ScratchTree, Error> ScratchTree::create(const fs::path& tmp_dir, std::string_view name) {
  std::string pattern = (tmp_dir / (std::string(k_prefix) + std::string(name) + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) return std::unexpected(errno_error("creating", pattern));
  const fs::path tree = pattern;
  std::error_code ec;
  // Locked before it has its name: a sweep finds no owner lock (and leaves
  // the tree alone) or a held one, never a free one of a live build.
  const fs::path staged = tree / (std::string(k_owner_lock) + ".new");
  const int fd = ::open(staged.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    const Error failed = errno_error("creating", staged);
    fs::remove(tree, ec);
    return std::unexpected(failed);
  }
  if (::flock(fd, LOCK_EX) != 0 || ::rename(staged.c_str(), (tree / k_owner_lock).c_str()) != 0) {
    const Error failed = errno_error("taking the owner lock", staged);
    ::close(fd);
    fs::remove_all(tree, ec);
    return std::unexpected(failed);
  }
  // mkdtemp's 0700 would keep a container user of another uid out of /src.
  ::chmod(tree.c_str(), 0755);
  return ScratchTree(tree, fd);
}

ScratchTree::ScratchTree(ScratchTree&& other) noexcept
    : m_path(std::move(other.m_path)), m_fd(std::exchange(other.m_fd, -1)) {}

ScratchTree::~ScratchTree() {
  if (m_fd >= 0) ::close(m_fd);
}

void ScratchTree::remove() {
  remove_tree(m_path);
  if (m_fd >= 0) ::close(std::exchange(m_fd, -1));
}

void ScratchTree::keep() {
  std::error_code ec;
  fs::remove(m_path / k_owner_lock, ec);
  if (m_fd >= 0) ::close(std::exchange(m_fd, -1));
}

namespace {

void list(std::vector<fs::path>& listed, std::uint64_t& total, const fs::path& tree) {
  if (++total <= ScratchSweep::k_listed) listed.push_back(tree);
}

// One tree: removed when its owner lock can be taken, else listed.
void sweep_one(const fs::path& tree, ScratchSweep& out) {
  // O_RDWR: where flock becomes a byte-range lock (NFS), an exclusive one
  // needs a descriptor open for writing.
  const int fd = ::open((tree / k_owner_lock).c_str(), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return list(out.unowned, out.unowned_total, tree);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return list(out.in_use, out.in_use_total, tree);
  }
  const std::uint64_t bytes = tree_bytes(tree);
  remove_tree(tree);
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(tree, ec))) {
    ++out.removed;
    out.bytes += bytes;
  }
  ::close(fd);
}

}  // namespace

ScratchSweep sweep_scratch_trees(const fs::path& tmp_dir) {
  ScratchSweep out;
  std::error_code ec;
  // Removing the entry just read leaves the rest of the listing as it was.
  for (auto it = fs::directory_iterator(tmp_dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::error_code type_ec;
    if (it->path().filename().string().starts_with(k_prefix) &&
        it->symlink_status(type_ec).type() == fs::file_type::directory)
      sweep_one(it->path(), out);
  }
  return out;
}

}  // namespace orc::cache
