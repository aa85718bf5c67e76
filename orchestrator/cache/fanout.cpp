#include "orchestrator/cache/fanout.hpp"

#include <pthread.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <string>

namespace orc::cache {

BlockFanout::~BlockFanout() {
  {
    std::lock_guard lock(m_mutex);
    m_stop = true;
  }
  m_changed.notify_all();
  for (auto& t : m_threads) t.join();
}

void BlockFanout::begin(std::vector<Step> steps) {
  std::lock_guard lock(m_mutex);
  m_steps = std::move(steps);
  m_ok.assign(m_steps.size(), true);
  // end() left every step's thread caught up; one idle during the last file
  // (it had fewer steps) starts from here too.
  for (auto& taken : m_taken) taken = m_published;
  while (m_threads.size() < m_steps.size()) {
    const std::size_t step = m_threads.size();
    m_taken.push_back(m_published);
    m_threads.emplace_back([this, step] { run(step); });
  }
}

void BlockFanout::run(std::size_t step) {
  // Named for top -H and perf: "orc-step-0" hashes when the unpack hashes.
  ::pthread_setname_np(::pthread_self(), ("orc-step-" + std::to_string(step)).c_str());
  std::unique_lock lock(m_mutex);
  for (;;) {
    m_changed.wait(lock, [&] { return m_stop || (step < m_steps.size() && m_taken[step] < m_published); });
    if (m_stop) return;
    // The producer leaves a published slot alone until every step took it,
    // and m_steps alone until end() saw every step finish.
    Slot& slot = m_slots[m_taken[step] % k_slots];
    const bool go = m_ok[step];
    const Step& work = m_steps[step];
    lock.unlock();
    bool ok = true;
    if (go) {
      try {
        ok = work(std::span<const std::byte>(slot.data.get(), slot.size));
      } catch (...) {  // a thread must not end the process: the step failed
        ok = false;
      }
    }
    lock.lock();
    if (!ok) m_ok[step] = false;
    ++m_taken[step];
    --slot.steps_left;
    m_changed.notify_all();
  }
}

void BlockFanout::publish(std::unique_lock<std::mutex>& /*held*/) {
  m_slots[m_published % k_slots].steps_left = m_steps.size();
  ++m_published;
  m_filling = false;
  m_changed.notify_all();
}

void BlockFanout::put(std::span<const std::byte> bytes) {
  while (!bytes.empty()) {
    Slot* slot = nullptr;
    {
      std::unique_lock lock(m_mutex);
      slot = &m_slots[m_published % k_slots];
      if (!m_filling) {
        m_changed.wait(lock, [&] { return slot->steps_left == 0; });
        if (!slot->data) {
          slot->data.reset(static_cast<std::byte*>(std::aligned_alloc(k_alignment, k_block)));
          if (!slot->data) throw std::bad_alloc();
        }
        slot->size = 0;
        m_filling = true;
      }
    }
    // The slot is the producer's until it is published: no lock to copy.
    const std::size_t n = std::min(bytes.size(), k_block - slot->size);
    std::memcpy(slot->data.get() + slot->size, bytes.data(), n);
    slot->size += n;
    bytes = bytes.subspan(n);
    if (slot->size == k_block) {
      std::unique_lock lock(m_mutex);
      publish(lock);
    }
  }
}

bool BlockFanout::failed() {
  std::lock_guard lock(m_mutex);
  return std::find(m_ok.begin(), m_ok.end(), false) != m_ok.end();
}

std::vector<bool> BlockFanout::end() {
  std::unique_lock lock(m_mutex);
  if (m_filling && m_slots[m_published % k_slots].size > 0) publish(lock);
  m_filling = false;
  m_changed.wait(lock, [&] {
    return std::all_of(m_taken.begin(), m_taken.begin() + static_cast<std::ptrdiff_t>(m_steps.size()),
                       [&](std::uint64_t taken) { return taken == m_published; });
  });
  return m_ok;
}

}  // namespace orc::cache
