"""The real stack the client's tests run against: a private PostgreSQL, the two demo providers
and the gateway, each started here on free ports and stopped at exit.

One stack per test process (shared()). Binaries come from $GATEWAY_TEST_BIN_DIR (default
build/release/bin); nothing is built here. State lives in $WRITEGATEWAY_TEST_DIR (default
build/clients-python): the database (destroyed at every start), the gateway's config, logs.
Tests share the stack, so each uses task names of its own (fresh_name()).
"""

from __future__ import annotations

import atexit
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
AGENT_TOKEN = "dev-agent-token-a"
OPERATOR_TOKEN = "dev-operator-token"
TENANT = "tenant-a"
# First PostgreSQL port tried: below the kernel's ephemeral range (32768-60999), where an
# outgoing connection could take the port between the check and the bind, and away from the
# ranges scripts/test.sh (25433-25532) and scripts/demo-stack.sh (25632+) use.
PG_FIRST_PORT = 25732
# The credentials config/dev.json reads from the environment, as scripts/run.sh sets them.
CREDENTIALS = {"BOOKING_KEY_TENANT_A": "booking-secret-tenant-a",
               "BOOKING_KEY_TENANT_B": "booking-secret-tenant-b",
               "CRM_KEY_TENANT_A": "crm-secret-tenant-a", "CRM_KEY_TENANT_B": "crm-secret-tenant-b"}
START_TIMEOUT = 120.0  # generous: a first start runs the migrations on a fresh cluster


class StackError(RuntimeError):
    pass


def wait_for(condition, what: str, timeout: float = 60.0, pause: float = 0.05):
    """Poll `condition` until it returns something truthy; fail after a generous `timeout`."""
    tick = threading.Event()
    give_up = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > give_up:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        tick.wait(pause)


def fresh_name(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(6)}"


def http_json(method: str, url: str, body=None, token: str | None = None,
              timeout: float = 30.0) -> tuple[int, dict]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        payload = error.read()
        try:
            return error.code, json.loads(payload)
        except ValueError:
            return error.code, {"raw": payload.decode(errors="replace")}


class Control:
    """A demo provider's /__test control API (docs/operations.md)."""

    def __init__(self, port: int):
        self.url = f"http://127.0.0.1:{port}/__test"

    def _call(self, method: str, path: str, body=None) -> dict:
        status, value = http_json(method, self.url + path, body)
        if status != 200:
            raise StackError(f"{method} {path} on the provider's control port: {status} {value}")
        return value

    def effects_by_key(self) -> dict[str, int]:
        return self._call("GET", "/effects")["by_key"]

    def requests(self) -> list[dict]:
        return self._call("GET", "/requests")["requests"]

    def activity(self) -> dict:
        return self._call("GET", "/activity")

    def fault(self, mode: str, **fields) -> None:
        self._call("POST", "/faults", {"mode": mode, **fields})

    def release_held(self) -> dict:
        return self._call("POST", "/release", {})


class Process:
    def __init__(self, name: str, argv: list[str], env: dict[str, str], log: Path):
        self.name, self.log = name, log
        with open(log, "wb") as out:
            self.popen = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT,
                                          stdin=subprocess.DEVNULL)

    def wait_line(self, pattern: str) -> re.Match:
        """The first line of its output matching `pattern` (the program prints its ports)."""
        regex = re.compile(pattern)

        def seen():
            if self.popen.poll() is not None:
                raise StackError(f"{self.name} exited with {self.popen.returncode}; "
                                 f"see {self.log}:\n{self.tail()}")
            for line in self.log.read_text(errors="replace").splitlines():
                found = regex.search(line)
                if found:
                    return found
            return None
        return wait_for(seen, f"{self.name} to print /{pattern}/", START_TIMEOUT)

    def tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self, grace: float) -> None:
        if self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(grace)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()


