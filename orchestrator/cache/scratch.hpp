#pragma once
// A build's scratch tree in the store's tmp/ (tmp/build-NAME-XXXXXX), and
// gc's sweep of the ones whose build is gone.
//
// A tree holds its owner lock, .owner.lock at its root, flock'ed
// exclusively by the process that made it for as long as it is in use.
// flock dies with its holder, however it dies (kill -9 included), and no
// other process can take over a dead one's lock as a reused PID could take
// over its number; it works across the hosts of a shared store where the
// file system passes locks on (NFS does). So a tree whose owner lock can be
// taken is abandoned, and one whose lock is held is in use, wherever its
// builder runs. The lock file is renamed into the tree already locked, so
// no moment exists where it is there and free while its builder lives.
// A tree without an owner lock (one kept by --keep-failed, or made by an
// orchestrate before owner locks) is never removed: it is listed.
#include <cstddef>
#include <cstdint>
#include <expected>
#include <filesystem>
#include <string_view>
#include <vector>

#include "orchestrator/cache/error.hpp"

namespace orc::cache {

class ScratchTree {
 public:
  // Makes tmp_dir/build-<name>-XXXXXX (mode 0755) holding its owner lock, taken.
  static std::expected<ScratchTree, Error> create(const std::filesystem::path& tmp_dir, std::string_view name);
  ScratchTree(ScratchTree&& other) noexcept;
  ScratchTree& operator=(ScratchTree&&) = delete;
  // Releases the owner lock; the tree stays (remove() or keep() decide).
  ~ScratchTree();

  const std::filesystem::path& path() const { return m_path; }
  // Removes the tree, its owner lock last: a process killed while removing
  // leaves a tree that gc still knows to be abandoned.
  void remove();
  // Leaves the tree for the user to look at: its owner lock file goes, so
  // gc lists the tree rather than removing it.
  void keep();

 private:
  ScratchTree(std::filesystem::path path, int fd) : m_path(std::move(path)), m_fd(fd) {}
  std::filesystem::path m_path;
  int m_fd = -1;
};

struct ScratchSweep {
  // The trees listed below, at most: a tmp/ of a million trees costs a count.
  static constexpr std::size_t k_listed = 100;
  std::uint64_t removed = 0;                   // trees whose owner was gone
  std::uint64_t bytes = 0;                     // in their regular files
  std::vector<std::filesystem::path> in_use;   // owner lock held: left as they are
  std::vector<std::filesystem::path> unowned;  // no owner lock: left, for the user to remove
  std::uint64_t in_use_total = 0;              // of which in_use lists the first k_listed
  std::uint64_t unowned_total = 0;
};

// The scratch trees in `tmp_dir`, one at a time as the directory is read:
// removes those whose owner lock is free.
ScratchSweep sweep_scratch_trees(const std::filesystem::path& tmp_dir);

}  // namespace orc::cache
