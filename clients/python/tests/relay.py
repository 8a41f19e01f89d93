"""A TCP relay in front of the real gateway: it counts the connections a client opens, and can
lose a request on its way to the gateway, or a reply on the way back after the gateway acted.

Not a stand-in for the gateway: every byte a test's client sends reaches the real one. The
relay only adds the network faults the client must survive, where a test can see them.
"""

from __future__ import annotations

import socket
import threading


class Relay:
    def __init__(self, target_port: int):
        self._target = ("127.0.0.1", target_port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._lock = threading.Lock()
        self._accepted = 0
        self._drop_replies = 0
        self._swallow = 0
        self._closed = False
        threading.Thread(target=self._serve, name="relay", daemon=True).start()

    @property
    def accepted(self) -> int:
        """Connections accepted so far."""
        with self._lock:
            return self._accepted

    def swallow_next_requests(self, count: int = 1) -> None:
        """The next `count` connections are read here and closed: the gateway never sees
        them, and the client cannot tell that from a reply lost on the way back."""
        with self._lock:
            self._swallow += count

    def drop_next_replies(self, count: int = 1) -> None:
        """The next `count` connections reach the gateway, which answers; the answer is read
        here and never passed on, and the client's connection is closed."""
        with self._lock:
            self._drop_replies += count

    def stop_listening(self) -> None:
        """Connections to the port are refused until listen_again()."""
        with self._lock:
            listener, self._listener = self._listener, None
        _close(listener)

    def listen_again(self) -> None:
        with self._lock:
            self._listener = socket.create_server(("127.0.0.1", self.port))
        threading.Thread(target=self._serve, name="relay", daemon=True).start()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            listener, self._listener = self._listener, None
        if listener:
            _close(listener)

    def _serve(self) -> None:
        listener = self._listener
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # closed
            with self._lock:
                if self._closed:
                    client.close()
                    return
                self._accepted += 1
                swallow = self._swallow > 0
                self._swallow -= swallow
                drop = not swallow and self._drop_replies > 0
                self._drop_replies -= drop
            threading.Thread(target=self._relay, args=(client, drop, swallow),
                             daemon=True).start()

    def _relay(self, client: socket.socket, drop_reply: bool, swallow: bool) -> None:
        if swallow:
            with client:
                client.recv(65536)  # the request's first bytes
                _hang_up(client)
            return
        with client, socket.create_connection(self._target) as upstream:
            threading.Thread(target=_pump, args=(client, upstream), daemon=True).start()
            if drop_reply:
                upstream.recv(65536)  # the gateway has answered: it acted on the request
                _hang_up(client)  # with nothing sent back
                return
            _pump(upstream, client)


def _close(listener: socket.socket) -> None:
    # close() alone does not wake a thread blocked in accept() on Linux, and the socket would
    # go on listening; shutdown() stops it at once.
    try:
        listener.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    listener.close()


def _hang_up(connection: socket.socket) -> None:
    # Now, not when the last thread blocked on it lets go: a pump thread may still be in recv().
    try:
        connection.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while chunk := source.recv(65536):
            sink.sendall(chunk)
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        pass
