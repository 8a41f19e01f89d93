#!/usr/bin/env python3
"""The failover drill's agents and its checks (scripts/ha.sh drill; docs/deployment.md).

  ha_drill.py run   --gateway URL [--gateway URL ...] --provider-control URL --out DIR
                    Agents (threads) book on tasks of their own through the gateways, as
                    spec section 9 asks of an agent: the same key again after 503
                    authority_unavailable (Retry-After), operation_in_flight and
                    unknown_outcome; a new claim after stale_owner or expired_owner; the
                    next gateway of the list when theirs cannot be reached. Each grant and
                    each acknowledged booking is written to DIR/agents.json.
  ha_drill.py snapshot --out DIR --database CONNINFO
                    The drill's operations and tasks as one server holds them (the partition
                    drill reads the old primary through its Unix socket before it is healed
                    and rewound): DIR/old_primary.json.
  ha_drill.py check --out DIR --database URL --provider-control URL
                    At the provider and in the database: every booking executed exactly once,
                    none missing, no epoch granted twice, every acknowledged commit present,
                    nothing left held; with DIR/old_primary.json, no decision committed on the
                    old primary after the promotion (DIR/promoted_at). Writes DIR/report.txt
                    and DIR/report.json; exits 1 on any failure.

  ha_drill.py bench --results FILE --command CMD DIR...
                    From each drill's DIR/report.json: the write outage and acknowledged
                    bookings per second before the fault, during the outage and after it,
                    as Markdown (bench/ha.sh writes bench/ha_results.md).

Standard library only (no PyPI on the build machines).
"""
import argparse
import http.client
import json
import os
import random
import subprocess
import sys
import threading
import time
import urllib.parse

AGENT_TOKEN = "dev-agent-token-a"
TENANT = "tenant-a"


