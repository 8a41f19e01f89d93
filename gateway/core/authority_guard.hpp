// The authority regression guard's rule (spec section 8): whether a primary
// the gateway's connection has landed on holds the newest authority state
// this gateway acted on. Pure: the store reads the server's state and the
// watermark (store/authority_guard.hpp); this decides. docs/deployment.md,
// "The authority regression guard", explains what is remembered and why.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gw {

// A WAL position (pg_lsn) as a number; "X/Y" in PostgreSQL's text form.
std::optional<std::uint64_t> parse_lsn(std::string_view text);
std::string format_lsn(std::uint64_t lsn);

// Where `timeline` ended in a timeline history file's text (the
// "<parent tli>\t<switch point>\t<reason>" lines of pg_wal/NNNNNNNN.history):
// the newest WAL of `timeline` the server holds. Empty when `timeline` is
// not an ancestor in that history, or a line does not parse.
std::optional<std::uint64_t> history_switch_point(std::string_view history, std::uint32_t timeline);

// One server as one connection saw it at its start (or on the guard's
// timer). `started` (the postmaster's start time) makes a restarted server,
// a restored backup among them, a server the gateway has not used yet.
struct ServerState {
  std::string system_identifier;
  std::uint32_t timeline = 0;
  std::string started;
  bool in_recovery = false;
  // The server's flushed WAL position (a primary's), and the end of what
  // it replayed since it started, if it went through recovery (crash
  // recovery, a restored backup, a standby's promotion).
  std::optional<std::uint64_t> flush_lsn, replay_lsn;
  // Its current timeline's history file, when the gateway may read it.
  std::optional<std::string> history;
  // The position every commit acknowledged so far is at or below, and that
  // a promotion must keep: the synchronous standby's confirmed flush when
  // commits wait for one, else flush_lsn. Read on the guard's timer.
  std::optional<std::uint64_t> covered_lsn;
  std::string realm;
  std::int64_t epoch_last = 0;  // epoch_seq's last value
  // Where the connection reached it ("host:port", the host a Unix socket's
  // directory), for logs: not part of its identity (one server may be
  // reached by more than one address).
  std::string address;
};

struct ServerIdentity {
  std::string system_identifier;
  std::uint32_t timeline = 0;
  std::string started;
  bool operator==(const ServerIdentity&) const = default;
};
ServerIdentity identity_of(const ServerState& s);
std::string describe(const ServerIdentity& id);
// "host:port" from libpq's PQhost/PQport (either may be null or empty).
std::string server_address(const char* host, const char* port);

// Time without authority: from the first moment the gateway has no primary
// it may use (the database lost, or every server refused) until one is
// accepted again. Pure: the caller passes the time.
class AuthorityOutage {
 public:
  using Clock = std::chrono::steady_clock;
  // Starts a stretch unless one is running.
  void lost(Clock::time_point now) {
    if (!since_) since_ = now;
  }
  // Ends the stretch running, if any, and returns its length in milliseconds.
  std::optional<std::int64_t> regained(Clock::time_point now);
  // The running stretch's length at `now` in seconds; 0 while there is authority.
  double seconds(Clock::time_point now) const;
  bool running() const { return since_.has_value(); }

 private:
  std::optional<Clock::time_point> since_;
};

// What a gateway remembers of the newest authority state it acted on. Empty
// (`realm` empty) on a gateway's first start: it trusts the first primary.
struct Watermark {
  std::string realm;
  std::int64_t max_epoch = 0;
  std::string system_identifier;
  std::uint32_t timeline = 0;
  std::uint64_t lsn = 0;  // every decision acknowledged before it was read is at or below
  bool empty() const { return realm.empty(); }
  bool operator==(const Watermark&) const = default;
};

enum class GuardVerdict {
  accept,            // holds the watermark
  accept_rotated,    // a new realm whose epochs are above every one seen: an operator rotated it
  standby,           // not a primary (in recovery): not for writes, nothing remembered
  realm_behind,      // another realm, but epochs at or below ones already issued
  foreign_cluster,   // the same realm in another cluster (a logical copy): positions cannot be compared
  epoch_behind,      // epoch_seq below an epoch already issued or seen
  timeline_behind,   // on a timeline older than the remembered one (an old primary)
  other_branch,      // on a newer timeline that does not descend from the remembered one
  history_unknown,   // on a newer timeline whose fork from the remembered one cannot be read
  position_behind,   // holds less WAL of the remembered timeline than was acknowledged
};
std::string_view name(GuardVerdict v);
inline bool accepted(GuardVerdict v) { return v == GuardVerdict::accept || v == GuardVerdict::accept_rotated; }

struct GuardDecision {
  GuardVerdict verdict = GuardVerdict::accept;
  // What the server holds of the remembered timeline, when it was worked out.
  std::optional<std::uint64_t> held_lsn;
};

// The rule, in order: a standby is never written to; an empty watermark
// trusts the server; another realm is accepted only above every epoch
// (rotate-realm floors them there); then the cluster, the epoch, the
// timeline and the position must hold what was remembered.
GuardDecision judge(const Watermark& w, const ServerState& s);

// The watermark after acting on `s` (accepted, or read again on the timer):
// never lower on the same realm and timeline; a new realm or timeline
// starts from the server's own position.
Watermark advance(const Watermark& w, const ServerState& s);

// A server refused once stays refused for as long as it keeps that realm
// (its position could later grow past the watermark without holding what
// was lost); a rotation lifts it.
struct RefusedServer {
  ServerIdentity server;
  std::string realm;
  GuardVerdict verdict = GuardVerdict::position_behind;
  bool operator==(const RefusedServer&) const = default;
};

// The state file's text (one `key=value` a line, after a header line), and
// back. A file that does not parse is an error with its line, never an
// empty state: a gateway that lost its memory must not trust a primary.
struct GuardMemory {
  Watermark watermark;
  std::vector<RefusedServer> refused;
  bool operator==(const GuardMemory&) const = default;
};
std::string encode(const GuardMemory& m);
struct DecodedMemory {
  std::optional<GuardMemory> memory;
  std::string error;  // set when memory is empty
};
DecodedMemory decode_memory(std::string_view text);

}  // namespace gw
