// The authority regression guard's rule (core/authority_guard.hpp) as tables:
// which primaries hold what a gateway acted on, how the watermark moves, and
// the state file's text.
#include "core/authority_guard.hpp"

#include <doctest/doctest.h>

using namespace gw;

namespace {

constexpr std::uint64_t lsn(std::uint32_t hi, std::uint32_t lo) { return (std::uint64_t{hi} << 32) | lo; }

const Watermark remembered{"realm-1", 40, "7300000000000000001", 2, lsn(0, 0x5000000)};

// The primary the watermark was taken on, still running.
ServerState same_server() {
  ServerState s;
  s.system_identifier = "7300000000000000001";
  s.timeline = 2;
  s.started = "2026-12-03 10:00:00+00";
  s.flush_lsn = lsn(0, 0x5000100);
  s.covered_lsn = lsn(0, 0x5000100);
  s.realm = "realm-1";
  s.epoch_last = 40;
  return s;
}

// Timeline 3 forked from timeline 2 at `fork`, as a promotion writes it.
std::string history_forking_at(std::uint64_t fork) {
  return "1\t0/3000000\tno recovery target specified\n\n2\t" + format_lsn(fork) + "\tno recovery target specified\n";
}

}  // namespace

TEST_CASE("parse_lsn and format_lsn: PostgreSQL's X/Y text") {
  CHECK(parse_lsn("0/0") == 0u);
  CHECK(parse_lsn("0/16B3748") == 0x16B3748u);
  CHECK(parse_lsn("1A/FF") == lsn(0x1A, 0xFF));
  CHECK(parse_lsn("FFFFFFFF/FFFFFFFF") == ~std::uint64_t{0});
  CHECK_FALSE(parse_lsn(""));
  CHECK_FALSE(parse_lsn("16B3748"));
  CHECK_FALSE(parse_lsn("0/"));
  CHECK_FALSE(parse_lsn("/1"));
  CHECK_FALSE(parse_lsn("0/1x"));
  CHECK_FALSE(parse_lsn("100000000/0"));
  CHECK(format_lsn(lsn(0x1A, 0xFF)) == "1A/FF");
  CHECK(format_lsn(0) == "0/0");
  CHECK(parse_lsn(format_lsn(lsn(3, 0xDEADBEEF))) == lsn(3, 0xDEADBEEF));
}

TEST_CASE("history_switch_point: where a timeline ended in a history file") {
  const auto h = history_forking_at(lsn(0, 0x5000000));
  CHECK(history_switch_point(h, 1) == lsn(0, 0x3000000));
  CHECK(history_switch_point(h, 2) == lsn(0, 0x5000000));
  CHECK_FALSE(history_switch_point(h, 3));  // the server's own timeline has not ended
  CHECK_FALSE(history_switch_point("", 1));
  CHECK(history_switch_point("# comment\n  1 0/10 reason with spaces\n", 1) == 0x10u);
  CHECK_FALSE(history_switch_point("1\tnot-an-lsn\treason\n", 1));
  CHECK_FALSE(history_switch_point("x\t0/10\treason\n", 1));
}

