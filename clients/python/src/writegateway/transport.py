"""One HTTP exchange with the gateway, and what was sent when it failed.

A fresh connection per request: a kept-alive connection that the gateway closed while idle
fails on the next write exactly like a reset after sending, and the client must then treat the
mutation as possibly executed. Opening the connection first, on its own, makes "nothing was
sent" something the socket proves (the connect failed) rather than a guess.
"""

from __future__ import annotations

import http.client
import ssl
from dataclasses import dataclass
from typing import Callable

from .errors import TransportError
from .wire import BaseUrl


@dataclass(frozen=True)
class Reply:
    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes

    def header(self, name: str) -> str | None:
        name = name.lower()
        for key, value in self.headers:
            if key.lower() == name:
                return value
        return None

    @property
    def code(self) -> str | None:
        """The Gateway-Status: None on a reply the gateway's application did not make."""
        return self.header("Gateway-Status")

    @property
    def request_id(self) -> str | None:
        return self.header("X-Request-Id")


def exchange(base: BaseUrl, method: str, target: str, headers: dict[str, str], body: bytes,
             timeout: float, ssl_context: ssl.SSLContext | None = None,
             before_send: Callable[[], None] | None = None) -> Reply:
    """Send one request to the gateway and read the whole reply.

    Raises TransportError: `sent=False` when the connection (TCP and, for https, TLS) could not
    be opened, so no request byte left; `sent=True` for every later failure (a timeout, a
    reset, a truncated reply), after which the request may have been acted on.

    `before_send` runs once the connection is open, just before the first request byte is
    written (a connect can take long); whatever it raises propagates, and nothing is sent.
    """
    if base.scheme == "https":
        connection: http.client.HTTPConnection = http.client.HTTPSConnection(
            base.host, base.port, timeout=timeout,
            context=ssl_context or ssl.create_default_context())
    else:
        connection = http.client.HTTPConnection(base.host, base.port, timeout=timeout)
    try:
        try:
            connection.connect()
        except OSError as error:
            raise TransportError(f"could not connect to {base}: {error}", sent=False) from error
        if before_send:
            before_send()
        try:
            connection.request(method, target, body=body, headers=headers)
            response = connection.getresponse()
            payload = response.read()
        except (OSError, http.client.HTTPException) as error:
            raise TransportError(f"{method} {target}: no complete reply from {base} "
                                 f"({type(error).__name__}: {error}); the request may have "
                                 f"been received", sent=True) from error
        return Reply(response.status, tuple(response.getheaders()), payload)
    finally:
        connection.close()
