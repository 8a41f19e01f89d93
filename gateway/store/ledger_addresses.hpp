// Where each task's ledger row was last written (its PostgreSQL row address,
// ctid), so that the next decision on the task reads and updates it with a
// TID scan, which locks that row alone, instead of through task_ledger_pkey,
// whose B-tree pages PostgreSQL locks whole.
//
// Why it matters: a SERIALIZABLE read of an index page conflicts with any
// insert into it, and every active task's key shares those pages (with names
// in sequence, or on a fresh database, all of them). The ledger row is
// updated twice per write; while anything holds back the horizon pruning
// needs (autovacuum's ANALYZE of a large table, a backup, a long report),
// its page fills, the next update moves the row and inserts its key into the
// index again, and every decision that had read that index page became a
// read-write conflict with it (docs/performance.md, "The ledger row read at
// its address").
//
// An address is a hint and never a decision: the statement takes the row
// there only if it is the task's and visible to its snapshot, and a miss is
// decided by key (store/ledger_store.cpp). So a stale, lost or colliding
// entry costs one slower decision, nothing else. Bounded: a fixed table of
// slots, each task in one slot by its hash, a newer task replacing an older
// one there.
#pragma once

#include "core/grant.hpp"

#include <array>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace gw {

class LedgerAddresses {
 public:
  explicit LedgerAddresses(std::size_t slots = 16384);

  // The address last remembered for `scope`'s ledger row, "(page,item)".
  std::optional<std::string> find(const TaskScope& scope) const;
  // Replaces what the slot held; nullopt forgets the task.
  void remember(const TaskScope& scope, std::optional<std::string> address);

 private:
  struct Slot {
    std::string key;  // tenant, a space, task: labels hold no spaces
    std::optional<std::string> address;
  };
  std::size_t slot_of(const TaskScope& scope) const;
  std::vector<Slot> slots_;
  // A few locks for all the slots: two I/O threads and a worker pool
  // rarely meet on one.
  mutable std::array<std::mutex, 16> stripes_;
};

}  // namespace gw
