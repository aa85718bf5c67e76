#pragma once
// An exclusive advisory lock on a file (flock), held for the object's life.
// Two orchestrate processes that fill the same cache entry (a rootfs tar, a
// store record) take it around check-then-make, so the second waits and then
// finds the entry made instead of racing the first into the same directory.
// flock locks die with the process, so a crashed holder never wedges a cache.
#include <filesystem>
#include <ostream>
#include <string>

namespace orc::util {

class FileLock {
 public:
  // Blocks until the lock is held. When another process holds it, says once
  // on `progress` what it waits for. Throws Failure (outside_failure) when
  // the lock file cannot be created or locked.
  FileLock(const std::filesystem::path& path, std::ostream& progress);
  // Takes the lock only when it is free now (held() says whether it did)
  // and then writes this process's ID into the file, so one that finds it
  // taken can say who holds it (holder()). Throws as above when the file
  // cannot be opened.
  struct NoWait {};
  FileLock(const std::filesystem::path& path, NoWait);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

  const std::filesystem::path& path() const { return m_path; }
  bool held() const { return m_fd >= 0; }
  // The process ID the holder wrote (NoWait), or empty.
  std::string holder() const;

 private:
  std::filesystem::path m_path;
  int m_fd = -1;
};

}  // namespace orc::util