TEST_CASE("judge: which primaries hold the watermark") {
  struct Case {
    const char* name;
    Watermark w;
    ServerState s;
    GuardVerdict expected;
    std::optional<std::uint64_t> held;
  };
  auto with = [](auto change) {
    auto s = same_server();
    change(s);
    return s;
  };
  const std::uint64_t at = remembered.lsn;
  const Case cases[] = {
      {"the same primary, further on", remembered, same_server(), GuardVerdict::accept, lsn(0, 0x5000100)},
      {"a first start trusts the first primary", Watermark{}, same_server(), GuardVerdict::accept, std::nullopt},
      {"a standby is never written to, even on a first start", Watermark{},
       with([](ServerState& s) { s.in_recovery = true; }), GuardVerdict::standby, std::nullopt},
      {"the same primary restarted after a crash: recovery replayed past the watermark", remembered,
       with([&](ServerState& s) { s.replay_lsn = at + 8; s.started = "later"; }), GuardVerdict::accept, at + 8},
      {"a restored backup on the same timeline replayed less, then wrote past the watermark", remembered,
       with([&](ServerState& s) { s.replay_lsn = at - 0x100000; s.flush_lsn = at + 0x100000; }),
       GuardVerdict::position_behind, at - 0x100000},
      {"a primary on the same timeline that never recovered and is behind", remembered,
       with([&](ServerState& s) { s.flush_lsn = at - 1; }), GuardVerdict::position_behind, at - 1},
      {"exactly at the watermark holds it", remembered, with([&](ServerState& s) { s.flush_lsn = at; }),
       GuardVerdict::accept, at},
      {"a standby promoted after catching up (history readable)", remembered,
       with([&](ServerState& s) { s.timeline = 3; s.history = history_forking_at(at + 0x28); s.flush_lsn = at + 0x900; }),
       GuardVerdict::accept, at + 0x28},
      {"a lagging standby promoted while behind (history readable)", remembered,
       with([&](ServerState& s) { s.timeline = 3; s.history = history_forking_at(at - 0x2000); s.flush_lsn = at + 0x900000; }),
       GuardVerdict::position_behind, at - 0x2000},
      {"promoted once, history unreadable: the replay end", remembered,
       with([&](ServerState& s) { s.timeline = 3; s.replay_lsn = at + 1; }), GuardVerdict::accept, at + 1},
      {"promoted once while behind, history unreadable", remembered,
       with([&](ServerState& s) { s.timeline = 3; s.replay_lsn = at - 1; }), GuardVerdict::position_behind, at - 1},
      {"promoted twice, history unreadable: cannot tell", remembered,
       with([&](ServerState& s) { s.timeline = 4; s.replay_lsn = at + 1; }), GuardVerdict::history_unknown, std::nullopt},
      {"a newer timeline with no replay end and no history", remembered,
       with([](ServerState& s) { s.timeline = 3; }), GuardVerdict::history_unknown, std::nullopt},
      {"a newer timeline that does not descend from the remembered one", remembered,
       with([&](ServerState& s) { s.timeline = 3; s.history = "1\t0/3000000\treason\n"; }), GuardVerdict::other_branch,
       std::nullopt},
      {"an old primary on an older timeline", remembered, with([](ServerState& s) { s.timeline = 1; }),
       GuardVerdict::timeline_behind, std::nullopt},
      {"epochs below one already issued (lost grants)", remembered, with([](ServerState& s) { s.epoch_last = 39; }),
       GuardVerdict::epoch_behind, std::nullopt},
      {"the same realm in another cluster (pg_dump and restore)", remembered,
       with([](ServerState& s) { s.system_identifier = "7300000000000000002"; }), GuardVerdict::foreign_cluster,
       std::nullopt},
      {"a rotated realm above every epoch seen: the operator's way out", remembered,
       with([&](ServerState& s) { s.realm = "realm-2"; s.epoch_last = 1'800'000'000'000'000; s.replay_lsn = at - 9; }),
       GuardVerdict::accept_rotated, std::nullopt},
      {"a rotated realm in another cluster is accepted too", remembered,
       with([](ServerState& s) { s.realm = "realm-2"; s.epoch_last = 41; s.system_identifier = "other"; }),
       GuardVerdict::accept_rotated, std::nullopt},
      {"another realm whose epochs are not above (a backup from before a rotation)", remembered,
       with([](ServerState& s) { s.realm = "realm-0"; s.epoch_last = 40; }), GuardVerdict::realm_behind, std::nullopt},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const auto d = judge(c.w, c.s);
    CHECK(name(d.verdict) == name(c.expected));
    CHECK(d.held_lsn == c.held);
  }
}

TEST_CASE("advance: the watermark never goes back on one timeline and restarts on a new one") {
  auto s = same_server();
  const auto first = advance(Watermark{}, s);
  CHECK(first == Watermark{"realm-1", 40, "7300000000000000001", 2, lsn(0, 0x5000100)});

  // The covered position (a synchronous standby's flush) is what counts, when read.
  s.covered_lsn = lsn(0, 0x5000080);
  s.flush_lsn = lsn(0, 0x5000200);
  CHECK(advance(first, s).lsn == lsn(0, 0x5000100));  // lower than before: kept
  s.covered_lsn = lsn(0, 0x6000000);
  s.epoch_last = 90;
  const auto later = advance(first, s);
  CHECK(later.lsn == lsn(0, 0x6000000));
  CHECK(later.max_epoch == 90);
  s.covered_lsn.reset();
  CHECK(advance(first, s).lsn == lsn(0, 0x5000200));  // none read: the flush

  // A promoted primary: its own position on its own timeline.
  auto promoted = same_server();
  promoted.timeline = 3;
  promoted.covered_lsn = lsn(0, 0x100);
  promoted.epoch_last = 10;
  const auto moved = advance(later, promoted);
  CHECK(moved.timeline == 3);
  CHECK(moved.lsn == 0x100u);
  CHECK(moved.max_epoch == 90);  // epochs only go up, whatever the server says

  // A rotation: the new realm is remembered.
  auto rotated = same_server();
  rotated.realm = "realm-2";
  CHECK(advance(later, rotated).realm == "realm-2");
}

TEST_CASE("the state file: round trip, and every malformed file refused with its line") {
  GuardMemory m;
  m.watermark = remembered;
  m.refused.push_back({{"7300000000000000001", 3, "2026-12-03 10:00:01.5+00"}, "realm-1", GuardVerdict::position_behind});
  m.refused.push_back({{"7300000000000000001", 1, "2026-12-03 09:00:00+00"}, "realm-1", GuardVerdict::timeline_behind});
  const auto text = encode(m);
  const auto back = decode_memory(text);
  REQUIRE(back.memory);
  CHECK(*back.memory == m);
  CHECK(encode(*back.memory) == text);

  const auto empty = decode_memory(encode(GuardMemory{}));
  REQUIRE(empty.memory);
  CHECK(empty.memory->watermark.empty());

  struct Bad {
    const char* text;
    const char* error;
  };
  const Bad bad[] = {
      {"", "line 0: empty"},
      {"something else\n", "line 1: not a guard state file"},
      {"write-gateway authority guard v1\nrealm\n", "line 2: expected key=value"},
      {"write-gateway authority guard v1\ncolour=blue\n", "line 2: unknown key colour"},
      {"write-gateway authority guard v1\nmax_epoch=-1\n", "line 2: max_epoch is not an integer"},
      {"write-gateway authority guard v1\ntimeline=two\n", "line 2: timeline is not an integer"},
      {"write-gateway authority guard v1\nlsn=12\n", "line 2: lsn is not a WAL position"},
      {"write-gateway authority guard v1\nrefused=position_behind 3 sys\n", "line 2: refused needs"},
      {"write-gateway authority guard v1\nrefused=accept 3 sys realm started\n", "line 2: refused entry does not parse"},
      {"write-gateway authority guard v1\nrealm=r\n", "realm and system_identifier go together"},
  };
  for (const auto& b : bad) {
    CAPTURE(b.text);
    const auto d = decode_memory(b.text);
    CHECK_FALSE(d.memory);
    CHECK(d.error.find(b.error) != std::string::npos);
  }
}

TEST_CASE("authority outage: a stretch runs from the first loss to the next acceptance") {
  using namespace std::chrono_literals;
  AuthorityOutage outage;
  const AuthorityOutage::Clock::time_point t0{};
  CHECK_FALSE(outage.running());
  CHECK(outage.seconds(t0 + 5s) == 0);
  CHECK_FALSE(outage.regained(t0 + 5s));  // nothing was lost: no stretch, no event

  outage.lost(t0 + 10s);
  outage.lost(t0 + 12s);  // a second loss (another refusal) does not restart the stretch
  CHECK(outage.running());
  CHECK(outage.seconds(t0 + 13500ms) == doctest::Approx(3.5));
  CHECK(outage.seconds(t0 + 9s) == 0);  // a time before the loss is not negative
  const auto ms = outage.regained(t0 + 18250ms);
  REQUIRE(ms);
  CHECK(*ms == 8250);
  CHECK_FALSE(outage.running());
  CHECK(outage.seconds(t0 + 20s) == 0);
  CHECK_FALSE(outage.regained(t0 + 21s));  // counted once

  outage.lost(t0 + 30s);
  CHECK(outage.regained(t0 + 30s) == std::optional<std::int64_t>(0));
}

TEST_CASE("authority guard: a server's address as libpq names it") {
  CHECK(server_address("127.0.77.1", "25541") == "127.0.77.1:25541");
  CHECK(server_address("/var/run/postgresql", "5432") == "/var/run/postgresql:5432");
  CHECK(server_address("db", "") == "db");
  CHECK(server_address(nullptr, "5432") == "?:5432");
  CHECK(server_address(nullptr, nullptr) == "?");
}