class Agent(threading.Thread):
    def __init__(self, index, gateways, tasks, bookings, lease_ms, run_id, stop_at):
        super().__init__(daemon=True)
        # gateways[0] is the agent's own; the others are where it goes when that one is gone.
        self.index, self.gateways, self.tasks, self.bookings = index, gateways, tasks, bookings
        self.gateway = gateways[0]
        self.lease_ms, self.run_id, self.stop_at = lease_ms, run_id, stop_at
        self.switches = []    # {at, to}: the agent moved to another gateway
        self.grants = []      # {task, epoch, at}
        self.done = []        # {task, key, code, at}
        self.codes = {}       # every Gateway-Status seen, counted
        self.unavailable = []  # times of 503 authority_unavailable
        self.error = None
        self.current = 0
        self.conn = None
        self.state = {t: {"token": None, "version": 0} for t in tasks}

    def switch_gateway(self):
        """The next gateway of the list: this one refused the connection or broke it."""
        if len(self.gateways) < 2:
            return
        self.current = (self.current + 1) % len(self.gateways)
        self.switches.append({"at": time.time(), "to": self.gateways[self.current]})

    def request(self, method, path, body=None, headers=None):
        """One request; (status, Gateway-Status, headers, body) or None when the gateway
        could not be reached (the request never left, or the connection broke): the agent
        then moves to the next gateway and the caller sends the same request again."""
        h = {"Authorization": "Bearer " + AGENT_TOKEN}
        h.update(headers or {})
        data = None if body is None else json.dumps(body).encode()
        if data is not None:
            h["Content-Type"] = "application/json"
        for _ in range(2):
            try:
                if self.conn is None:
                    url = urllib.parse.urlsplit(self.gateways[self.current])
                    self.conn = http.client.HTTPConnection(url.hostname, url.port, timeout=15)
                self.conn.request(method, path, body=data, headers=h)
                r = self.conn.getresponse()
                payload = r.read()
                code = r.getheader("Gateway-Status", "")
                self.codes[code] = self.codes.get(code, 0) + 1
                if code == "authority_unavailable":
                    self.unavailable.append(time.time())
                return r.status, code, r, payload
            except (OSError, http.client.HTTPException):
                self.conn = None
        self.switch_gateway()
        return None

    def pause(self, reply, default=0.2):
        after = reply[2].getheader("Retry-After") if reply else None
        # Retry-After is whole seconds; the drill waits at most that, and never less than 50 ms.
        time.sleep(max(0.05, min(float(after) if after else default, 1.0)))

    def claim(self, task):
        path = "/v1/tenants/%s/tasks/%s/claim" % (TENANT, task)
        while time.time() < self.stop_at:
            r = self.request("POST", path, {"owner": "agent-%d" % self.index, "lease_ms": self.lease_ms})
            if r and r[1] == "granted":
                j = json.loads(r[3])
                self.state[task]["token"] = j["grant_token"]
                self.state[task]["version"] = j["version"]
                self.grants.append({"task": task, "epoch": j["grant"]["epoch"], "at": time.time()})
                return True
            self.pause(r)
        raise RuntimeError("agent %d: no grant for %s before the deadline" % (self.index, task))

    def version(self, task):
        while time.time() < self.stop_at:
            r = self.request("GET", "/v1/tenants/%s/tasks/%s" % (TENANT, task))
            if r and r[0] == 200:
                self.state[task]["version"] = json.loads(r[3])["version"]
                return
            self.pause(r)

    def book(self, task, n):
        key = "a%d-b%d" % (self.index, n)
        body = {"slot": "%s a%d b%d" % (self.run_id, self.index, n), "customer": "drill"}
        path = "/v1/tenants/%s/tasks/%s/providers/booking/bookings" % (TENANT, task)
        st = self.state[task]
        # Every later send of this key is the exact request again, with the Expected-Version it
        # was first sent with (docs/api.md, "What an agent may retry"), also under a new grant:
        # an outcome recorded after the lease ran out answers expired_owner, and only the exact
        # retry replays it (another version is another fingerprint: operation_conflict). Only
        # version_conflict, which proves nothing was done, lets the request change.
        pinned = None
        while time.time() < self.stop_at:
            if st["token"] is None:
                self.claim(task)
            version = pinned if pinned is not None else st["version"]
            r = self.request("POST", path, body, {"Fence-Grant": st["token"], "Idempotency-Key": key,
                                                  "Expected-Version": str(version)})
            code = r[1] if r else "unreachable"
            pinned = version
            if code in ("committed", "historical_retry"):
                committed = r[2].getheader("Committed-Version")
                if committed is None:
                    self.version(task)
                else:
                    st["version"] = int(committed)
                self.done.append({"task": task, "key": key, "code": code, "at": time.time()})
                return
            if code == "resolved_without_reply":
                # Settled from evidence (a provider lookup) while we waited: executed once.
                self.version(task)
                self.done.append({"task": task, "key": key, "code": code, "at": time.time()})
                return
            if code in ("stale_owner", "expired_owner", "authority_generation_mismatch"):
                st["token"] = None
                continue
            if code == "version_conflict":
                # Nothing was done under this key at that version: the next send is a new request.
                pinned = None
                self.version(task)
                continue
            if code in ("authority_unavailable", "operation_in_flight", "unknown_outcome", "provider_unavailable",
                        "unresolved_operation", "unreachable"):
                self.pause(r, 0.3 if code == "unknown_outcome" else 0.2)
                continue
            raise RuntimeError("agent %d: %s %s answered %s %s: %s" % (self.index, task, key, r[0], code, r[3][:300]))
        raise RuntimeError("agent %d: %s %s not settled before the deadline" % (self.index, task, key))

    def run(self):
        # Agents out of step with each other (a staggered start, jittered pacing), so their
        # pauses past the lease do not all fall in the same seconds, the fault's among them.
        rng = random.Random(self.index)
        try:
            time.sleep(self.index * 0.3)
            for n in range(self.bookings):
                self.book(self.tasks[n % len(self.tasks)], n)
                # Paced, so the load spans the kill; now and then a pause past the lease, so
                # grants also end the ordinary way and are claimed again.
                time.sleep(self.lease_ms / 1000.0 + 0.2 if n % 15 == 14 else 0.05 + rng.random() * 0.1)
        except Exception as e:  # reported in agents.json, failing the run
            self.error = str(e)


