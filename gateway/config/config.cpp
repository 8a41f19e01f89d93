#include "config/config.hpp"

#include "core/http_syntax.hpp"
#include "core/labels.hpp"
#include "core/methods.hpp"
#include "core/strict_json.hpp"
#include "core/webhook_signature.hpp"

#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

namespace gw {
namespace {

using json = nlohmann::json;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw ConfigError(path + ": " + what);
}

// Walks one JSON object, remembering its path for errors and rejecting
// members nobody asked for (a typo must not silently become a default).
// Whether a config field must be given.
enum class Presence { optional, required };

class Object {
 public:
  Object(const json& j, std::string path) : j_(j), path_(std::move(path)) {
    if (!j_.is_object()) fail(path_, "must be an object");
  }
  ~Object() noexcept(false) {
    if (std::uncaught_exceptions() > 0) return;
    for (auto it = j_.begin(); it != j_.end(); ++it)
      if (!seen_.count(it.key())) fail(path_ + "." + it.key(), "unknown field");
  }

  const json* get(const std::string& key) {
    seen_.insert(key);
    auto it = j_.find(key);
    return it == j_.end() || it->is_null() ? nullptr : &*it;
  }
  std::string at(const std::string& key) const { return path_ + "." + key; }

  void string(const std::string& key, std::string& out, Presence presence = Presence::optional) {
    auto v = get(key);
    if (!v) {
      if (presence == Presence::required) fail(at(key), "is required");
      return;
    }
    if (!v->is_string()) fail(at(key), "must be a string");
    out = v->get<std::string>();
  }
  template <class Int>
  void integer(const std::string& key, Int& out, std::int64_t lo, std::int64_t hi) {
    auto v = get(key);
    if (!v) return;
    auto n = json_integer(*v);
    if (!n || *n < lo || *n > hi)
      fail(at(key), "must be an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
    out = static_cast<Int>(*n);
  }
  void millis(const std::string& key, ms& out, std::int64_t lo, std::int64_t hi) {
    std::int64_t v = out.count();
    integer(key, v, lo, hi);
    out = ms(v);
  }
  void days(const std::string& key, ms& out, std::int64_t lo, std::int64_t hi) {
    std::int64_t v = std::chrono::duration_cast<std::chrono::hours>(out).count() / 24;
    integer(key, v, lo, hi);
    out = std::chrono::hours(24 * v);
  }
  void boolean(const std::string& key, bool& out) {
    auto v = get(key);
    if (!v) return;
    if (!v->is_boolean()) fail(at(key), "must be true or false");
    out = v->get<bool>();
  }
  void array(const std::string& key, const std::function<void(const json&, const std::string&)>& each) {
    auto v = get(key);
    if (!v) return;
    if (!v->is_array()) fail(at(key), "must be an array");
    for (std::size_t i = 0; i < v->size(); ++i) each((*v)[i], at(key) + "[" + std::to_string(i) + "]");
  }

 private:
  const json& j_;
  std::string path_;
  std::set<std::string> seen_;
};

std::string string_item(const json& v, const std::string& path) {
  if (!v.is_string()) fail(path, "must be a string");
  return v.get<std::string>();
}

bool is_hex_sha256(const std::string& s) {
  return s.size() == 64 &&
         s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

std::string env_value(const std::string& name, const std::string& path) {
  const char* v = std::getenv(name.c_str());
  if (!v || !*v) fail(path, "environment variable " + name + " is not set");
  return v;
}

// One status (404) or "first-last" range string ("500-503"), unchecked.
// Clamped before narrowing, so 2^32 + 400 cannot wrap into range.
StatusRange status_item(const json& v, const std::string& item) {
  StatusRange r;
  if (auto n = json_integer(v)) {
    r.first = r.last = static_cast<unsigned>(std::min<std::int64_t>(*n, 1000));
  } else if (v.is_string()) {
    auto s = v.get<std::string>();
    auto dash = s.find('-');
    auto a = decimal_integer(s.substr(0, dash));
    auto b = dash == std::string::npos ? a : decimal_integer(s.substr(dash + 1));
    if (!a || !b) fail(item, "must be a status or a \"first-last\" range");
    r.first = static_cast<unsigned>(std::min<std::int64_t>(*a, 1000));
    r.last = static_cast<unsigned>(std::min<std::int64_t>(*b, 1000));
  } else {
    fail(item, "must be a status or a \"first-last\" range");
  }
  return r;
}

bool overlap(const std::vector<StatusRange>& a, const std::vector<StatusRange>& b) {
  for (auto x : a)
    for (auto y : b)
      if (x.first <= y.last && y.first <= x.last) return true;
  return false;
}

std::vector<StatusRange> status_ranges(const json& v, const std::string& path) {
  if (!v.is_array()) fail(path, "must be an array of statuses or \"first-last\" ranges");
  std::vector<StatusRange> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    auto item = path + "[" + std::to_string(i) + "]";
    auto r = status_item(v[i], item);
    if (r.first <= 299 && r.last >= 200) fail(item, "2xx always means succeeded");
    if (r.first < 300 || r.last > 599 || r.first > r.last) fail(item, "must lie within 300-599");
    out.push_back(r);
  }
  return out;
}

// A lookup's found / not_found statuses: final statuses, 2xx included.
std::vector<StatusRange> lookup_statuses(const json& v, const std::string& path) {
  if (!v.is_array() || v.empty()) fail(path, "must be a non-empty array of statuses or \"first-last\" ranges");
  std::vector<StatusRange> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    auto item = path + "[" + std::to_string(i) + "]";
    auto r = status_item(v[i], item);
    if (r.first < 200 || r.last > 599 || r.first > r.last) fail(item, "must lie within 200-599");
    out.push_back(r);
  }
  return out;
}

void json_pointer_field(Object& o, const std::string& key, std::optional<std::string>& out) {
  std::string text;
  if (!o.get(key)) return;
  o.string(key, text);
  try {
    json::json_pointer p(text);
  } catch (const json::exception&) {
    fail(o.at(key), "must be a JSON pointer (RFC 6901), e.g. \"/status\"");
  }
  out = text;
}

LookupConfig parse_lookup(const json& j, const std::string& path) {
  LookupConfig l;
  Object o(j, path);
  o.string("method", l.method);
  if (l.method != "GET" && l.method != "HEAD") fail(o.at("method"), "must be GET or HEAD");
  o.string("path", l.path, Presence::required);
  if (auto problem = lookup_path_problem(l.path)) fail(o.at("path"), *problem);
  if (auto f = o.get("found")) l.found = lookup_statuses(*f, o.at("found"));
  if (auto n = o.get("not_found")) l.not_found = lookup_statuses(*n, o.at("not_found"));
  if (overlap(l.found, l.not_found)) fail(o.at("not_found"), "overlaps the found statuses: a status has one meaning");
  o.millis("settle_window_ms", l.settle_window, 0, 86400000);
  json_pointer_field(o, "status_pointer", l.status_pointer);
  json_pointer_field(o, "body_pointer", l.body_pointer);
  if (l.method == "HEAD" && (l.status_pointer || l.body_pointer))
    fail(o.at("method"), "HEAD has no body for status_pointer or body_pointer to read");
  return l;
}

// http://host[:port][/base] or https://...; no user info, query or fragment.
void parse_base_url(const std::string& url, ProviderConfig& p, const std::string& path) {
  auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos) fail(path, "must be an http:// or https:// URL");
  auto scheme = url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https") fail(path, "scheme must be http or https");
  p.tls = scheme == "https";
  auto rest = url.substr(scheme_end + 3);
  auto slash = rest.find('/');
  auto authority = rest.substr(0, slash);
  p.base_path = slash == std::string::npos ? "" : rest.substr(slash);
  while (!p.base_path.empty() && p.base_path.back() == '/') p.base_path.pop_back();
  if (authority.empty() || authority.find('@') != std::string::npos ||
      url.find_first_of("?# ") != std::string::npos)
    fail(path, "must be scheme://host[:port][/path] without credentials, query or fragment");
  auto colon = authority.rfind(':');
  if (colon != std::string::npos && authority.find(']', colon) == std::string::npos) {
    p.host = authority.substr(0, colon);
    p.port = authority.substr(colon + 1);
    auto n = decimal_integer(p.port);
    if (!n || *n < 1 || *n > 65535) fail(path, "port must be 1-65535");
  } else {
    p.host = authority;
    p.port = p.tls ? "443" : "80";
  }
  if (p.host.size() > 2 && p.host.front() == '[' && p.host.back() == ']')
    p.host = p.host.substr(1, p.host.size() - 2);
  if (p.host.empty()) fail(path, "host is empty");
}

