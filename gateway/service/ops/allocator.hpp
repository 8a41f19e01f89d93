// Which allocator the running process got. The release build links mimalloc
// (docs/performance.md, "Pass-through and protected writes: mimalloc"); a
// packager who drops it, or a link order that lets glibc win, would cost
// every request a tenth more CPU without a word, so the process says what it
// has (gateway_build_info, the gateway_started line).
#pragma once

#include <string_view>

namespace gw {

// The file name of the shared object that provides this process's malloc,
// as the dynamic linker bound it: "libmimalloc.so.2.0", "libc.so.6",
// "libasan.so.8" under GCC's sanitizers; "built-in" when the executable
// itself holds it (clang's sanitizers); "unknown" if it cannot be told.
std::string_view malloc_library();

}  // namespace gw
