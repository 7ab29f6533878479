"""One HTTP client for every NetBox call (``planner import netbox --url`` and ``planner netbox
push``), written for a server that is trusted with nothing:

- **origin**: the token goes to the configured scheme, host and port only. A ``next`` link or a
  redirect that names another origin is refused, never followed; a redirect within the origin is
  followed (at most :data:`MAX_REDIRECTS`).
- **time**: each answer must arrive whole within ``timeout_s`` (connect, headers and body
  together: a watchdog shuts the socket at its deadline, so a server that sends one byte a second
  is cut off), and every call ends by the client's ``deadline`` (a :func:`time.perf_counter`
  time, as :mod:`planner.clock` keeps).
- **bytes**: one answer at most ``max_answer_bytes``, all answers together at most
  ``max_total_bytes`` (read in chunks, refused as soon as the cap is passed).
- **shapes**: an answer must be JSON; a list page must be an object with a list of objects in
  ``results`` and ``next`` a link or null; a page seen before is refused (a ``next`` loop).
- **TLS**: certificates verified unless ``insecure``.

Every failure is an :class:`InputError` naming the URL and what was expected (exit 2).

Tokens: a NetBox ≥ 4.5 token (``nbt_<key>.<secret>``) is sent as ``Bearer``, an older one as
``Token``.
"""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import threading
import time
import urllib.parse
from collections.abc import Iterator

from planner.errors import InputError

MAX_REDIRECTS = 5
"""Redirects followed within the origin before a call is refused."""

MAX_ANSWER_BYTES = 256 * 2**20
"""One answer's cap (256 MiB): a NetBox page of 1,000 devices is a few MB."""

MAX_TOTAL_BYTES = 2 * 2**30
"""All answers of one client together (2 GiB): a gigawatt site (47,264 racks, 40,017 devices)
reads back as about 0.3 GB of JSON."""

CHUNK = 64 * 1024
"""Bytes read per socket read."""


class _Watchdog:
    """Shuts a connection's socket when its time is up: a blocked read then ends at once (the
    socket's own timeout only bounds each read, not a server that answers a byte at a time). The
    socket is held from connect on: http.client lets go of it for an HTTP/1.0 answer while the
    response still reads from it."""

    def __init__(self, wait_s: float) -> None:
        self.cut = threading.Event()
        self.held: list[socket.socket] = []
        self.timer = threading.Timer(wait_s, self._fire)
        self.timer.daemon = True
        self.timer.start()

    def _fire(self) -> None:
        self.cut.set()
        for sock in self.held:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def hold(self, sock: socket.socket | None) -> None:
        """Watch ``sock``; OSError when the time ran out while it connected."""
        if sock is not None:
            self.held.append(sock)
        if self.cut.is_set():
            raise OSError("cut off while connecting")