// Printable ASCII and spaces: safe inside an HTTP header value.
bool is_header_value(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return c >= 32 && c <= 126; });
}


// A credential file's content: what a Kubernetes or Docker secret mount
// holds. One trailing newline is not part of it (editors and `echo` add
// one). Opened without blocking, and only a regular file is read, so a path
// that names a FIFO or a device cannot hang a start or a reload.
std::string file_value(const std::string& file, const std::string& path) {
  const auto fail_with = [&](const std::string& what) { fail(path, "cannot read " + file + ": " + what); };
  const int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) fail_with(std::strerror(errno));
  std::string value;
  std::string problem;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    problem = std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    problem = "not a regular file";
  } else if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    // A secret anyone else on the host can read is no longer the tenant's
    // alone, and one they can write lets them choose the gateway's account.
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    problem = std::string("open to group or others (mode ") + mode + "); make it readable by its owner only (chmod 600)";
  } else {
    char buffer[4096];
    for (;;) {
      const auto n = ::read(fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        problem = std::strerror(errno);
        break;
      }
      if (n == 0) break;
      value.append(buffer, static_cast<std::size_t>(n));
      if (value.size() > max_credential_file_bytes) {
        problem = "larger than " + std::to_string(max_credential_file_bytes) + " bytes";
        break;
      }
    }
  }
  ::close(fd);
  if (!problem.empty()) fail_with(problem);
  if (!value.empty() && value.back() == '\n') value.pop_back();
  if (value.empty()) fail(path, file + " is empty");
  return value;
}

