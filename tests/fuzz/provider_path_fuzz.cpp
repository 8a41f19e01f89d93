// The proxy's provider path (issue #8, docs/security.md promise 5): the
// input is what an agent writes after /v1/tenants/t/tasks/k/providers/p, cut
// by gw::split_provider_target as proxy_routes.cpp does, checked by
// gw::provider_path_problem, and joined to the provider's base path by
// gw::upstream_target (service/proxy/forwarding.hpp). The first byte picks the
// base path and which path forms the provider opted in to.
//
// Whenever provider_path_problem lets a path through, the target sent
// upstream starts with the base path, and it still does after a provider's
// framework reads it as the threat model allows: %2e as '.', %2f, %5c and
// '\' as '/', %00 as the end of the path, ";params" ignored for dot-segments,
// then RFC 3986 dot-segment removal.
// Traps otherwise.
#include "config/config.hpp"
#include "core/provider_path.hpp"
#include "http/framing.hpp"
#include "service/proxy/forwarding.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr std::string_view prefix = "/v1/tenants/t/tasks/k/providers/p";
// As config's parse_base_url leaves them: "" or "/x", no trailing '/'.
constexpr std::array<std::string_view, 4> base_paths{"", "/api", "/api/v1", "/a.b/c"};

void check(bool ok) {
  if (!ok) __builtin_trap();
}

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// RFC 3986 section 5.2.4 for an absolute path.
std::string remove_dot_segments(std::string_view path) {
  std::vector<std::string_view> out;
  std::string_view rest = path.substr(1);
  while (true) {
    const auto slash = rest.find('/');
    const auto segment = rest.substr(0, slash);
    const auto bare = segment.substr(0, segment.find(';'));  // "..;x" read as ".."
    const bool last = slash == std::string_view::npos;
    if (bare == "." || bare == "..") {
      if (bare == ".." && !out.empty()) out.pop_back();
      if (last) out.emplace_back();
    } else {
      out.push_back(segment);
    }
    if (last) break;
    rest.remove_prefix(slash + 1);
  }
  std::string joined;
  for (auto segment : out) joined.append(1, '/').append(segment);
  return joined.empty() ? "/" : joined;
}

// The path as a lenient provider framework may read it.
std::string as_provider_reads(std::string_view path) {
  std::string s;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '\\') {
      s += '/';
      continue;
    }
    if (path[i] == '%' && i + 2 < path.size()) {
      const char hi = path[i + 1], lo = lower(path[i + 2]);
      if (hi == '0' && lo == '0') break;
      const char as = hi == '2' && lo == 'e' ? '.' : (hi == '2' && lo == 'f') || (hi == '5' && lo == 'c') ? '/' : 0;
      if (as) {
        s += as;
        i += 2;
        continue;
      }
    }
    s += path[i];
  }
  return remove_dot_segments(s);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  gw::ProviderConfig provider;
  provider.base_path = std::string(base_paths[data[0] % base_paths.size()]);
  auto& forms = provider.allowed_path_forms;
  forms.dot_segments = data[0] & 0x04;
  forms.encoded_slash = data[0] & 0x08;
  forms.backslash = data[0] & 0x10;
  forms.leading_double_slash = data[0] & 0x20;
  const std::string target = std::string(prefix) + std::string(reinterpret_cast<const char*>(data) + 1, size - 1);

  const auto [rest, query] = gw::split_provider_target(target);
  check(rest.empty() || rest.front() == '/');
  check(query.empty() || query.front() == '?');
  check(rest.find('?') == std::string_view::npos);
  check(std::string_view(target).ends_with(std::string(rest) + std::string(query)));

  const auto why = gw::provider_path_problem(rest, forms);
  // A target with a byte outside visible ASCII never gets this far (head_problem: 400).
  if (why || gw::http::head_problem(target, {})) return 0;

  const auto built = gw::upstream_target(provider, rest, query);
  const std::string& base = provider.base_path;
  check(built.starts_with(base));
  const std::string_view path = std::string_view(built).substr(0, built.size() - query.size());
  check(path.substr(base.size()) == (rest.empty() ? std::string_view("/") : rest));
  if (!forms.leading_double_slash) check(!path.starts_with("//"));  // never read as //host

  // Whatever forms are allowed, the path never climbs above the base path.
  const auto seen = as_provider_reads(path);
  check(seen.starts_with(base) && (seen.size() == base.size() || seen[base.size()] == '/'));
  if (!forms.leading_double_slash) check(!seen.starts_with("//"));
  return 0;
}
