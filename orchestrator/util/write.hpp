#pragma once
// The one loop that writes a whole buffer to a descriptor (EINTR retried,
// short writes continued), issuing it as write(2) calls of at most
// k_write_piece bytes.
//
// Why pieces: on this project's Linux 6.18 / ext4 build machine, a buffered
// write(2) of 2 MiB or more into a new file ran at 37-64 MB/s, while calls of
// 16 KiB to 1.5 MiB of the same bytes ran at 0.7-1.7 GB/s (dd if=/dev/zero
// bs=N, 512 MiB, rounds alternated in the same minute; perf: 97 % of the
// slow runs in the kernel's copy_folio_from_iter_atomic). fetch's copy into
// DIR was written in 4 MiB calls and spent 13.6 s of a 17 s round in them
// (bench/results/fetch-rounds-vm.txt). O_DIRECT writes do not go through the
// page cache and are not split (cache/unpack_file.cpp).
#include <sys/types.h>

#include <cstddef>
#include <span>
#include <string_view>

namespace orc::util {

inline constexpr std::size_t k_write_piece = 64 << 10;

// false with errno set when a call fails (or writes nothing).
bool write_all(int fd, std::span<const std::byte> bytes);
bool write_all(int fd, std::string_view bytes);
// At `offset`, not moving the file offset.
bool pwrite_all(int fd, std::span<const std::byte> bytes, off_t offset);

}  // namespace orc::util
