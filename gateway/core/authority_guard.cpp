#include "core/authority_guard.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <utility>

namespace gw {
namespace {

template <class T>
std::optional<T> number(std::string_view s, int base = 10) {
  T v{};
  if (s.empty()) return std::nullopt;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

constexpr std::array<std::pair<GuardVerdict, std::string_view>, 10> verdict_names{{
    {GuardVerdict::accept, "accept"},
    {GuardVerdict::accept_rotated, "accept_rotated"},
    {GuardVerdict::standby, "standby"},
    {GuardVerdict::realm_behind, "realm_behind"},
    {GuardVerdict::foreign_cluster, "foreign_cluster"},
    {GuardVerdict::epoch_behind, "epoch_behind"},
    {GuardVerdict::timeline_behind, "timeline_behind"},
    {GuardVerdict::other_branch, "other_branch"},
    {GuardVerdict::history_unknown, "history_unknown"},
    {GuardVerdict::position_behind, "position_behind"},
}};

std::optional<GuardVerdict> verdict_named(std::string_view s) {
  for (const auto& [v, n] : verdict_names)
    if (n == s) return v;
  return std::nullopt;
}

constexpr std::string_view header = "write-gateway authority guard v1";

}  // namespace

std::optional<std::uint64_t> parse_lsn(std::string_view text) {
  const auto slash = text.find('/');
  if (slash == std::string_view::npos || slash > 8 || text.size() - slash - 1 > 8) return std::nullopt;
  auto hi = number<std::uint64_t>(text.substr(0, slash), 16);
  auto lo = number<std::uint64_t>(text.substr(slash + 1), 16);
  if (!hi || !lo) return std::nullopt;
  return (*hi << 32) | *lo;
}

std::string format_lsn(std::uint64_t lsn) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%X/%X", static_cast<unsigned>(lsn >> 32), static_cast<unsigned>(lsn & 0xffffffffu));
  return buf;
}

std::optional<std::uint64_t> history_switch_point(std::string_view history, std::uint32_t timeline) {
  while (!history.empty()) {
    const auto nl = history.find('\n');
    auto line = history.substr(0, nl);
    history = nl == std::string_view::npos ? std::string_view{} : history.substr(nl + 1);
    // Blank lines and comments are allowed in history files (PostgreSQL's own reader skips them).
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos || line[first] == '#') continue;
    line = line.substr(first);
    const auto tab = line.find_first_of(" \t");
    if (tab == std::string_view::npos) return std::nullopt;
    auto parent = number<std::uint32_t>(line.substr(0, tab));
    auto rest = line.substr(tab);
    rest = rest.substr(std::min(rest.size(), rest.find_first_not_of(" \t")));
    auto point = parse_lsn(rest.substr(0, rest.find_first_of(" \t")));
    if (!parent || !point) return std::nullopt;
    if (*parent == timeline) return point;
  }
  return std::nullopt;
}

ServerIdentity identity_of(const ServerState& s) { return {s.system_identifier, s.timeline, s.started}; }

std::string describe(const ServerIdentity& id) {
  return "system " + id.system_identifier + " timeline " + std::to_string(id.timeline) + " started " + id.started;
}

std::string server_address(const char* host, const char* port) {
  // Built by appending only: GCC 12 at -O3 sees a false overlap in assigning a literal.
  std::string out;
  if (host && *host)
    out.append(host);
  else
    out.push_back('?');
  if (port && *port) out.append(":").append(port);
  return out;
}

std::optional<std::int64_t> AuthorityOutage::regained(Clock::time_point now) {
  if (!since_) return std::nullopt;
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - *since_).count();
  since_.reset();
  return ms < 0 ? 0 : ms;
}

double AuthorityOutage::seconds(Clock::time_point now) const {
  if (!since_ || now < *since_) return 0;
  return std::chrono::duration<double>(now - *since_).count();
}

std::string_view name(GuardVerdict v) {
  for (const auto& [verdict, n] : verdict_names)
    if (verdict == v) return n;
  return "unknown";
}