class Stack:
    def __init__(self):
        self.bin = Path(os.environ.get("GATEWAY_TEST_BIN_DIR") or REPO / "build/release/bin")
        self.dir = Path(os.environ.get("WRITEGATEWAY_TEST_DIR") or REPO / "build/clients-python")
        self.pgdir = self.dir / "pg"
        self.logs = self.dir / "logs"
        self.processes: list[Process] = []
        self.pg_port: int | None = None
        self.gateway: Process | None = None

    # Starting and stopping.

    def start(self) -> "Stack":
        for program in ("write-gateway", "demo-provider"):
            if not os.access(self.bin / program, os.X_OK):
                raise StackError(f"{self.bin / program} is missing: build it first "
                                 f"(scripts/build.sh release --target write-gateway "
                                 f"demo-provider) or set GATEWAY_TEST_BIN_DIR")
        self.logs.mkdir(parents=True, exist_ok=True)
        self._pg("destroy")
        self._start_pg()
        credentials = f"{CREDENTIALS['BOOKING_KEY_TENANT_A']},{CREDENTIALS['BOOKING_KEY_TENANT_B']}"
        self.booking_port, self.booking = self._start_provider("booking", credentials)
        self.booking_control_url = self.booking.url.removesuffix("/__test")
        credentials = f"{CREDENTIALS['CRM_KEY_TENANT_A']},{CREDENTIALS['CRM_KEY_TENANT_B']}"
        self.crm_port, self.crm = self._start_provider("crm", credentials)
        self._start_gateway()
        return self

    def stop(self) -> None:
        # The gateway first: on TERM it finishes or records in-flight forwards, which needs the
        # providers and the database.
        for process in reversed(self.processes):
            process.stop(30 if process is self.gateway else 5)
        self.processes.clear()
        self._pg("stop")

    def _pg(self, *args: str) -> None:
        script = REPO / "scripts/pg.sh"
        env = {**os.environ,
               "PG_EXTRA_OPTS": "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"}
        done = subprocess.run([str(script), args[0], str(self.pgdir), *args[1:]], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if done.returncode != 0:
            raise StackError(f"scripts/pg.sh {' '.join(args)} failed:\n{done.stdout.decode()}")

    def _start_pg(self) -> None:
        last = "every port was in use"
        for port in range(PG_FIRST_PORT, PG_FIRST_PORT + 100):
            if _listening(port):
                continue
            try:
                self._pg("start", str(port))
            except StackError as error:
                last = str(error)
                continue  # perhaps lost a race for the port: the next one
            self.pg_port = port
            return
        raise StackError(f"could not start PostgreSQL on ports {PG_FIRST_PORT}-"
                         f"{PG_FIRST_PORT + 99}; the last attempt: {last}")

    def stop_database(self) -> None:
        self._pg("stop")

    def start_database(self) -> None:
        self._pg("start", str(self.pg_port))

    def _start_provider(self, kind: str, credentials: str) -> tuple[int, Control]:
        env = {**os.environ, "DEMO_PROVIDER_CREDENTIALS": credentials}
        process = Process(f"the {kind} provider",
                          [str(self.bin / "demo-provider"), "--kind", kind, "--port", "0",
                           "--control-port", "0"], env, self.logs / f"{kind}-provider.log")
        self.processes.append(process)
        found = process.wait_line(r"demo-provider kind=\S+ port=(\d+) control_port=(\d+)")
        return int(found[1]), Control(int(found[2]))

    def _start_gateway(self) -> None:
        config = json.loads((REPO / "config/dev.json").read_text())
        config["listen"]["port"] = 0  # the gateway prints the port the kernel chose
        ports = {"booking": self.booking_port, "crm": self.crm_port}
        for provider in config["providers"]:
            provider["base_url"] = f"http://127.0.0.1:{ports[provider['name']]}"
        path = self.dir / "gateway.json"
        path.write_text(json.dumps(config, indent=2))
        env = {**os.environ, **CREDENTIALS,
               "GATEWAY_DATABASE_URL": f"host=127.0.0.1 port={self.pg_port} user=postgres "
                                       f"dbname=postgres"}
        self.gateway = Process("the gateway", [str(self.bin / "write-gateway"), "--config",
                                               str(path)], env, self.logs / "gateway.log")
        self.processes.append(self.gateway)
        port = int(self.gateway.wait_line(r"write-gateway listening on port (\d+)")[1])
        self.url = f"http://127.0.0.1:{port}"
        self.wait_ready()

    def wait_ready(self) -> None:
        wait_for(lambda: http_json("GET", self.url + "/readyz", timeout=5)[0] == 200,
                 "the gateway's /readyz to answer 200", START_TIMEOUT)

    # What the tests look at.

    def operator(self, method: str, path: str, body=None) -> tuple[int, dict]:
        return http_json(method, self.url + path, body, OPERATOR_TOKEN)

    def upstream_key(self, task: str, operation: str, tenant: str = TENANT) -> str:
        status, view = self.operator("GET", f"/v1/admin/operations/{tenant}/{task}/{operation}")
        if status != 200:
            raise StackError(f"the operator's view of {task}/{operation}: {status} {view}")
        return view["operation"]["upstream_key"]

    def rejections(self, task: str, tenant: str = TENANT) -> list[dict]:
        status, page = self.operator("GET", f"/v1/admin/rejections?tenant={tenant}&task={task}")
        if status != 200:
            raise StackError(f"the rejection audit: {status} {page}")
        return page["rejections"]

    def task_view(self, task: str, tenant: str = TENANT) -> dict:
        return self.operator("GET", f"/v1/tenants/{tenant}/tasks/{task}")[1]

    def replies_total(self, route: str, code: str) -> float:
        """gateway_replies_total{route, code} from /metrics (which needs no database)."""
        with urllib.request.urlopen(self.url + "/metrics", timeout=10) as response:
            text = response.read().decode()
        total = 0.0
        for line in text.splitlines():
            if line.startswith("gateway_replies_total{") and f'route="{route}"' in line \
                    and f'code="{code}"' in line:
                total += float(line.rsplit(" ", 1)[1])
        return total


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


_shared: Stack | None = None
_lock = threading.Lock()


def shared() -> Stack:
    """The test process's stack, started on first use and stopped when the process exits."""
    global _shared
    with _lock:
        if _shared is None:
            stack = Stack()
            atexit.register(stack.stop)
            # TERM (scripts or CI stopping the run) unwinds like Ctrl-C, so atexit still runs.
            signal.signal(signal.SIGTERM, _interrupt)
            try:
                stack.start()
            except BaseException:
                stack.stop()
                atexit.unregister(stack.stop)
                raise
            _shared = stack
        return _shared


def _interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")
