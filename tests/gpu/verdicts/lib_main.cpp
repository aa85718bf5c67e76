// Host program for the shared-library fixtures: run() launches the library's
// kernel and returns the CUDA error code (0 when it ran).
#include <cstdio>
extern "C" int run();
int main() {
  const int e = run();
  std::printf(e == 0 ? "0 ran\n" : "%d failed\n", e);
  return e == 0 ? 0 : 1;
}
