#pragma once
// The one set of rules for the entries of an untrusted tar, read by both
// extractors: engine/tar_extract (what a container engine exports: a build's
// outputs) and cache/unpacker (a set's layer from a registry, or a stored
// pack, into the store and the user's DIR). Each extractor keeps its own
// I/O (libarchive, the streaming hashing writer); only the decision is here,
// entry by entry in archive order, with what earlier entries made. The rule
// on each point is the stricter of the two extractors' old ones, except the
// root entry "./" (docker and podman exports carry it).
//
// What each extractor did before, and the shared rule (its reason completes
// "entry 'NAME' ..."; the engine says "refusing archive: entry 'NAME' WHY",
// the cache "refused archive entry 'NAME': it WHY"):
//
//  entry                      | engine, before              | cache, before               | now
//  ---------------------------+-----------------------------+-----------------------------+----------------------------
//  empty name ""              | accepted as the root        | refused (empty name)        | refused: has an empty name
//  "." or "./", a directory   | accepted, nothing made      | refused (empty name)        | accepted, nothing made
//  "." as a file, link,       | names the destination       | refused (empty name)        | names the destination
//  device                     | itself                      |                             | itself
//  absolute name "/etc/x"     | has an absolute path        | absolute path               | has an absolute path
//  a ".." component           | has a '..' component        | '..' component              | has a '..' component
//  a component over 255       | no rule: the write fails    | no rule: mkdir or open      | has a name component over
//  bytes, a name over 4095    | after earlier entries were  | fails, an I/O error (exit   | 255 bytes / has a name over
//  bytes                      | written                     | 3)                          | 4095 bytes
//  character or block device  | is a device file            | character device, block     | is a device file
//                             |                             | device                      |
//  FIFO, socket               | is a FIFO or socket         | fifo, socket                | is a FIFO or socket
//  any other type             | has an unknown file type    | unknown entry type          | has an unknown file type
//  below an earlier symlink   | lies below the archive's    | it goes through the symlink | lies below the archive's
//  ("l" -> "d", then "l/f")   | symlink 'l'                 | 'l'                         | symlink 'l'
//  below a later symlink      | lies below the archive's    | at the link: it appears     | at the link: repeats an
//  ("l/f", then "l" -> "d")   | symlink 'l' (checked last)  | twice                       | earlier entry's path
//  below an earlier file      | no rule: the write fails    | 'f' is not a directory      | lies below 'f', which is
//  ("f", then "f/g")          | half-way                    |                             | not a directory
//  a path seen before, unless | repeats an earlier entry's  | it appears twice (the       | repeats an earlier entry's
//  both are directories       | path (entries only)         | directories made for        | path (the directories made
//                             |                             | entries count)              | for entries count)
//  hard link, absolute or     | is a hard link whose target | hardlink to 'T', which is   | is a hard link whose target
//  ".." target                | has ...                     | not a file unpacked before  | has ...
//                             |                             | it                          |
//  hard link to anything but  | is a hard link to 'T', not  | hardlink to 'T', which is   | is a hard link to 'T', not
//  an earlier regular file    | an earlier regular file     | not a file unpacked before  | an earlier regular file
//                             |                             | it                          |
//  symlink, empty target      | is a symlink with an empty  | symlink to '' points        | is a symlink with an empty
//                             | target                      | outside the directory       | target
//  symlink, absolute target   | is a symlink to an absolute | symlink to 'T' points       | is a symlink to an absolute
//                             | path ('T')                  | outside the directory       | path ('T')
//  symlink, more leading ".." | is a symlink ('T') that     | symlink to 'T' points       | is a symlink ('T') that
//  than its depth             | resolves outside the        | outside the directory       | resolves outside the
//                             | destination                 |                             | destination
//  symlink, ".." after a name | followed through the        | symlink to 'T' points       | is a symlink ('T') with a
//  ("q" -> "d/p/..")          | archive's links: accepted   | outside the directory       | '..' after a name
//                             | when d/p is a directory     |                             |
//  symlink target over 4095   | no rule: the write fails    | no rule: an I/O error       | is a symlink whose target
//  bytes                      |                             |                             | is over 4095 bytes
//  symlinks in a loop, or a   | is a symlink ('T') in a     | accepted                    | is a symlink ('T') in a
//  chain over 40 links        | loop                        |                             | loop (after the last entry:
//                             |                             |                             | finish())
//  setuid, setgid, sticky     | restored by libarchive      | dropped                     | dropped
//  bits                       | where the owner matches (as |                             |
//                             | root)                       |                             |
//  a directory's mode         | libarchive's (0777 became   | (mode & 0755) | 0700        | (mode & 0755) | 0700
//                             | 0755 under umask 022)       |                             |
//  files' declared sizes over | no limit                    | refused once the bytes      | refused at the header that
//  the caller's limit         |                             | written pass it             | passes it (the cache still
//                             |                             |                             | counts the bytes it writes)
//
// Why ".." only leading: a named component may itself be one of the
// archive's symlinks, whose parent is not the lexical one ("d/p" -> "..",
// then "q" -> "d/p/.." leaves). With only leading "..", no more of them than
// the link's depth, no absolute target, and nothing written below a link,
// no chain of the archive's links can leave the destination, in whatever
// order they come.
#include <cstdint>
#include <expected>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace orc::tarsafe {

