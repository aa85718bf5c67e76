#pragma once
// A libarchive header as the rules read it, for the extractors that read
// their tars through libarchive (whose types stay out of this header: the
// struct is only named).
#include "orchestrator/tarsafe/rules.hpp"

struct archive_entry;

namespace orc::tarsafe {

// The entry `e` describes; its views point into `e`, valid until the
// archive's next header.
Entry entry_of(archive_entry* e);

}  // namespace orc::tarsafe
