#include "orchestrator/tarsafe/archive_entry.hpp"

#include <archive_entry.h>
#include <sys/stat.h>

#include <algorithm>

namespace orc::tarsafe {

// kind_of reads the type bits as <sys/stat.h> spells them.
static_assert(AE_IFMT == S_IFMT && AE_IFREG == S_IFREG && AE_IFDIR == S_IFDIR && AE_IFLNK == S_IFLNK &&
              AE_IFCHR == S_IFCHR && AE_IFBLK == S_IFBLK && AE_IFIFO == S_IFIFO && AE_IFSOCK == S_IFSOCK);

Entry entry_of(archive_entry* e) {
  const char* name = archive_entry_pathname(e);
  const char* hard = archive_entry_hardlink(e);
  const char* link = hard ? hard : archive_entry_symlink(e);
  return {.name = name ? name : "",
          .kind = kind_of(archive_entry_filetype(e), hard != nullptr),
          .link = link ? link : "",
          .mode = static_cast<unsigned>(archive_entry_perm(e)),
          .size = static_cast<std::uint64_t>(std::max<la_int64_t>(archive_entry_size(e), 0))};
}

}  // namespace orc::tarsafe
