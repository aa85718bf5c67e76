#pragma once
// The bytes of one file handed to several threads at once, each applying its
// own step to every block in order (one hashes, one writes into each tree of
// an unpack), so the thread that decompresses copies each byte once and
// the slowest step, not their sum, sets the pace. Blocks are 4 MiB slots in
// a ring; a slot is filled again once every step is done with it, so memory
// stays at k_slots blocks whatever the file's size. Blocks start on a 4 KiB
// boundary and every one but a file's last is full, so a step may write them
// with O_DIRECT.
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

namespace orc::cache {

class BlockFanout {
 public:
  // Applied to each block of the file in order, on a thread of its own;
  // false stops that step for the rest of the file (end() reports it).
  using Step = std::function<bool(std::span<const std::byte>)>;

  BlockFanout() = default;
  ~BlockFanout();
  BlockFanout(const BlockFanout&) = delete;
  BlockFanout& operator=(const BlockFanout&) = delete;

  // Starts a file with these steps (threads are started on first need).
  void begin(std::vector<Step> steps);
  // Copies `bytes` into the ring, handing each full block to the steps.
  void put(std::span<const std::byte> bytes);
  // Whether a step of this file has failed already (the producer may stop).
  bool failed();
  // Hands over the last block, waits for every step to finish the file and
  // returns, per step, whether it succeeded (a step that threw failed).
  std::vector<bool> end();

  static constexpr std::size_t k_block = 4 << 20;
  static constexpr std::size_t k_alignment = 4096;
  static constexpr std::size_t k_slots = 6;

 private:

  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  struct Slot {
    std::unique_ptr<std::byte, Free> data;  // k_block bytes, k_alignment-aligned
    std::size_t size = 0;
    std::size_t steps_left = 0;  // steps yet to take this block
  };

  void run(std::size_t step);
  void publish(std::unique_lock<std::mutex>& lock);

  std::mutex m_mutex;
  std::condition_variable m_changed;
  std::vector<Step> m_steps;
  std::vector<bool> m_ok;
  std::vector<std::uint64_t> m_taken;  // per step thread: blocks it has finished
  std::vector<std::thread> m_threads;
  std::vector<Slot> m_slots = std::vector<Slot>(k_slots);
  std::uint64_t m_published = 0;  // blocks handed over since the first file
  bool m_filling = false;         // the producer owns slot m_published % k_slots
  bool m_stop = false;
};

}  // namespace orc::cache