// A path as written in the config: absolute, or relative to the config file's directory.
std::string resolve_path(const std::string& file, const std::string& base_dir) {
  if (file.empty() || file.front() == '/' || base_dir.empty()) return file;
  return (std::filesystem::path(base_dir) / file).string();
}

struct SourcedCredential {
  std::string value;
  CredentialSource source;
};

// One credential from {"env": VAR} or {"file": PATH} in `o` (at `path`),
// exactly one of them, checked as a header value. Errors name the field,
// never the value.
SourcedCredential credential_from(Object& o, const std::string& path, const std::string& base_dir) {
  std::string env, file;
  o.string("env", env);
  o.string("file", file);
  const bool has_env = o.get("env") != nullptr, has_file = o.get("file") != nullptr;
  if (has_env && has_file) fail(path, "give env or file, not both");
  if (!has_env && !has_file) fail(path, "needs env (an environment variable) or file (a path) holding the credential");
  SourcedCredential c;
  if (has_env) {
    if (env.empty()) fail(o.at("env"), "must name an environment variable");
    c.source = {"env", env};
    c.value = env_value(env, o.at("env"));
  } else {
    if (file.empty()) fail(o.at("file"), "must be a path");
    c.source = {"file", resolve_path(file, base_dir)};
    c.value = file_value(c.source.name, o.at("file"));
  }
  if (!is_header_value(c.value)) fail(o.at(c.source.field), "the credential must be printable ASCII");
  return c;
}

