// The authority in PostgreSQL: epochs, realm, authority time.
#include "store/store_fixture.hpp"

#include <thread>

using namespace gw;
using namespace gw::test;

TEST_CASE("epochs strictly increase across the realm, over tasks and tenants") {
  StoreFixture f;
  std::int64_t last = 0;
  for (int i = 0; i < 5; ++i) {
    auto g = f.claim(i % 2 ? "tenant-a" : "tenant-b", "task-" + std::to_string(i), "o", 0, 10);
    CHECK(g.identity.epoch > last);
    last = g.identity.epoch;
  }
}

TEST_CASE("claims of one task from many threads: one grant, and epochs never repeat") {
  StoreFixture f;
  f.at(0);
  std::atomic<int> granted{0}, busy{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      Session s(f.session_options, no_failures());
      auto r = until_decided([&] { return f.authority.claim(s, {"tenant-a", "hot"}, "worker-" + std::to_string(i), 100); });
      (r.code == Code::granted ? granted : busy)++;
    });
  for (auto& t : threads) t.join();
  CHECK(granted == 1);
  CHECK(busy == 7);
}

TEST_CASE("the secret is stored only as a hash") {
  StoreFixture f;
  auto g = f.claim("tenant-a", "task-a", "o", 0, 10);
  CHECK(f.db.scalar("SELECT length(secret_hash) FROM tasks") == "32");
  CHECK(f.db.scalar("SELECT count(*) FROM tasks WHERE position(convert_to('" + g.secret +
                    "', 'UTF8') IN secret_hash) > 0") == "0");
}

TEST_CASE("epoch_exhausted when the realm has issued 2^63-1") {
  StoreFixture f;
  f.db.exec("ALTER SEQUENCE epoch_seq RESTART WITH 9223372036854775807");
  auto last = f.claim("tenant-a", "task-a", "o", 0, 10);
  CHECK(last.identity.epoch == INT64_MAX);
  f.at(0);
  CHECK(f.authority.claim(f.session, {"tenant-a", "task-b"}, "o", 10).code == Code::epoch_exhausted);
  CHECK(f.db.scalar("SELECT count(*) FROM tasks") == "1");
}

TEST_CASE("the realm is generated once per database") {
  StoreFixture a, b;
  auto ra = a.db.scalar("SELECT realm FROM authority");
  CHECK(ra.size() == 36);
  CHECK(ra != b.db.scalar("SELECT realm FROM authority"));
  CHECK(a.db.scalar("SELECT count(*) FROM authority") == "1");
}

TEST_CASE("authority time comes from the database clock and never goes below the floor") {
  StoreFixture f(ClockSource::database);
  const std::int64_t lease = 1000;
  auto r1 = f.authority.claim(f.session, {"tenant-a", "t1"}, "o", lease);
  REQUIRE(r1.code == Code::granted);
  const auto db_now = std::stoll(f.db.scalar("SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint"));
  CHECK(r1.expires_at_ms - lease <= db_now);
  CHECK(r1.expires_at_ms - lease > db_now - 60'000);
  // As if the server clock had stepped back an hour below what was observed:
  // the durable floor keeps authority time from following it.
  const auto ahead = db_now + 3'600'000;
  f.db.exec("UPDATE authority SET clock_floor_ms = " + std::to_string(ahead));
  auto r2 = f.authority.claim(f.session, {"tenant-a", "t2"}, "o", lease);
  CHECK(r2.expires_at_ms - lease >= ahead);
  // And this process remembers the highest time it saw, even if the floor
  // row were lost or lowered.
  f.db.exec("UPDATE authority SET clock_floor_ms = 0");
  auto r3 = f.authority.claim(f.session, {"tenant-a", "t3"}, "o", lease);
  CHECK(r3.expires_at_ms - lease >= ahead);
}

TEST_CASE("the clock floor advances to the database clock and never back") {
  StoreFixture f(ClockSource::database);
  f.authority.advance_floor(f.session);
  auto floor1 = std::stoll(f.db.scalar("SELECT clock_floor_ms FROM authority"));
  CHECK(floor1 > 1'600'000'000'000);
  f.db.exec("UPDATE authority SET clock_floor_ms = clock_floor_ms + 3600000");
  f.authority.advance_floor(f.session);
  CHECK(std::stoll(f.db.scalar("SELECT clock_floor_ms FROM authority")) == floor1 + 3'600'000);
}

TEST_CASE("release ends the lease now, a late release never ends a newer lease") {
  StoreFixture f;
  auto a = f.claim("tenant-a", "task-a", "region-a", 0, 10);
  f.at(5);
  auto rel = f.authority.release(f.session, {"tenant-a", "task-a"}, a);
  CHECK(rel.code == Code::released);
  CHECK(rel.expires_at_ms == 5);
  auto b = f.claim("tenant-a", "task-a", "region-b", 5, 10);
  CHECK(b.identity.epoch > a.identity.epoch);
  f.at(6);
  CHECK(f.authority.release(f.session, {"tenant-a", "task-a"}, a).code == Code::stale_owner);
  CHECK(f.authority.view(f.session, {"tenant-a", "task-a"})->expires_at_ms == 15);
}
