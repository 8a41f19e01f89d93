"""writegateway: the write gateway's client for agents (docs/clients.md, "Python").

    gateway = Gateway("http://127.0.0.1:8080", "dev-agent-token-a")
    with gateway.claim("tenant-a", "trip-42", "region-eu", lease_ms=60_000) as task:
        result = task.mutate("booking", "POST", "/bookings", {"slot": "09:00"}, "book-9am")
"""

from . import errors
from .errors import *  # noqa: F401,F403 - every error class, one per gateway code
from .gateway import Gateway
from .results import MutationResult, Receipt
from .retry import RetryPolicy
from .task import Task

__all__ = ["Gateway", "Task", "MutationResult", "Receipt", "RetryPolicy", *errors.__all__]