// A credential is recognised in a provider's reply by its letters and digits
// (core/secret_scan.hpp): with too few, ordinary text would match it, and a
// reply echoing it could not be told from one that does not. The message
// names the provider and the tenant, never the value or its length.
void require_scannable(const std::string& credential, const std::string& path, const std::string& provider,
                       const std::string& tenants) {
  if (secret_alphanumerics(credential) >= min_secret_alphanumerics) return;
  fail(path, "the credential of provider " + provider + " for " + tenants + " has fewer than " +
                 std::to_string(min_secret_alphanumerics) +
                 " letters and digits: too short to be recognised in a provider's reply, which the gateway "
                 "withholds from agents when it holds a credential");
}

// credential: {header, prefix} and either tenants: {tenant: {env|file}}
// (each tenant its own account) or env|file with shared_by_tenants: true
// (one account for every tenant, declared as such). One undeclared shared
// account would let any tenant's agent read and change every other tenant's
// data there.
void parse_credential(const json& j, const std::string& path, const std::string& base_dir, ProviderConfig& p) {
  Object co(j, path);
  co.string("header", p.credential_header);
  co.string("prefix", p.credential_prefix);
  if (!is_http_token(p.credential_header)) fail(co.at("header"), "must be a header name");
  if (!is_header_value(p.credential_prefix)) fail(co.at("prefix"), "must be printable ASCII");
  bool shared = false;
  co.boolean("shared_by_tenants", shared);
  const json* tenants = co.get("tenants");
  const bool one = co.get("env") || co.get("file");
  if (one && tenants) fail(path, "give either env or file (one shared account) or tenants, not both");
  if (one) {
    const auto field = co.get("env") ? co.at("env") : co.at("file");
    if (!shared)
      fail(field,
           "one credential for every tenant lets each tenant's agents act on the others' data at this provider: "
           "give credentials per tenant in \"tenants\", or declare \"shared_by_tenants\": true");
    auto c = credential_from(co, path, base_dir);
    require_scannable(c.value, co.at(c.source.field), p.name, "every tenant");
    p.shared_credential = std::move(c.value);
    p.shared_credential_source = std::move(c.source);
    return;
  }
  if (shared) fail(co.at("shared_by_tenants"), "needs env or file: the one credential the tenants share");
  if (!tenants) fail(path, "needs tenants (a credential per tenant) or env or file with shared_by_tenants");
  if (!tenants->is_object() || tenants->empty())
    fail(co.at("tenants"), "must be an object of tenant: {\"env\": ...} or {\"file\": ...}");
  std::map<std::string, std::string> owner_of;  // credential -> tenant, to catch an undeclared shared account
  for (auto it = tenants->begin(); it != tenants->end(); ++it) {
    const auto at = co.at("tenants") + "." + it.key();
    if (!is_label(it.key())) fail(at, "the tenant must be a label");
    Object to(it.value(), at);
    auto c = credential_from(to, at, base_dir);
    require_scannable(c.value, to.at(c.source.field), p.name, "tenant " + it.key());
    if (auto [other, fresh] = owner_of.emplace(c.value, it.key()); !fresh)
      fail(at, "has the same credential as tenant " + other->second +
                   ": a shared account must be declared with env or file and shared_by_tenants");
    p.tenant_credentials.emplace(it.key(), std::move(c.value));
    p.tenant_credential_sources.emplace(it.key(), std::move(c.source));
  }
}

