"""What goes on the wire, checked before anything is sent: labels, the base URL, request
targets, methods and bodies. No I/O.

Every request target this module builds is a path under the gateway's base URL. The client
never sends to any other host, so the agent token and the grant token can go nowhere else.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

# docs/api.md, Conventions: a label is 1 to 80 printable ASCII characters (33-126).
MAX_LABEL = 80

# Never forwarded (TRACE, CONNECT) or not a mutation (GET, HEAD bypass the ledger unfenced):
# a mutate() with one of these could not be protected, so it is refused before sending.
_NOT_MUTATIONS = frozenset({"GET", "HEAD", "TRACE", "CONNECT", "OPTIONS"})
_TOKEN_CHARS = frozenset("!#$%&'*+-.^_`|~0123456789"
                         "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


def label(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    if not 1 <= len(value) <= MAX_LABEL or any(not 33 <= ord(c) <= 126 for c in value):
        raise ValueError(f"{name} must be 1 to {MAX_LABEL} printable ASCII characters "
                         f"without spaces, not {value!r}")
    return value


def token(name: str, value: Any) -> str:
    """A bearer or grant token: it goes into a header, so visible ASCII only."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    if not value or any(not 33 <= ord(c) <= 126 for c in value):
        raise ValueError(f"{name} must be non-empty visible ASCII")
    return value


@dataclass(frozen=True)
class BaseUrl:
    scheme: str  # "http" or "https"
    host: str
    port: int
    path: str  # "" or a prefix such as "/gateway", without a trailing slash

    @staticmethod
    def parse(url: Any) -> "BaseUrl":
        if not isinstance(url, str):
            raise TypeError(f"base_url must be a str, not {type(url).__name__}")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            raise ValueError(f"base_url must start with http:// or https://, not {url!r}")
        if not parts.hostname:
            raise ValueError(f"base_url has no host: {url!r}")
        if parts.username is not None or parts.password is not None:
            raise ValueError("base_url must not hold credentials; pass the token separately")
        if parts.query or parts.fragment or "?" in url or "#" in url:
            raise ValueError(f"base_url must not have a query or fragment: {url!r}")
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            raise ValueError(f"base_url has a bad port: {url!r}") from None
        path = parts.path.rstrip("/")
        if any(not 33 <= ord(c) <= 126 for c in path):
            raise ValueError(f"base_url's path must be visible ASCII: {url!r}")
        return BaseUrl(parts.scheme, parts.hostname, port, path)

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}{self.path}"


def _segment(value: str) -> str:
    # Labels may hold '/', '?', '%' and the like; the gateway percent-decodes each segment.
    return quote(value, safe="")


def task_target(base: BaseUrl, tenant: str, task: str, *rest: str) -> str:
    """`{base path}/v1/tenants/{tenant}/tasks/{task}[/{rest}...]`, each label one segment."""
    parts = ["v1", "tenants", _segment(tenant), "tasks", _segment(task)]
    parts += [_segment(part) for part in rest]
    return base.path + "/" + "/".join(parts)


def provider_path(value: Any) -> str:
    """An upstream path (and query) as the provider knows it: `/bookings`, `/items/7?x=1`.

    It is appended to the gateway's proxy route, so it can never name another host; the
    gateway refuses dot-segments and encoded slashes itself (docs/api.md, proxy).
    """
    if not isinstance(value, str):
        raise TypeError(f"path must be a str, not {type(value).__name__}")
    if not value.startswith("/") or value.startswith("//"):
        raise ValueError(f"path must start with a single '/', not {value!r}")
    if "#" in value or any(not 33 <= ord(c) <= 126 for c in value):
        raise ValueError(f"path must be visible ASCII without '#' (percent-encode the rest), "
                         f"not {value!r}")
    return value


def proxy_target(base: BaseUrl, tenant: str, task: str, provider: str, path: str) -> str:
    return task_target(base, tenant, task, "providers", provider) + provider_path(path)


def mutation_method(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"method must be a str, not {type(value).__name__}")
    if not value or any(c not in _TOKEN_CHARS for c in value):
        raise ValueError(f"method must be an HTTP method token, not {value!r}")
    if value.upper() in _NOT_MUTATIONS:
        raise ValueError(f"{value} is not a mutation: the gateway would not fence it "
                         f"(use POST, PUT, PATCH, DELETE or the provider's own method)")
    return value


def encode_body(body: Any, content_type: str | None) -> tuple[bytes, str | None]:
    """The exact bytes to send and their Content-Type.

    The gateway fingerprints the body byte for byte, so an exact retry must send the same
    bytes: JSON is serialized once, compactly and with sorted keys, so the same dict always
    gives the same bytes whatever order it was built in.
    """
    if body is None:
        return b"", content_type
    if isinstance(body, (bytes, bytearray, memoryview)):
        return bytes(body), content_type
    if isinstance(body, str):
        return body.encode("utf-8"), content_type or "text/plain; charset=utf-8"
    try:
        encoded = json.dumps(body, separators=(",", ":"), sort_keys=True, ensure_ascii=False,
                             allow_nan=False)
    except (TypeError, ValueError) as error:
        raise TypeError(f"body must be bytes, str or JSON-serializable: {error}") from None
    return encoded.encode("utf-8"), content_type or "application/json"
