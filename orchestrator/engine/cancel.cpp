#include <csignal>

#include "orchestrator/engine/engine.hpp"
#include "orchestrator/util/diagnostic.hpp"

namespace orc::engine {

namespace {

// A handler gets no argument to find its flag by; one flag at a time.
std::atomic<CancelFlag*> g_flag{nullptr};

extern "C" void on_cancel_signal(int signal) {
  if (CancelFlag* flag = g_flag.load()) flag->request(signal);
}

}  // namespace

struct ScopedSignalCancel::Saved {
  struct sigaction interrupt;
  struct sigaction terminate;
};

ScopedSignalCancel::ScopedSignalCancel(CancelFlag& flag) : m_saved(std::make_unique<Saved>()) {
  CancelFlag* expected = nullptr;
  if (!g_flag.compare_exchange_strong(expected, &flag)) {
    throw util::Failure(util::ExitCode::outside_failure, "ScopedSignalCancel: another one is active");
  }
  struct sigaction action = {};
  action.sa_handler = on_cancel_signal;
  sigemptyset(&action.sa_mask);
  // SA_RESTART: an interrupted read or poll elsewhere resumes; the engines
  // notice the flag on their own (curl's progress callback, once a second).
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, &m_saved->interrupt);
  sigaction(SIGTERM, &action, &m_saved->terminate);
}

ScopedSignalCancel::~ScopedSignalCancel() {
  sigaction(SIGINT, &m_saved->interrupt, nullptr);
  sigaction(SIGTERM, &m_saved->terminate, nullptr);
  g_flag.store(nullptr);
}

}  // namespace orc::engine