WebhookConfig parse_webhooks(const json& j, const std::string& path) {
  WebhookConfig w;
  Object o(j, path);
  if (!o.get("secret_envs")) fail(o.at("secret_envs"), "is required (one or more environment variables)");
  std::set<std::string> names;
  o.array("secret_envs", [&](const json& v, const std::string& item) {
    auto env = string_item(v, item);
    if (env.empty()) fail(item, "must name an environment variable");
    if (!names.insert(env).second) fail(item, "names " + env + " twice");
    // The value is a secret: the message names the variable, never its content.
    auto key = parse_webhook_secret(env_value(env, item));
    if (!key)
      fail(item, "environment variable " + env + " must hold whsec_ followed by the base64 of at least " +
                     std::to_string(min_webhook_key_bytes) + " bytes");
    w.secret_envs.push_back(env);
    w.keys.push_back(std::move(*key));
  });
  if (w.keys.empty()) fail(o.at("secret_envs"), "must name at least one environment variable");
  o.millis("tolerance_ms", w.tolerance, 1000, 86400000);
  o.string("key_pointer", w.rules.key_pointer, Presence::required);
  if (!is_member_pointer(w.rules.key_pointer))
    fail(o.at("key_pointer"), "must be a JSON pointer to a member, such as \"/idempotency_key\"");
  std::string outcome_pointer;
  o.string("outcome_pointer", outcome_pointer);
  if (o.get("outcome_pointer")) {
    if (!is_member_pointer(outcome_pointer))
      fail(o.at("outcome_pointer"), "must be a JSON pointer to a member, such as \"/status\"");
    w.rules.outcome_pointer = outcome_pointer;
  }
  if (auto m = o.get("outcomes")) {
    if (!m->is_object()) fail(o.at("outcomes"), "must be an object of value: succeeded|rejected|not_executed");
    if (!m->empty() && !w.rules.outcome_pointer) fail(o.at("outcomes"), "needs outcome_pointer");
    for (auto it = m->begin(); it != m->end(); ++it) {
      auto item = o.at("outcomes") + "[" + json(it.key()).dump() + "]";
      auto state = it->is_string() ? parse_webhook_outcome(it->get<std::string>()) : std::nullopt;
      if (!state) fail(item, "must be \"succeeded\", \"rejected\" or \"not_executed\"");
      w.rules.outcomes.emplace(it.key(), *state);
    }
  }
  return w;
}

// listen.tls: the fields first (an unknown one is refused), then the files,
// loaded as the listener will load them, so a bad file stops the start.
tls::TlsFiles parse_listen_tls(const json& j, const std::string& path) {
  tls::TlsFiles t;
  {
    Object o(j, path);
    o.string("cert_file", t.cert_file, Presence::required);
    o.string("key_file", t.key_file, Presence::required);
    std::string ca;
    o.string("client_ca_file", ca);
    if (o.get("client_ca_file")) t.client_ca_file = ca;
    std::string min = "1.2";
    o.string("min_version", min);
    if (min == "1.3")
      t.min_version = tls::TlsVersion::v1_3;
    else if (min != "1.2")
      fail(o.at("min_version"), "must be \"1.2\" or \"1.3\"");
  }
  auto loaded = tls::make_server_tls_context(t);
  if (!loaded.context) fail(path + "." + loaded.field, loaded.error);
  return t;
}

