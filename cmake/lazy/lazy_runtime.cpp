// The resolver behind every lazily loaded library's stubs (lazy_library.hpp).
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "cmake/lazy/lazy_library.hpp"

namespace {

// Said on stderr in the one error format, then exit 3 without running
// destructors: this can happen on any thread, in the middle of anything.
[[noreturn]] void fail(const OrcLazyLibrary& library, const std::string& what) {
  const std::string line = "orchestrate: error: " + std::string(library.soname) + " is needed for " +
                           library.needed_for + " but " + what + "; install it (apt-get install " + library.package +
                           ")\n";
  std::fflush(nullptr);
  for (std::size_t done = 0; done < line.size();) {
    const ssize_t n = ::write(STDERR_FILENO, line.data() + done, line.size() - done);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  ::_exit(3);
}

std::string dl_error() {
  const char* e = ::dlerror();
  return e ? e : "no reason given";
}

}  // namespace

extern "C" void* orc_lazy_resolve(OrcLazyLibrary* library, unsigned long index) {
  // One lock for all libraries: resolving happens once per function.
  static std::mutex mutex;
  const std::lock_guard lock(mutex);
  if (void* done = __atomic_load_n(&library->slots[index], __ATOMIC_ACQUIRE)) return done;
  if (!library->handle) {
    library->handle = ::dlopen(library->soname, RTLD_LAZY | RTLD_LOCAL);
    if (!library->handle) fail(*library, "it cannot be loaded (" + dl_error() + ")");
  }
  ::dlerror();
  const char* name = library->names + library->offsets[index];
  void* function = ::dlsym(library->handle, name);
  if (!function) fail(*library, "the copy loaded has no function " + std::string(name) + " (" + dl_error() + ")");
  __atomic_store_n(&library->slots[index], function, __ATOMIC_RELEASE);
  return function;
}
