#pragma once
// The proc mount a chroot needs, undone on every path out, and removing a
// work directory that an interrupted build may have left mounts under.
#include <filesystem>

namespace orc::imaging {

// Mounts proc on ROOT/proc and unmounts it when it goes, so a failed chroot
// step never leaves a mount under the cache.
class ProcMount {
 public:
  explicit ProcMount(const std::filesystem::path& root);
  ~ProcMount();
  ProcMount(const ProcMount&) = delete;
  ProcMount& operator=(const ProcMount&) = delete;

 private:
  std::filesystem::path m_target;
};

// Unmounts everything mounted under `dir` (deepest first), then removes it:
// a run killed mid-chroot leaves proc mounted in its work directory, and
// removing through a mounted proc must never happen. Throws util::Failure
// (outside_failure) when a mount will not go.
void remove_work_dir(const std::filesystem::path& dir);

}  // namespace orc::imaging