ProviderConfig parse_provider(const json& j, const std::string& path, const std::string& base_dir) {
  ProviderConfig p;
  Object o(j, path);
  o.string("name", p.name, Presence::required);
  if (!is_label(p.name)) fail(o.at("name"), "must be a label (1-80 printable ASCII)");
  std::string url;
  o.string("base_url", url, Presence::required);
  parse_base_url(url, p, o.at("base_url"));
  std::string ca;
  o.string("ca_file", ca);
  if (!ca.empty()) {
    if (!p.tls) fail(o.at("ca_file"), "only applies to https providers");
    if (!std::ifstream(ca)) fail(o.at("ca_file"), "cannot read " + ca);
    p.ca_file = ca;
  }
  if (auto c = o.get("credential")) {
    parse_credential(*c, o.at("credential"), base_dir, p);
    p.index_credentials();
  } else {
    fail(o.at("credential"), "is required (the provider credential, from an environment variable or a file)");
  }
  if (o.get("allowed_path_forms")) {
    o.array("allowed_path_forms", [&](const json& v, const std::string& item) {
      auto form = string_item(v, item);
      if (!allow_path_form(p.allowed_path_forms, form))
        fail(item, "must be one of dot_segments, encoded_slash, backslash, leading_double_slash");
    });
  }
  if (o.get("protected_methods"))
    fail(o.at("protected_methods"),
         "was replaced by unfenced_methods: every method not listed there is protected (docs/configuration.md)");
  if (o.get("unfenced_methods")) {
    p.unfenced_methods.clear();
    o.array("unfenced_methods", [&](const json& v, const std::string& item) {
      auto m = string_item(v, item);
      if (!is_http_token(m)) fail(item, "must be an HTTP method");
      if (never_forwarded(m)) fail(item, m + " is never forwarded");
      p.unfenced_methods.insert(m);
    });
  }
  o.millis("connect_timeout_ms", p.connect_timeout, 1, 600000);
  o.millis("request_timeout_ms", p.request_timeout, 1, 3600000);
  o.millis("queue_timeout_ms", p.queue_timeout, 1, 600000);
  o.millis("idle_retire_ms", p.idle_retire, 1, 3600000);
  o.integer("max_connections", p.max_connections, 1, 10000);
  o.integer("max_queued", p.max_queued, 0, 1000000);
  o.integer("max_request_body_bytes", p.max_request_body_bytes, 0, 1 << 30);
  o.integer("max_response_body_bytes", p.max_response_body_bytes, 0, 64 << 20);
  for (auto [key, out] : {std::pair{"idempotency_header", &p.idempotency_header},
                          {"fence_realm_header", &p.fence_realm_header},
                          {"fence_epoch_header", &p.fence_epoch_header},
                          {"fence_owner_header", &p.fence_owner_header}}) {
    o.string(key, *out);
    if (!is_http_token(*out)) fail(o.at(key), "must be a header name");
  }
  if (auto c = o.get("outcomes")) {
    Object co(*c, o.at("outcomes"));
    if (auto r = co.get("rejected")) p.outcomes.rejected = status_ranges(*r, co.at("rejected"));
    if (auto n = co.get("not_executed")) p.outcomes.not_executed = status_ranges(*n, co.at("not_executed"));
    if (overlap(p.outcomes.rejected, p.outcomes.not_executed))
      fail(co.at("not_executed"), "overlaps the rejected statuses: a status has one meaning");
  }
  if (auto l = o.get("lookup")) p.lookup = parse_lookup(*l, o.at("lookup"));
  if (auto w = o.get("webhooks")) p.webhooks = parse_webhooks(*w, o.at("webhooks"));
  return p;
}

}  // namespace

