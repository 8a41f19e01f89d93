// Where each task's owner and ledger rows were last seen (their PostgreSQL
// row addresses, ctid), so that the next decision on the task reads them
// with a TID scan, which locks those two rows only, instead of through the
// primary keys' B-tree pages, which PostgreSQL locks whole.
//
// Why it matters: a SERIALIZABLE read of a page conflicts with any insert
// into it, and every active task's key shares those pages (with names in
// sequence, or on a fresh database, all of them). The ledger row is
// updated twice per write; while anything holds back the horizon HOT
// pruning needs (autovacuum's ANALYZE of a large table, a backup, a long
// report), its page fills, the next update moves the row and inserts its
// key again, and every decision that read that index page becomes a
// read-write conflict with it (docs/performance.md, "The task's rows read
// at their addresses").
//
// An address is a hint and never a decision: the statement checks the row
// there is the task's (tenant and task) and visible to its snapshot, and
// reads by key when it is not (store/task_snapshot.hpp). So a stale, lost or
// colliding entry costs one index read, nothing else. Bounded: a fixed
// table of slots, each task in one slot by its hash, a newer task
// replacing an older one there.
#pragma once

#include "core/grant.hpp"

#include <array>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace gw {

struct TaskRowAddresses {
  std::optional<std::string> task;    // the tasks row, "(page,item)"
  std::optional<std::string> ledger;  // the task_ledger row
  friend bool operator==(const TaskRowAddresses&, const TaskRowAddresses&) = default;
};

class TaskAddresses {
 public:
  explicit TaskAddresses(std::size_t slots = 16384);

  // The addresses last remembered for `scope`; none known when empty.
  TaskRowAddresses find(const TaskScope& scope) const;
  // Replaces what the slot held. An address left out is forgotten: a row
  // not found at all has none.
  void remember(const TaskScope& scope, TaskRowAddresses addresses);

 private:
  struct Slot {
    std::string key;  // tenant, a space, task: labels hold no spaces
    TaskRowAddresses addresses;
  };
  std::size_t slot_of(const std::string& key) const;
  std::vector<Slot> slots_;
  // A few locks for all the slots: two I/O threads and a worker pool
  // rarely meet on one.
  mutable std::array<std::mutex, 16> stripes_;
};

}  // namespace gw
