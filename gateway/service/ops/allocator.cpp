#include "service/ops/allocator.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

namespace gw {

std::string_view malloc_library() {
  static const std::string name = [] {
    // The address of malloc as this executable sees it is the one every
    // library in the process calls: symbols bind in one global order.
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&std::malloc), &info) == 0 || !info.dli_fname) return std::string("unknown");
    // Linked into the executable itself, as clang links its sanitizers' runtime: no library
    // to name.
    Dl_info self{};
    if (dladdr(reinterpret_cast<void*>(&malloc_library), &self) != 0 && self.dli_fname &&
        std::string_view(self.dli_fname) == info.dli_fname)
      return std::string("built-in");
    const std::string_view path(info.dli_fname);
    const auto slash = path.rfind('/');
    return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
  }();
  return name;
}

}  // namespace gw