Config parse_config(const std::string& text, const std::string& base_dir) {
  auto j = parse_strict_json(text);
  if (j.is_discarded()) throw ConfigError("$: not valid JSON, or an object has a member twice");
  Config c;
  Object root(j, "$");
  if (auto l = root.get("listen")) {
    Object o(*l, "$.listen");
    o.string("address", c.listen.address);
    o.integer("port", c.listen.port, 0, 65535);
    unsigned char ip[16];
    if (inet_pton(AF_INET, c.listen.address.c_str(), ip) != 1 &&
        inet_pton(AF_INET6, c.listen.address.c_str(), ip) != 1)
      fail("$.listen.address", "must be an IPv4 or IPv6 address");
    if (auto t = o.get("tls")) c.listen.tls = parse_listen_tls(*t, o.at("tls"));
  }
  if (auto d = root.get("database")) {
    Object o(*d, "$.database");
    std::string env;
    o.string("url", c.database.url);
    o.string("url_env", env);
    if (!env.empty()) {
      if (!c.database.url.empty()) fail("$.database", "give url or url_env, not both");
      c.database.url = env_value(env, "$.database.url_env");
    }
    o.integer("pool_size", c.database.pool_size, 1, 256);
    o.integer("connect_timeout_s", c.database.connect_timeout_s, 1, 60);
    o.millis("statement_timeout_ms", c.database.statement_timeout, 1, 600000);
    o.millis("lock_timeout_ms", c.database.lock_timeout, 1, 600000);
    o.integer("queue_limit", c.database.queue_limit, 1, 1000000);
    o.integer("group_max", c.database.group_max, 1, 1024);
    o.integer("direct_connections", c.database.direct_connections, 0, 64);
    o.integer("direct_pipeline", c.database.direct_pipeline, 1, 64);
    o.millis("queue_timeout_ms", c.database.queue_timeout, 1, 600000);
    o.integer("max_attempts", c.database.max_attempts, 1, 100);
    o.millis("clock_tick_ms", c.database.clock_tick, 10, 60000);
    o.string("guard_state_file", c.database.guard_state_file);
    o.millis("guard_interval_ms", c.database.guard_interval, 10, 60000);
    o.integer("keepalives_idle_s", c.database.keepalives_idle_s, 1, 7200);
    o.integer("keepalives_interval_s", c.database.keepalives_interval_s, 1, 600);
    o.integer("keepalives_count", c.database.keepalives_count, 1, 100);
    o.millis("tcp_user_timeout_ms", c.database.tcp_user_timeout, 0, 3600000);
    if (!o.get("call_timeout_ms")) c.database.call_timeout = std::max(c.database.call_timeout, 2 * c.database.statement_timeout);
    o.millis("call_timeout_ms", c.database.call_timeout, 100, 7200000);
    if (c.database.call_timeout < c.database.statement_timeout)
      fail(o.at("call_timeout_ms"), "must not be below statement_timeout_ms: a slow statement is the server's to end");
  }
  if (c.database.url.empty()) fail("$.database.url", "is required (or url_env)");
  if (auto h = root.get("http")) {
    Object o(*h, "$.http");
    o.integer("max_body_bytes", c.http.max_body_bytes, 1, 1 << 30);
    o.integer("max_header_bytes", c.http.max_header_bytes, 1024, 1 << 20);
    o.millis("read_timeout_ms", c.http.read_timeout, 1, 3600000);
    o.millis("idle_timeout_ms", c.http.idle_timeout, 1, 3600000);
    o.millis("header_timeout_ms", c.http.header_timeout, 1, 3600000);
    o.integer("max_connections", c.http.max_connections, 1, 1000000);
    o.integer("io_threads", c.http.io_threads, 1, 64);
  }
  if (auto r = root.get("recovery")) {
    Object o(*r, "$.recovery");
    o.millis("forward_margin_ms", c.recovery.forward_margin, 0, 3600000);
    o.millis("sweep_interval_ms", c.recovery.sweep_interval, 10, 3600000);
    o.integer("sweep_batch", c.recovery.sweep_batch, 1, 10000);
    o.millis("outcome_wait_ms", c.recovery.outcome_wait, 0, 600000);
    o.millis("outcome_retry_cap_ms", c.recovery.outcome_retry_cap, 10, 600000);
    if (auto rc = o.get("reconcile")) {
      Object ro(*rc, "$.recovery.reconcile");
      auto& r = c.recovery.reconcile;
      ro.millis("interval_ms", r.interval, 10, 3600000);
      ro.integer("max_concurrent", r.max_concurrent, 1, 1000);
      ro.millis("backoff_base_ms", r.backoff.base, 1, 86400000);
      ro.millis("backoff_cap_ms", r.backoff.cap, 1, 86400000);
      ro.integer("jitter_percent", r.backoff.jitter_percent, 0, 100);
      if (r.backoff.cap < r.backoff.base) fail(ro.at("backoff_cap_ms"), "must not be below backoff_base_ms");
    }
  }
  if (auto l = root.get("leases")) {
    Object o(*l, "$.leases");
    o.millis("max_lease_ms", c.leases.max_lease, 1000, 315360000000);  // 1 s to 10 years
  }
  if (auto l = root.get("log")) {
    Object o(*l, "$.log");
    if (auto v = o.get("level")) {
      auto parsed = v->is_string() ? parse_log_level(v->get<std::string>()) : std::nullopt;
      if (!parsed) fail(o.at("level"), "must be one of \"debug\", \"info\", \"warn\", \"error\"");
      c.log.level = *parsed;
    }
    o.boolean("access", c.log.access);
  }
  if (auto r = root.get("retention")) {
    Object o(*r, "$.retention");
    auto& p = c.retention;
    o.boolean("enabled", p.enabled);
    o.days("operations_days", p.operations, 1, 36500);
    o.days("rejections_days", p.rejections, 1, 36500);
    o.days("webhooks_days", p.webhooks, 1, 36500);
    o.millis("interval_ms", p.interval, 10, 86400000);
    o.integer("batch", p.batch, 1, 10000);
  }
  std::set<std::string> hashes;
  auto token_hash = [&](Object& o, std::string& out) {
    o.string("token_sha256", out, Presence::required);
    if (!is_hex_sha256(out)) fail(o.at("token_sha256"), "must be 64 lower-case hex digits");
    if (!hashes.insert(out).second) fail(o.at("token_sha256"), "is used twice");
  };
  root.array("agents", [&](const json& v, const std::string& path) {
    AgentToken a;
    Object o(v, path);
    o.string("name", a.name, Presence::required);
    token_hash(o, a.token_sha256);
    o.array("tenants", [&](const json& t, const std::string& item) {
      auto tenant = string_item(t, item);
      if (!is_label(tenant)) fail(item, "must be a label (1-80 printable ASCII)");
      a.tenants.insert(tenant);
    });
    if (a.tenants.empty()) fail(o.at("tenants"), "must name at least one tenant");
    c.agents.push_back(std::move(a));
  });
  root.array("operators", [&](const json& v, const std::string& path) {
    OperatorToken t;
    Object o(v, path);
    o.string("name", t.name, Presence::required);
    token_hash(o, t.token_sha256);
    c.operators.push_back(std::move(t));
  });
  std::set<std::string> names;
  root.array("providers", [&](const json& v, const std::string& path) {
    auto p = parse_provider(v, path, base_dir);
    if (!names.insert(p.name).second) fail(path + ".name", "is used twice");
    c.providers.push_back(std::move(p));
  });
  return c;
}

