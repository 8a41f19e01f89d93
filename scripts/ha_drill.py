#!/usr/bin/env python3
"""The failover drill's agents and its checks (scripts/ha.sh drill; docs/deployment.md).

  ha_drill.py run   --gateway URL [--gateway URL ...] --provider-control URL --out DIR
                    Agents (threads) book on tasks of their own through the gateways, as
                    spec section 9 asks of an agent: the same key again after 503
                    authority_unavailable (Retry-After), operation_in_flight and
                    unknown_outcome; a new claim after stale_owner or expired_owner. Each
                    grant and each acknowledged booking is written to DIR/agents.json.
  ha_drill.py check --out DIR --database URL --provider-control URL
                    At the provider and in the database: every booking executed exactly once,
                    none missing, no epoch granted twice, every acknowledged commit present,
                    nothing left held. Writes DIR/report.txt; exits 1 on any failure.

Standard library only (no PyPI on the build machines).
"""
import argparse
import http.client
import json
import os
import subprocess
import sys
import threading
import time
import urllib.parse

AGENT_TOKEN = "dev-agent-token-a"
TENANT = "tenant-a"


class Agent(threading.Thread):
    def __init__(self, index, gateway, tasks, bookings, lease_ms, run_id, stop_at):
        super().__init__(daemon=True)
        self.index, self.gateway, self.tasks, self.bookings = index, gateway, tasks, bookings
        self.lease_ms, self.run_id, self.stop_at = lease_ms, run_id, stop_at
        self.grants = []      # {task, epoch, at}
        self.done = []        # {task, key, code, at}
        self.codes = {}       # every Gateway-Status seen, counted
        self.unavailable = []  # times of 503 authority_unavailable
        self.error = None
        url = urllib.parse.urlsplit(gateway)
        self.host, self.port = url.hostname, url.port
        self.conn = None
        self.state = {t: {"token": None, "version": 0} for t in tasks}

    def request(self, method, path, body=None, headers=None):
        """One request; (status, Gateway-Status, headers, body) or None when the gateway
        could not be reached (the request never left, or the connection broke)."""
        h = {"Authorization": "Bearer " + AGENT_TOKEN}
        h.update(headers or {})
        data = None if body is None else json.dumps(body).encode()
        if data is not None:
            h["Content-Type"] = "application/json"
        for _ in range(2):
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPConnection(self.host, self.port, timeout=15)
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
        while time.time() < self.stop_at:
            if st["token"] is None:
                self.claim(task)
            r = self.request("POST", path, body, {"Fence-Grant": st["token"], "Idempotency-Key": key,
                                                  "Expected-Version": str(st["version"])})
            code = r[1] if r else "unreachable"
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
                self.version(task)
                continue
            if code in ("authority_unavailable", "operation_in_flight", "unknown_outcome", "provider_unavailable",
                        "unresolved_operation", "unreachable"):
                self.pause(r, 0.3 if code == "unknown_outcome" else 0.2)
                continue
            raise RuntimeError("agent %d: %s %s answered %s %s: %s" % (self.index, task, key, r[0], code, r[3][:300]))
        raise RuntimeError("agent %d: %s %s not settled before the deadline" % (self.index, task, key))

    def run(self):
        try:
            for n in range(self.bookings):
                self.book(self.tasks[n % len(self.tasks)], n)
                # Paced, so the load spans the kill; now and then a pause past the lease, so
                # grants also end the ordinary way and are claimed again.
                time.sleep(self.lease_ms / 1000.0 + 0.2 if n % 15 == 14 else 0.1)
        except Exception as e:  # reported in agents.json, failing the run
            self.error = str(e)


def cmd_run(a):
    run_id = "%d-%d" % (time.time(), os.getpid())
    stop_at = time.time() + a.deadline
    agents = []
    for i in range(a.agents):
        # Two agents on the first gateway, one on the second (and so on round the list).
        gateway = a.gateway[0] if i % 3 != 2 or len(a.gateway) == 1 else a.gateway[1 % len(a.gateway)]
        tasks = ["drill-%s-a%d-t%d" % (run_id, i, j) for j in range(a.tasks_per_agent)]
        agents.append(Agent(i, gateway, tasks, a.bookings_per_agent, a.lease_ms, run_id, stop_at))
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


def cmd_check(a):
    with open(os.path.join(a.out, "agents.json")) as f:
        run = json.load(f)
    killed_at = None
    try:
        with open(os.path.join(a.out, "killed_at")) as f:
            killed_at = float(f.read())
    except OSError:
        pass
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

    rows = psql(a.database, "SELECT task, op_id, state, upstream_key, attempts FROM operations "
                            "WHERE tenant = '%s' AND task LIKE 'drill-%s-%%'" % (TENANT, run_id))
    ops = {(r[0], r[1]): {"state": r[2], "upstream_key": r[3], "attempts": int(r[4])} for r in rows}
    tasks = {r[0]: int(r[1]) for r in psql(a.database, "SELECT task, epoch FROM tasks WHERE tenant = '%s' AND "
                                                        "task LIKE 'drill-%s-%%'" % (TENANT, run_id))}
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
    done_after = sorted(d["at"] for ag in run["agents"] for d in ag["done"] if killed_at and d["at"] > killed_at)
    lines.append("drill %s: %d agents, %d bookings, %d grants (epochs unique: %s)" %
                 (run_id, len(run["agents"]), len(intended), len(grants), "yes" if not dupes else "NO"))
    lines.append("primary killed: %s; new primary: %s" % (a.old_primary, a.new_primary))
    if killed_at and done_after:
        lines.append("write outage: %.1f s from the kill to the first acknowledged booking after it" %
                     (done_after[0] - killed_at))
    lines.append("503 authority_unavailable seen by agents: %d" % len(unavailable))
    codes = {}
    for ag in run["agents"]:
        for c, n in ag["codes"].items():
            codes[c] = codes.get(c, 0) + n
    lines.append("replies by Gateway-Status: %s" % json.dumps(codes, sort_keys=True))
    lines.append("provider: %d executions of the drill's bookings, %d of other keys" % (executed, others))
    lines.append("database: %d operations, %s" % (len(ops), json.dumps(
        {s: sum(1 for op in ops.values() if op["state"] == s) for s in sorted({op["state"] for op in ops.values()})})))
    lines += ["PROBLEM: " + p for p in problems] or ["every property holds"]
    report = "\n".join(lines) + "\n"
    with open(os.path.join(a.out, "report.txt"), "w") as f:
        f.write(report)
    sys.stdout.write(report)
    return 1 if problems else 0


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
    a = p.parse_args()
    return cmd_run(a) if a.cmd == "run" else cmd_check(a)


if __name__ == "__main__":
    sys.exit(main())
