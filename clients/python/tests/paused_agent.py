"""An agent process for the SIGSTOP test (test_lease_lost.PausedAgent), run as

    python3 paused_agent.py GATEWAY_URL TENANT TASK LEASE_MS SLOT

It claims the task, prints "claimed", waits for a line on stdin (the test stops it meanwhile,
past its lease, and continues it), then tries to book SLOT and prints what happened:
"lease_lost" (nothing sent), "committed", or the error's class name.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from writegateway import Gateway, LeaseLost, WriteGatewayError  # noqa: E402


def main() -> None:
    url, tenant, task, lease_ms, slot = sys.argv[1:]
    gateway = Gateway(url, "dev-agent-token-a")
    with gateway.claim(tenant, task, "paused-agent", int(lease_ms)) as handle:
        print("claimed", flush=True)
        sys.stdin.readline()
        try:
            handle.mutate("booking", "POST", "/bookings", {"slot": slot, "customer": "ada"},
                          "book-after-pause")
            print("committed", flush=True)
        except LeaseLost:
            print("lease_lost", flush=True)
        except WriteGatewayError as error:
            print(type(error).__name__, flush=True)


if __name__ == "__main__":
    main()