enum class Kind { file, directory, symlink, hardlink, char_device, block_device, fifo, socket, unknown };

// An entry's kind from its file-type bits (S_IFMT; libarchive's AE_IF*
// constants have the same values) and whether it names a hard-link target,
// which decides whatever the type bits say.
Kind kind_of(unsigned filetype, bool hardlink);

// One archive entry as its header gives it. The views need only live for
// the call to Rules::check.
struct Entry {
  std::string_view name;  // as stored: "./out/k"
  Kind kind = Kind::file;
  std::string_view link;   // a symlink's target, a hard link's target, as stored
  unsigned mode = 0;       // permission bits as stored, setuid, setgid and sticky included
  std::uint64_t size = 0;  // a file's declared size
};

struct Accepted {
  std::string path;   // normalized ("out/k"); empty for the root entry, which makes nothing
  std::string link;   // a hard link's normalized target; a symlink's target as stored
  unsigned perm = 0;  // the permission bits to create it with
};

struct Refusal {
  std::string entry;   // the entry's name as stored
  std::string reason;  // completes "entry 'NAME' ...": "has an absolute path"
};

struct Limits {
  // Refuse the file whose declared size takes the files' total past this
  // (zero: no limit).
  std::uint64_t max_bytes = 0;
};

// The longest name and component accepted (Linux's PATH_MAX less its NUL,
// and NAME_MAX): an entry longer can be created at no destination.
inline constexpr std::size_t k_max_name_bytes = 4095;
inline constexpr std::size_t k_max_component_bytes = 255;
// Symlink chains longer than this are loops (Linux's own limit is 40).
inline constexpr int k_max_link_hops = 40;

// An entry's name in normalized form: no leading "./", no "." or empty
// components; "" is the root entry ("."). Fails (with the reason) for an
// empty name, an absolute one, a ".." component, an over-long name.
std::expected<std::string, std::string> normalize(std::string_view name);

// The rules, fed every entry in archive order.
class Rules {
 public:
  explicit Rules(Limits limits = {});

  // Whether `entry` is accepted after the entries before it; an accepted one
  // counts for the entries after it.
  std::expected<Accepted, Refusal> check(const Entry& entry);
  // What only the whole archive answers (symlinks in a loop), once every
  // entry was checked.
  std::expected<void, Refusal> finish() const;

 private:
  struct Link {
    std::string name;  // as stored
    std::string path;  // normalized
    std::string target;
  };
  std::expected<void, std::string> check_parents(const std::string& path) const;
  std::expected<std::string, std::string> check_kind(const Entry& entry, const std::string& path);
  std::expected<std::string, std::string> check_hardlink(std::string_view target) const;
  void record(const Entry& entry, const std::string& path, const std::string& link);

  Limits m_limits;
  std::uint64_t m_declared = 0;                            // never past m_limits.max_bytes
  std::unordered_map<std::string, Kind> m_made;            // path -> file, directory or symlink; "" is the root
  std::unordered_map<std::string, std::string> m_targets;  // symlink path -> target
  std::vector<Link> m_links;                               // in archive order
};

}  // namespace orc::tarsafe
