// The library the lazy-loading test loads through its stubs (CMakeLists.txt).
// Each function checks every argument it is given, so a register the stubs
// failed to keep shows as a wrong result.
#include <cstdarg>
#include <thread>

extern "C" {

int orc_probe_add(int a, int b) { return a + b; }

// Variadic: `count` doubles (passed in xmm registers, with their number in
// al) and then an int.
double orc_probe_sum(int count, ...) {
  va_list args;
  va_start(args, count);
  double sum = 0;
  for (int i = 0; i < count; ++i) sum += va_arg(args, double);
  sum += va_arg(args, int);
  va_end(args);
  return sum;
}

// Six integer registers, eight vector registers, and four arguments on the
// stack.
double orc_probe_many(long a, long b, long c, long d, long e, long f, double g, double h, double i, double j, double k,
                      double l, double m, double n, long o, double p, long q, double r) {
  return static_cast<double>(a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * o + 8 * q) + g + 2 * h + 3 * i + 4 * j +
         5 * k + 6 * l + 7 * m + 8 * n + 9 * p + 10 * r;
}

// Called first from many threads at once (the resolver's lock).
int orc_probe_slow(int x) {
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return x * 2;
}
}