def origin_of(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of an http(s) URL; InputError for anything else."""
    u = urllib.parse.urlsplit(url)
    if u.scheme not in ("http", "https") or not u.hostname:
        raise InputError(f"--url: '{url}' is no http:// or https:// address of a NetBox")
    try:
        port = u.port or (443 if u.scheme == "https" else 80)
    except ValueError:
        raise InputError(f"--url: '{url}' has no valid port") from None
    return u.scheme, u.hostname.lower(), port


class NetBox:
    """A NetBox REST API at ``url`` (``http://127.0.0.1:8000``) with ``token``."""

    def __init__(
        self,
        url: str,
        token: str,
        timeout_s: float = 120.0,
        deadline: float | None = None,
        insecure: bool = False,
        max_answer_bytes: int = MAX_ANSWER_BYTES,
        max_total_bytes: int = MAX_TOTAL_BYTES,
    ) -> None:
        self.url = url.rstrip("/")
        self.origin = origin_of(url)
        scheme = "Bearer" if token.startswith("nbt_") else "Token"
        self.headers = {
            "Authorization": f"{scheme} {token}",
            "Content-Type": "application/json",
            "Accept": "application/json",
        }
        self.timeout_s = timeout_s
        self.deadline = deadline
        self.max_answer_bytes = max_answer_bytes
        self.max_total_bytes = max_total_bytes
        self.read_bytes = 0
        self._tls = ssl.create_default_context()
        if insecure:
            self._tls.check_hostname = False
            self._tls.verify_mode = ssl.CERT_NONE

    def _full(self, path: str, what: str) -> str:
        """An absolute URL within the origin for ``path`` (a path or a link an answer gave)."""
        full = urllib.parse.urljoin(self.url + "/", path)
        try:
            other = origin_of(full) != self.origin
        except InputError:
            other = True
        if other:
            o = f"{self.origin[0]}://{self.origin[1]}:{self.origin[2]}"
            raise InputError(
                f"NetBox at {self.url}: {what} '{full[:200]}' points outside {o}; not followed "
                "(the API token is sent to the configured address only)"
            )
        return full

    def call(self, method: str, path: str, body: object = None) -> object:
        """One request; the decoded JSON answer (None for an empty one). A refusal raises
        InputError with NetBox's words."""
        full = self._full(path, "the link")
        data = None if body is None else json.dumps(body).encode()
        for _ in range(MAX_REDIRECTS + 1):
            status, location, raw = self._once(method, full, data)
            if status in (301, 302, 303, 307, 308) and location:
                full = self._full(urllib.parse.urljoin(full, location), f"a redirect (HTTP {status}) to")
                if status == 303 or (status in (301, 302) and method != "GET"):
                    method, data = "GET", None
                continue
            if status >= 400:
                text = raw.decode(errors="replace")[:600]
                raise InputError(f"NetBox refused {method} {path} (HTTP {status}): {text}")
            if not raw.strip():
                return None
            try:
                return json.loads(raw)
            except ValueError:
                start = raw[:80].decode(errors="replace")
                raise InputError(
                    f"NetBox at {self.url}: the answer to {method} {full[:200]} is not JSON "
                    f"(HTTP {status}, starts {start!r}); is --url the NetBox address?"
                ) from None
        raise InputError(f"NetBox at {self.url}: more than {MAX_REDIRECTS} redirects for {method} {path}")

    def _wait(self, method: str, full: str) -> float:
        """Seconds the next answer may take: ``timeout_s``, or less to keep the deadline."""
        wait = self.timeout_s
        if self.deadline is not None:
            wait = min(wait, self.deadline - time.perf_counter())
            if wait <= 0:
                raise InputError(
                    f"NetBox at {self.url}: the import's deadline passed before {method} {full[:200]}"
                )
        return wait

    def _once(self, method: str, full: str, data: bytes | None) -> tuple[int, str, bytes]:
        """(status, Location, body) of one request, whole within its time and byte caps."""
        scheme, host, port = self.origin
        wait = self._wait(method, full)
        if scheme == "https":
            conn: http.client.HTTPConnection = http.client.HTTPSConnection(
                host, port, timeout=wait, context=self._tls
            )
        else:
            conn = http.client.HTTPConnection(host, port, timeout=wait)
        dog = _Watchdog(wait)
        target = urllib.parse.urlsplit(full)
        try:
            conn.connect()
            dog.hold(conn.sock)
            conn.request(
                method,
                urllib.parse.urlunsplit(("", "", target.path or "/", target.query, "")),
                body=data,
                headers=self.headers,
            )
            resp = conn.getresponse()
            raw = self._body(resp, method, full, dog.cut)
            return resp.status, resp.getheader("Location", "") or "", raw
        except ssl.SSLCertVerificationError as e:
            raise InputError(
                f"NetBox at {self.url}: its TLS certificate does not verify ({e.verify_message}); "
                "--insecure skips the check"
            ) from None
        except (OSError, http.client.HTTPException) as e:
            if dog.cut.is_set():
                raise InputError(
                    f"NetBox at {self.url}: no whole answer to {method} {full[:200]} within {wait:.0f} s"
                ) from None
            raise InputError(f"NetBox at {self.url} cannot be reached: {e}") from None
        finally:
            dog.timer.cancel()
            conn.close()

    def _body(self, resp: http.client.HTTPResponse, method: str, full: str, cut: threading.Event) -> bytes:
        """The answer's bytes, refused as soon as a cap is passed."""
        cap = min(self.max_answer_bytes, self.max_total_bytes - self.read_bytes)
        length = resp.getheader("Content-Length")
        if length and length.isdigit() and int(length) > cap:
            self._too_big(method, full, int(length))
        parts, n = [], 0
        while True:
            chunk = resp.read1(CHUNK)
            if not chunk:
                if cut.is_set():
                    raise OSError("cut off")
                break
            n += len(chunk)
            if n > cap:
                self._too_big(method, full, n)
            parts.append(chunk)
        self.read_bytes += n
        return b"".join(parts)

    def _too_big(self, method: str, full: str, n: int) -> None:
        if self.read_bytes + n > self.max_total_bytes:
            raise InputError(
                f"NetBox at {self.url}: the answers pass {self.max_total_bytes:,} bytes in all "
                f"(at {method} {full[:200]}); refused"
            )
        raise InputError(
            f"NetBox at {self.url}: the answer to {method} {full[:200]} passes "
            f"{self.max_answer_bytes:,} bytes; refused"
        )

    def all(self, endpoint: str, **query: str) -> Iterator[dict]:
        """Every object of ``endpoint`` (``/api/dcim/racks/``), page by page; each page checked to
        be ``{"results": [objects], "next": link or null}``, none read twice."""
        q = urllib.parse.urlencode({"limit": 1000, **query})
        nxt: str | None = f"{endpoint}?{q}"
        seen: set[str] = set()
        while nxt:
            full = self._full(nxt, "a next link")
            if full in seen:
                raise InputError(
                    f"NetBox at {self.url}: page {full[:200]} came back as its own next page; refused"
                )
            seen.add(full)
            page = self.call("GET", full)
            where = f"NetBox at {self.url}: the answer to GET {full[:200]}"
            if not isinstance(page, dict) or not isinstance(page.get("results"), list):
                got = type(page).__name__ if not isinstance(page, dict) else f"keys {sorted(page)[:8]}"
                raise InputError(f"{where} is no list page (expected an object with 'results', got {got})")
            bad = next((o for o in page["results"] if not isinstance(o, dict)), None)
            if bad is not None:
                raise InputError(f"{where}: 'results' holds {type(bad).__name__}, expected objects")
            yield from page["results"]
            nxt = page.get("next")
            if nxt is not None and not isinstance(nxt, str):
                raise InputError(f"{where}: 'next' is {type(nxt).__name__}, expected a link or null")
