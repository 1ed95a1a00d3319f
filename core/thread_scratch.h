#pragma once
// This thread's instance of a scratch type, for buffers that hot functions
// keep between calls instead of allocating.
//
// Why not a plain `thread_local` in the function: in a shared library (the
// plugin) every use of a thread-local's address is a call to
// __tls_get_addr, and GCC re-derives the address at each use and even
// specializes callees for it (a ".constprop" clone that looks it up again
// inside), which cost 3-4% of a pyramid's search. The address returned here
// is hidden from the optimizer, so a caller looks it up once and keeps it.

namespace gpusched {

template <typename T> T &thread_scratch() {
    thread_local T instance;
    T *p = &instance;
#if defined(__GNUC__) || defined(__clang__)
    asm("" : "+r"(p)); // an opaque copy: no later use is traced back to the thread-local
#endif
    return *p;
}

} // namespace gpusched