def cmd_run(a):
    run_id = "%d-%d" % (time.time(), os.getpid())
    stop_at = time.time() + a.deadline
    agents = []
    for i in range(a.agents):
        # Two agents on the first gateway, one on the second (and so on round the list); each
        # knows the others to go to when its own is gone.
        home = 0 if i % 3 != 2 or len(a.gateway) == 1 else 1 % len(a.gateway)
        gateways = a.gateway[home:] + a.gateway[:home]
        tasks = ["drill-%s-a%d-t%d" % (run_id, i, j) for j in range(a.tasks_per_agent)]
        agents.append(Agent(i, gateways, tasks, a.bookings_per_agent, a.lease_ms, run_id, stop_at))
    started = time.time()
    for ag in agents:
        ag.start()
    for ag in agents:
        ag.join(max(0.0, stop_at - time.time()) + 5)
    out = {
        "run_id": run_id,
        "started": started,
        "finished": time.time(),
        "agents": [{"index": ag.index, "gateway": ag.gateway, "tasks": ag.tasks, "bookings": ag.bookings,
                    "grants": ag.grants, "done": ag.done, "codes": ag.codes, "unavailable": ag.unavailable,
                    "switches": ag.switches,
                    "error": ag.error if not ag.is_alive() else "still running at the deadline"}
                   for ag in agents],
    }
    with open(os.path.join(a.out, "agents.json"), "w") as f:
        json.dump(out, f, indent=1)
    failed = [ag for ag in out["agents"] if ag["error"]]
    for ag in failed:
        print("ha_drill.py: agent %d: %s" % (ag["index"], ag["error"]), file=sys.stderr)
    return 1 if failed else 0