std::optional<LogLevel> parse_log_level(std::string_view name) {
  if (name == "debug") return LogLevel::debug;
  if (name == "info") return LogLevel::info;
  if (name == "warn") return LogLevel::warn;
  if (name == "error") return LogLevel::error;
  return std::nullopt;
}

std::string_view name(LogLevel level) {
  switch (level) {
    case LogLevel::debug: return "debug";
    case LogLevel::info: return "info";
    case LogLevel::warn: return "warn";
    case LogLevel::error: return "error";
  }
  return "info";
}

const std::string* ProviderConfig::credential_for(const std::string& tenant) const {
  if (shared_credential) return &*shared_credential;
  auto it = tenant_credentials.find(tenant);
  return it == tenant_credentials.end() ? nullptr : &it->second;
}

void ProviderConfig::index_credentials() {
  std::vector<std::string_view> secrets;
  if (shared_credential) secrets.emplace_back(*shared_credential);
  for (const auto& [tenant, credential] : tenant_credentials) secrets.emplace_back(credential);
  credential_scan = std::make_shared<const SecretScan>(secrets);
}

bool ProviderConfig::reveals_credential(std::string_view text) const {
  return !credential_scan || credential_scan->reveals(text);
}

std::vector<std::string> lookup_providers(const Config& config) {
  std::vector<std::string> names;
  for (const auto& p : config.providers)
    if (p.lookup) names.push_back(p.name);
  return names;
}

ms lookup_lease(const Config& config) { return lookup_lease(config.providers, config.recovery.forward_margin); }

ms lookup_lease(const std::vector<ProviderConfig>& providers, ms forward_margin) {
  ms slowest{0};
  for (const auto& p : providers)
    if (p.lookup) slowest = std::max(slowest, p.forward_budget());
  return slowest + forward_margin;
}

Config load_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path + ": cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    return parse_config(ss.str(), std::filesystem::path(path).parent_path().string());
  } catch (const ConfigError& e) {
    throw ConfigError(path + ": " + e.what());
  }
}

}  // namespace gw
