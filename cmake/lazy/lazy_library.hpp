#pragma once
// A shared library that the executable loads on the first call into it rather
// than at start-up (cmake/LazyLibrary.cmake). Each exported function of the
// library has a stub in the executable of the same name: a jump through its
// slot, or, while the slot is empty, into orc_lazy_resolve, which loads the
// library by its soname (dlopen, searched like a DT_NEEDED entry: no build
// path), looks the function up, fills the slot and goes on into it with the
// caller's arguments untouched. Commands that never call into the library
// never load it, nor what it depends on.

// One lazily loaded library; the generated stub file defines one, the
// resolver fills `handle`.
struct OrcLazyLibrary {
  const char* soname;       // "libcurl.so.4", what dlopen is asked for
  const char* needed_for;   // what needs it, for the error: "HTTP (engine API, registries)"
  const char* package;      // the Debian package that holds it: "libcurl4"
  const char* names;        // the functions' names, each ended by a NUL
  const unsigned* offsets;  // where each slot's name starts in `names`
  void** slots;             // each function's address once resolved, else null
  void* handle;             // dlopen's, under the resolver's lock
};

// The address of function `index` of `library`, loading the library first
// when no function of it was called yet. When the library or the function
// is missing it prints "orchestrate: error: ..." naming the library, what
// needs it and the package to install, and exits 3 (an outside part
// failed). Thread-safe; called from the stubs' assembly only.
extern "C" void* orc_lazy_resolve(OrcLazyLibrary* library, unsigned long index);