def psql(database, sql):
    r = subprocess.run(["psql", database, "-XAt", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-c", sql],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise RuntimeError("psql: " + r.stderr.strip())
    return [line.split("\t") for line in r.stdout.splitlines() if line]


def get_json(url):
    u = urllib.parse.urlsplit(url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    c.request("GET", u.path)
    r = c.getresponse()
    return json.loads(r.read())


def outage_gap(event_at, promoted_at, done_at):
    """The stretch without an acknowledged booking that the fault caused, as (seconds, start):
    the one across the promotion when there is one (writes stop at the old primary's death or
    demotion and resume on the new one), else the longest within 30 s of the fault. Not simply
    the longest after the fault: late in a run, with fewer agents left, ordinary pauses are
    longer than a switchover's outage."""
    times = [event_at] + sorted(t for t in done_at if t > event_at)
    gaps = [(b - a, a) for a, b in zip(times, times[1:])]
    if not gaps:
        return None
    if promoted_at:
        across = [g for g in gaps if g[1] <= promoted_at < g[1] + g[0]]
        if across:
            return across[0]
    near = [g for g in gaps if g[1] < event_at + 30]
    return max(near or gaps)


def read_float(path):
    try:
        with open(path) as f:
            return float(f.read())
    except (OSError, ValueError):
        return None


def drill_rows(database, run_id):
    """The drill's operations and tasks as the server behind `database` holds them."""
    ops = {"%s/%s" % (r[0], r[1]): {"state": r[2], "upstream_key": r[3], "attempts": int(r[4]), "updated_ms": int(r[5])}
           for r in psql(database, "SELECT task, op_id, state, upstream_key, attempts, updated_ms FROM operations "
                                   "WHERE tenant = '%s' AND task LIKE 'drill-%s-%%'" % (TENANT, run_id))}
    tasks = {r[0]: int(r[1]) for r in psql(database, "SELECT task, epoch FROM tasks WHERE tenant = '%s' AND "
                                                      "task LIKE 'drill-%s-%%'" % (TENANT, run_id))}
    return ops, tasks


def cmd_snapshot(a):
    with open(os.path.join(a.out, "agents.json")) as f:
        run_id = json.load(f)["run_id"]
    # The old primary may be between its demotion and its restart as a standby (its shutdown
    # waits for walsenders stuck on the cut-off standbys: 30-45 s here): tried for 120 s.
    deadline = time.time() + 120
    said = False
    while True:
        try:
            ops, tasks = drill_rows(a.database, run_id)
            state = psql(a.database, "SELECT pg_is_in_recovery(), (extract(epoch FROM clock_timestamp()) * 1000)::bigint")[0]
            break
        except RuntimeError as e:
            if time.time() > deadline:
                raise
            if not said:
                print("ha_drill.py: the old primary cannot be read yet (%s); trying for up to 120 s" %
                      " ".join(str(e).split())[:200], file=sys.stderr)
                said = True
            time.sleep(0.5)
    print("ha_drill.py: the old primary read %.0f s after the first try" % (120 - (deadline - time.time())),
          file=sys.stderr)
    snap = {"operations": ops, "tasks": tasks, "in_recovery": state[0] == "t", "taken_ms": int(state[1])}
    with open(os.path.join(a.out, "old_primary.json"), "w") as f:
        json.dump(snap, f, indent=1)
    print("ha_drill.py: old primary: %d operations, %d tasks of the drill, in recovery: %s" %
          (len(ops), len(tasks), snap["in_recovery"]))
    return 0


def compare_old_primary(snap, ops, tasks, promoted_at, intended):
    """What the old primary holds that the new one does not: decisions committed there after
    the cut. Each one after the promotion is a problem (a gateway went on writing to it); one
    before it is reported (a commit in doubt, never acknowledged, as the other checks show)."""
    problems, lines = [], []
    promoted_ms = promoted_at * 1000 if promoted_at else None
    diverged = []
    for key, op in snap["operations"].items():
        now = ops.get(tuple(key.split("/", 1)))
        # Behind the new primary (an older state of the row) is not a divergence; a row the new
        # primary lacks, or a change it never saw, is.
        if (now is None or op["updated_ms"] > now["updated_ms"] or op["attempts"] > now["attempts"] or
                (op["updated_ms"] == now["updated_ms"] and op["state"] != now["state"])):
            diverged.append((key, op))
    for task, epoch in snap["tasks"].items():
        if epoch > tasks.get(task, -1):
            diverged.append((task, {"epoch": epoch, "updated_ms": None}))
    after = [(k, op) for k, op in diverged
             if promoted_ms is None or op.get("updated_ms") is None or op["updated_ms"] >= promoted_ms]
    for k, op in after:
        problems.append("old primary: %s committed there after the promotion: %s" % (k, op))
    acknowledged = [k for k, _ in diverged if tuple(k.split("/", 1)) in intended]
    lines.append("old primary (read before it was healed; in recovery then: %s): %d operations, %d rows not on the new "
                 "primary (%d of them after the promotion, %d of acknowledged bookings)" %
                 (snap["in_recovery"], len(snap["operations"]), len(diverged), len(after), len(acknowledged)))
    return problems, lines


def cmd_check(a):
    with open(os.path.join(a.out, "agents.json")) as f:
        run = json.load(f)
    # The moment of the fault (killed_at is the name the first drill used).
    event_at = read_float(os.path.join(a.out, "event_at")) or read_float(os.path.join(a.out, "killed_at"))
    promoted_at = read_float(os.path.join(a.out, "promoted_at"))
    run_id = run["run_id"]
    problems, lines = [], []

    intended = {}  # (task, key) -> acknowledged code
    grants = []
    for ag in run["agents"]:
        for n in range(ag["bookings"]):
            intended[(ag["tasks"][n % len(ag["tasks"])], "a%d-b%d" % (ag["index"], n))] = None
        for d in ag["done"]:
            intended[(d["task"], d["key"])] = d["code"]
        grants += [(g["task"], g["epoch"]) for g in ag["grants"]]

    rows, tasks = drill_rows(a.database, run_id)
    ops = {tuple(k.split("/", 1)): v for k, v in rows.items()}
    effects = get_json(a.provider_control + "/__test/effects")
    by_key = effects.get("by_key", {})

    missing_ack = [k for k, code in intended.items() if code is None]
    if missing_ack:
        problems.append("%d bookings were never acknowledged to their agent: %s" % (len(missing_ack), missing_ack[:5]))
    for k, code in intended.items():
        op = ops.get(k)
        if op is None:
            problems.append("%s/%s: acknowledged (%s) but not in the database" % (k[0], k[1], code))
            continue
        if op["state"] != "succeeded":
            problems.append("%s/%s: acknowledged (%s) but %s in the database" % (k[0], k[1], code, op["state"]))
        n = by_key.get(op["upstream_key"], 0)
        if n != 1:
            problems.append("%s/%s: executed %d times at the provider" % (k[0], k[1], n))
    extra = [k for k in ops if k not in intended]
    if extra:
        problems.append("operations nobody intended: %s" % extra[:5])
    ours = {ops[k]["upstream_key"] for k in intended if k in ops}
    executed = sum(n for key, n in by_key.items() if key in ours)
    others = sum(n for key, n in by_key.items() if key not in ours)
    if executed != len(intended):
        problems.append("the provider executed %d bookings of the drill's %d" % (executed, len(intended)))
    epochs = [e for _, e in grants]
    dupes = sorted({e for e in epochs if epochs.count(e) > 1})
    if dupes:
        problems.append("epochs granted twice: %s" % dupes)
    for task, epoch in tasks.items():
        seen = max((e for t, e in grants if t == task), default=None)
        if seen is None or epoch < seen:
            problems.append("%s: the database's epoch %d is below the last granted %s" % (task, epoch, seen))
    held = [k for k, op in ops.items() if op["state"] in ("in_flight", "unknown")]
    if held:
        problems.append("operations still held: %s" % held)

    unavailable = sorted(t for ag in run["agents"] for t in ag["unavailable"])
    done_at = sorted(d["at"] for ag in run["agents"] for d in ag["done"])
    done_after = [t for t in done_at if event_at and t > event_at]
    switches = sum(len(ag.get("switches", [])) for ag in run["agents"])
    lines.append("drill %s (%s): %d agents, %d bookings, %d grants (epochs unique: %s)" %
                 (run_id, a.scenario, len(run["agents"]), len(intended), len(grants), "yes" if not dupes else "NO"))
    lines.append("primary before: %s; primary after: %s" % (a.old_primary, a.new_primary))
    outage = None
    if event_at and done_after:
        outage = done_after[0] - event_at
        lines.append("write outage: %.1f s from the fault to the first acknowledged booking after it" % outage)
    longest = outage_gap(event_at, promoted_at, done_at) if event_at else None
    if longest:
        # The write outage when a booking or two was still acknowledged just after the fault, or
        # writes went on for a while (etcd lost, the partition).
        lines.append("stretch without an acknowledged booking the fault caused: %.1f s (from %.1f s after it)" %
                     (longest[0], longest[1] - event_at))
    if event_at and promoted_at:
        lines.append("promotion: %.1f s after the fault" % (promoted_at - event_at))
    lines.append("503 authority_unavailable seen by agents: %d; moves to another gateway: %d" % (len(unavailable), switches))
    settled = sum(ag["codes"].get("resolved_without_reply", 0) for ag in run["agents"])
    if settled:
        lines.append("held operations settled from evidence (a provider lookup) while their agents waited: %d" % settled)
    in_flight = read_float(os.path.join(a.out, "in_flight_at_fault"))
    if in_flight is not None and in_flight >= len(run["agents"]) and not settled:
        # Every agent had a booking at the provider, so the killed gateway's agents left
        # forwards there that only the survivor's reconciler can settle.
        problems.append("the killed gateway left forwards in flight, and no agent saw one settled from evidence")
    codes = {}
    for ag in run["agents"]:
        for c, n in ag["codes"].items():
            codes[c] = codes.get(c, 0) + n
    lines.append("replies by Gateway-Status: %s" % json.dumps(codes, sort_keys=True))
    lines.append("provider: %d executions of the drill's bookings, %d of other keys" % (executed, others))
    lines.append("database: %d operations, %s" % (len(ops), json.dumps(
        {s: sum(1 for op in ops.values() if op["state"] == s) for s in sorted({op["state"] for op in ops.values()})})))
    snap_path = os.path.join(a.out, "old_primary.json")
    if os.path.exists(snap_path):
        with open(snap_path) as f:
            snap = json.load(f)
        p, l = compare_old_primary(snap, ops, tasks, promoted_at, intended)
        problems += p
        lines += l
    lines += ["PROBLEM: " + p for p in problems] or ["every property holds"]
    report = "\n".join(lines) + "\n"
    with open(os.path.join(a.out, "report.txt"), "w") as f:
        f.write(report)
    # For bench/ha.sh: the outage and the acknowledged bookings' times.
    with open(os.path.join(a.out, "report.json"), "w") as f:
        json.dump({"scenario": a.scenario, "run_id": run_id, "started": run["started"], "finished": run["finished"],
                   "event_at": event_at, "promoted_at": promoted_at, "outage_s": outage, "done_at": done_at,
                   "outage_gap_s": longest[0] if longest else None,
                   "bookings": len(intended), "grants": len(grants), "unavailable": len(unavailable),
                   "gateway_switches": switches, "codes": codes, "problems": problems}, f, indent=1)
    sys.stdout.write(report)
    return 1 if problems else 0


def rate(times, start, end):
    n = sum(1 for t in times if start <= t < end)
    return n, (n / (end - start) if end > start else 0.0)


def cmd_bench(a):
    """Per drill: the write outage (outage_gap: a booking or two already committing when the fault
    came may still be acknowledged just after it) and acknowledged bookings per second before the
    fault, during (the fault to 5 s after the outage ended: the outage and the catching up) and
    after (to the last one)."""
    out = ["# HA drill results (issue #32)", "",
           "Produced by `%s` on %s (%s), commit %s." % (
               a.command, time.strftime("%Y-%m-%d", time.gmtime()), os.uname().nodename,
               subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True).stdout.strip()),
           "",
           "Each drill: agents book through two gateways on the local HA stack (`scripts/ha.sh`: etcd, three",
           "Patroni nodes with synchronous_mode, two gateways, the demo booking provider); the fault comes",
           "while they book; every property of `scripts/ha_drill.py check` is then verified. The load is",
           "paced agents (about 0.1 s between bookings, all pausing past their 2 s lease every 15",
           "bookings), not a throughput test: `bench/run.sh` measures throughput. Write outage: the",
           "stretch without an acknowledged booking across the promotion (a booking already",
           "committing when the fault came can still be acknowledged just after it); first: from the",
           "fault to the first booking acknowledged after it.", "",
           "| drill | bookings | properties | write outage | first | promotion | 503s seen | bookings/s before | during | after |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    timelines = []
    for path in a.reports:
        with open(path) as f:
            r = json.load(f)
        ev, done = r["event_at"], sorted(r["done_at"])
        gap, gap_start = outage_gap(ev, r.get("promoted_at"), done) or (0.0, ev)
        gap_end = gap_start + gap
        mid = gap_end + 5
        end = done[-1] if done else mid
        _, before = rate(done, r["started"], ev)
        n_during, during = rate(done, ev, mid)
        n_after, after = rate(done, mid, end + 1e-6)
        first = "%.1f s" % r["outage_s"] if r.get("outage_s") is not None else "?"
        promo = "%.1f s" % (r["promoted_at"] - ev) if r.get("promoted_at") else "none"
        out.append("| %s | %d | %s | %.1f s (from +%.1f s) | %s | %s | %d | %.1f | %.1f (%.0f s) | %.1f |" % (
            r["scenario"], r["bookings"], "hold" if not r["problems"] else "FAILED: %d" % len(r["problems"]),
            gap, gap_start - ev, first, promo, r["unavailable"], before, during, mid - ev, after))
        lo = int(ev - 5 - r["started"])
        hi = int(mid - r["started"]) + 1
        buckets = [0] * max(0, hi - lo)
        for t in done:
            i = int(t - r["started"]) - lo
            if 0 <= i < len(buckets):
                buckets[i] += 1
        timelines.append("- %s: %s" % (r["scenario"], " ".join(
            ("[%d]" % b if i == int(ev - r["started"]) - lo else str(b)) for i, b in enumerate(buckets))))
    out += ["", "Acknowledged bookings per second, from 5 s before the fault (in brackets: the second it",
            "came in) to 5 s after the outage:", ""] + timelines + [""]
    with open(a.results, "w") as f:
        f.write("\n".join(out))
    sys.stdout.write("\n".join(out))
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--gateway", action="append", required=True)
    r.add_argument("--provider-control", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--agents", type=int, default=3)
    r.add_argument("--tasks-per-agent", type=int, default=2)
    r.add_argument("--bookings-per-agent", type=int, default=40)
    # Shorter than the failover: leases run out while the authority is away, so the agents claim
    # again afterwards and the check sees epochs issued on both primaries.
    r.add_argument("--lease-ms", type=int, default=2000)
    r.add_argument("--deadline", type=float, default=100)
    c = sub.add_parser("check")
    c.add_argument("--out", required=True)
    c.add_argument("--database", required=True)
    c.add_argument("--provider-control", required=True)
    c.add_argument("--old-primary", default="?")
    c.add_argument("--new-primary", default="?")
    c.add_argument("--scenario", default="kill")
    s = sub.add_parser("snapshot")
    s.add_argument("--out", required=True)
    s.add_argument("--database", required=True)
    b = sub.add_parser("bench")
    b.add_argument("--results", required=True)
    b.add_argument("--command", required=True)
    b.add_argument("reports", nargs="+")
    a = p.parse_args()
    return {"run": cmd_run, "check": cmd_check, "snapshot": cmd_snapshot, "bench": cmd_bench}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
