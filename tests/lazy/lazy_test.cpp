// cmake/LazyLibrary.cmake's stubs against a real shared library (lazy_probe)
// that this binary does not link: loaded on the first call, arguments intact,
// concurrent first calls, and the exit-3 errors when a library or function is
// missing.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

extern "C" {
int orc_probe_add(int a, int b);
double orc_probe_sum(int count, ...);
double orc_probe_many(long a, long b, long c, long d, long e, long f, double g, double h, double i, double j, double k,
                      double l, double m, double n, long o, double p, long q, double r);
int orc_probe_slow(int x);
int orc_probe_not_there();
int orc_absent_call();
}

namespace {

bool probe_loaded() {
  void* handle = ::dlopen(ORC_PROBE_PATH, RTLD_NOW | RTLD_NOLOAD);
  if (handle) ::dlclose(handle);
  return handle != nullptr;
}

// One test, in order: whether the library is loaded is process-wide.
TEST(LazyLibrary, LoadsOnTheFirstCallAndPassesEveryArgument) {
  EXPECT_FALSE(probe_loaded()) << "loaded before any call into it";
  EXPECT_EQ(orc_probe_add(2, 40), 42);
  EXPECT_TRUE(probe_loaded());
  EXPECT_EQ(orc_probe_add(-5, 3), -2);  // through the filled slot
  // Variadic doubles (al holds their count) and an int after them.
  EXPECT_DOUBLE_EQ(orc_probe_sum(3, 0.5, 1.25, 2.0, 7), 10.75);
  EXPECT_DOUBLE_EQ(orc_probe_sum(0, 4), 4.0);
  // Every integer and vector argument register, and the stack.
  const double expected = (1 + 2 * 2 + 3 * 3 + 4 * 4 + 5 * 5 + 6 * 6 + 7 * 15 + 8 * 17) + 0.5 + 2 * 1.5 + 3 * 2.5 +
                          4 * 3.5 + 5 * 4.5 + 6 * 5.5 + 7 * 6.5 + 8 * 7.5 + 9 * 16.5 + 10 * 18.5;
  EXPECT_DOUBLE_EQ(orc_probe_many(1, 2, 3, 4, 5, 6, 0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 15, 16.5, 17, 18.5),
                   expected);
}

TEST(LazyLibrary, ConcurrentFirstCallsAllArrive) {
  std::atomic<bool> go{false};
  std::atomic<int> right{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t)
    threads.emplace_back([&, t] {
      while (!go.load()) std::this_thread::yield();
      if (orc_probe_slow(t) == 2 * t) ++right;
    });
  go = true;
  for (auto& t : threads) t.join();
  EXPECT_EQ(right.load(), 16);
}

TEST(LazyLibraryDeathTest, MissingLibraryIsAnExit3ErrorNamingIt) {
  EXPECT_EXIT(orc_absent_call(), ::testing::ExitedWithCode(3),
              "^orchestrate: error: liborc-lazy-absent\\.so\\.0 is needed for the lazy-loading test but it cannot be "
              "loaded \\(liborc-lazy-absent\\.so\\.0: cannot open shared object file: No such file or directory\\); "
              "install it \\(apt-get install orc-absent\\)\n$");
}

TEST(LazyLibraryDeathTest, MissingFunctionIsAnExit3ErrorNamingIt) {
  EXPECT_EXIT(orc_probe_not_there(), ::testing::ExitedWithCode(3),
              "orchestrate: error: .*liblazy_probe\\.so is needed for the lazy-loading test but the copy loaded has no "
              "function orc_probe_not_there \\(.*\\); install it \\(apt-get install orc-probe\\)\n$");
}

}  // namespace