GuardDecision judge(const Watermark& w, const ServerState& s) {
  using V = GuardVerdict;
  if (s.in_recovery) return {V::standby, std::nullopt};
  if (w.empty()) return {V::accept, std::nullopt};
  // A realm is replaced only by rotate-realm, which moves epoch_seq above
  // every epoch issued before; a restored older realm is below them.
  if (s.realm != w.realm) return {s.epoch_last > w.max_epoch ? V::accept_rotated : V::realm_behind, std::nullopt};
  if (s.system_identifier != w.system_identifier) return {V::foreign_cluster, std::nullopt};
  if (s.epoch_last < w.max_epoch) return {V::epoch_behind, std::nullopt};
  if (s.timeline < w.timeline) return {V::timeline_behind, std::nullopt};
  std::optional<std::uint64_t> held;
  if (s.timeline == w.timeline) {
    // What it held before it took any write since it started: a restored
    // backup replays less than was acknowledged, then may write past it.
    held = s.replay_lsn ? s.replay_lsn : s.flush_lsn;
  } else if (s.history) {
    held = history_switch_point(*s.history, w.timeline);
    if (!held) return {V::other_branch, std::nullopt};
  } else if (s.timeline == w.timeline + 1 && s.replay_lsn) {
    // Promoted once and not restarted since: recovery ended where the
    // remembered timeline ends on this server.
    held = s.replay_lsn;
  } else {
    return {V::history_unknown, std::nullopt};
  }
  if (!held) return {V::history_unknown, std::nullopt};
  return {*held >= w.lsn ? V::accept : V::position_behind, held};
}

Watermark advance(const Watermark& w, const ServerState& s) {
  const auto position = s.covered_lsn.value_or(s.flush_lsn.value_or(0));
  Watermark next = w;
  next.max_epoch = std::max(w.max_epoch, s.epoch_last);
  if (w.empty() || s.realm != w.realm || s.system_identifier != w.system_identifier || s.timeline != w.timeline) {
    next.realm = s.realm;
    next.system_identifier = s.system_identifier;
    next.timeline = s.timeline;
    next.lsn = position;
  } else {
    next.lsn = std::max(w.lsn, position);
  }
  return next;
}

std::string encode(const GuardMemory& m) {
  const auto& w = m.watermark;
  std::string out(header);
  out += "\nrealm=" + w.realm;
  out += "\nmax_epoch=" + std::to_string(w.max_epoch);
  out += "\nsystem_identifier=" + w.system_identifier;
  out += "\ntimeline=" + std::to_string(w.timeline);
  out += "\nlsn=" + format_lsn(w.lsn);
  for (const auto& r : m.refused)
    out += "\nrefused=" + std::string(name(r.verdict)) + " " + std::to_string(r.server.timeline) + " " +
           r.server.system_identifier + " " + r.realm + " " + r.server.started;
  out += "\n";
  return out;
}

DecodedMemory decode_memory(std::string_view text) {
  GuardMemory m;
  int line_no = 0;
  auto fail = [&](const std::string& why) { return DecodedMemory{std::nullopt, "line " + std::to_string(line_no) + ": " + why}; };
  bool seen_header = false;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const auto line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++line_no;
    if (!seen_header) {
      if (line != header) return fail("not a guard state file (expected \"" + std::string(header) + "\")");
      seen_header = true;
      continue;
    }
    if (line.empty()) continue;
    const auto eq = line.find('=');
    if (eq == std::string_view::npos) return fail("expected key=value");
    const auto key = line.substr(0, eq);
    const auto value = line.substr(eq + 1);
    auto& w = m.watermark;
    if (key == "realm") {
      w.realm = value;
    } else if (key == "max_epoch") {
      auto v = number<std::int64_t>(value);
      if (!v || *v < 0) return fail("max_epoch is not an integer");
      w.max_epoch = *v;
    } else if (key == "system_identifier") {
      w.system_identifier = value;
    } else if (key == "timeline") {
      auto v = number<std::uint32_t>(value);
      if (!v) return fail("timeline is not an integer");
      w.timeline = *v;
    } else if (key == "lsn") {
      auto v = parse_lsn(value);
      if (!v) return fail("lsn is not a WAL position");
      w.lsn = *v;
    } else if (key == "refused") {
      // verdict timeline system realm started (the start time holds spaces: last)
      std::array<std::string_view, 4> f;
      auto rest = value;
      for (auto& part : f) {
        const auto sp = rest.find(' ');
        if (sp == std::string_view::npos) return fail("refused needs: verdict timeline system realm started");
        part = rest.substr(0, sp);
        rest = rest.substr(sp + 1);
      }
      auto verdict = verdict_named(f[0]);
      auto timeline = number<std::uint32_t>(f[1]);
      if (!verdict || accepted(*verdict) || !timeline || rest.empty()) return fail("refused entry does not parse");
      m.refused.push_back({{std::string(f[2]), *timeline, std::string(rest)}, std::string(f[3]), *verdict});
    } else {
      return fail("unknown key " + std::string(key));
    }
  }
  if (!seen_header) return fail("empty");
  if (m.watermark.realm.empty() != m.watermark.system_identifier.empty())
    return fail("realm and system_identifier go together");
  return {std::move(m), {}};
}

}  // namespace gw
