// LD_PRELOAD shim for the tests in this folder: once the program has mapped
// the file that ORC_TRUNCATE_AFTER_MAP names, the file is truncated to
// ORC_TRUNCATE_TO bytes. Every read the program then makes past that point
// runs off the file's new end, as when another process truncates it while
// it is read, but on every run instead of when a race is lost.
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>

extern "C" void* mmap(void* address, size_t length, int protection, int flags, int fd, off_t offset) {
  // The system call itself, not the next mmap: looking that up (dlsym) may
  // allocate, and allocating may map.
  void* mapped = reinterpret_cast<void*>(::syscall(SYS_mmap, address, length, protection, flags, fd, offset));
  const char* target = std::getenv("ORC_TRUNCATE_AFTER_MAP");
  if (mapped == MAP_FAILED || fd < 0 || !target) return mapped;
  struct stat mapped_file {
  }, named{};
  if (::fstat(fd, &mapped_file) != 0 || ::stat(target, &named) != 0) return mapped;
  if (mapped_file.st_dev != named.st_dev || mapped_file.st_ino != named.st_ino) return mapped;
  const char* size = std::getenv("ORC_TRUNCATE_TO");
  (void)::truncate(target, size ? std::atoll(size) : 0);
  return mapped;
}
