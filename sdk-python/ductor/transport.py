"""JSON over HTTP with the standard library, one connection a call.

A call in progress can be aborted from another thread (a worker's
shutdown ends its long poll that way)."""

from __future__ import annotations

import http.client
import json
import socket
import threading
from typing import Any, Optional
from urllib.parse import quote, urlencode, urlsplit

from .errors import APIError, TransportError, parse_retry_after


def esc(s: str) -> str:
    """s escaped as one path segment."""
    return quote(str(s), safe="")


def query(**params: Any) -> str:
    """A query string of the params that are set ("" when none is)."""
    q = {k: v for k, v in params.items() if v not in (None, "", 0)}
    return "?" + urlencode(q) if q else ""


class Abort:
    """Aborts the calls made with it: abort() closes their connection."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conns: set[http.client.HTTPConnection] = set()
        self.aborted = False

    def _add(self, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            if self.aborted:
                raise TransportError("ductor: call aborted")
            self._conns.add(conn)

    def _remove(self, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            self._conns.discard(conn)

    def abort(self) -> None:
        with self._lock:
            self.aborted = True
            conns = list(self._conns)
        for c in conns:
            sock = c.sock
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


class Transport:
    def __init__(self, base_url: str, api_key: str, timeout: float) -> None:
        u = urlsplit(base_url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError(f"ductor: the server URL must be http(s)://HOST[:PORT], not {base_url!r}")
        self.https = u.scheme == "https"
        self.host = u.hostname
        self.port = u.port
        self.prefix = u.path.rstrip("/") + "/api/v1"
        self.api_key = api_key
        self.timeout = timeout

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        if self.https:
            return http.client.HTTPSConnection(self.host, self.port, timeout=timeout)
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def call(self, method: str, path: str, body: Any = None, *, raw: Optional[bytes] = None,
             content_type: str = "application/json", timeout: Optional[float] = None,
             abort: Optional[Abort] = None) -> tuple[int, Any]:
        """Sends a request to path under /api/v1 and returns the status and
        the decoded JSON answer (None when empty)."""
        headers = {"Authorization": "Bearer " + self.api_key, "Accept": "application/json"}
        data = raw
        if data is None and body is not None:
            data = json.dumps(body).encode()
        if data is not None:
            headers["Content-Type"] = content_type
        conn = self._connection(timeout or self.timeout)
        if abort is not None:
            abort._add(conn)
        try:
            conn.request(method, self.prefix + path, body=data, headers=headers)
            res = conn.getresponse()
            payload = res.read()
        except (OSError, http.client.HTTPException) as e:
            raise TransportError(f"ductor: {method} {path}: {e}") from e
        finally:
            if abort is not None:
                abort._remove(conn)
            conn.close()
        if res.status >= 300:
            raise _api_error(res, payload)
        if not payload:
            return res.status, None
        try:
            return res.status, json.loads(payload)
        except ValueError as e:
            raise TransportError(f"ductor: {method} {path}: decode answer: {e}") from e


def _api_error(res: http.client.HTTPResponse, payload: bytes) -> APIError:
    retry_after = parse_retry_after(res.getheader("Retry-After"))
    try:
        err = json.loads(payload)["error"]
        if err.get("code"):
            return APIError(res.status, err["code"], err.get("message", ""), err.get("details"), retry_after)
    except (ValueError, KeyError, TypeError, AttributeError):
        pass
    text = payload[:64 << 10].decode("utf-8", "replace").strip()
    return APIError(res.status, f"http_{res.status}", text, None, retry_after)
