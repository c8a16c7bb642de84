"""Slow clients cannot make the page unreachable (issue 34, item 9: 0 of 4
requests answered in 24 s while a slow-drip client ran). Drippers send a
request's first line, then one header byte a second, and reconnect at once
when gpud closes them: 24 from the ordinary client's own address
(127.0.0.1), 32 from 127.0.0.2, and 10 from each of 127.0.0.3..14 (120),
far past libmicrohttpd's caps. While they run, 4 of 4 ordinary requests
(/api/status with a page link's key) are answered, each within 2 s. A lone
dripper with the page to itself is closed by the request deadline
(HTTP_REQUEST_S, 5 s), not left open. /metrics counts both kinds of
closing (gpud_http_closed_total{why="deadline"|"room"})."""
import re
import selectors
import socket
import threading
import time

from harness import Cluster, check, http_get_key, page_link, run

HEAD = b"GET /api/status HTTP/1.1\r\nHost: x\r\nX-Drip: "


class Drippers:
    """One thread driving many dripping connections (one socket each)."""

    def __init__(self, addr, sources):
        host, port = addr.rsplit(":", 1)
        self.target = (host, int(port))
        self.sources = list(sources)
        self.socks = [None] * len(self.sources)
        self.opened = 0
        self.closed_by_gpud = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _connect(self, i):
        s = socket.socket()
        s.settimeout(0.5)
        try:
            s.bind((self.sources[i], 0))
            s.connect(self.target)
            s.sendall(HEAD)
            s.setblocking(False)
        except OSError:
            s.close()
            return
        self.socks[i] = s
        self.opened += 1

    def _drop(self, i, by_gpud):
        self.socks[i].close()
        self.socks[i] = None
        self.closed_by_gpud += by_gpud

    def _run(self):
        next_drip = time.time()
        while not self.stop.is_set():
            for i, s in enumerate(self.socks):
                if s is None:
                    self._connect(i)
            sel = selectors.DefaultSelector()
            for i, s in enumerate(self.socks):
                if s is not None:
                    sel.register(s, selectors.EVENT_READ, i)
            for key, _ in sel.select(timeout=0.05):
                i = key.data
                try:
                    data = self.socks[i].recv(4096)
                except OSError:
                    data = b""
                if not data:
                    self._drop(i, 1)
            sel.close()
            if time.time() >= next_drip:
                next_drip += 1.0
                for i, s in enumerate(self.socks):
                    if s is not None:
                        try:
                            s.send(b"a")
                        except OSError:
                            self._drop(i, 1)
        for i, s in enumerate(self.socks):
            if s is not None:
                self._drop(i, 0)

    def open_now(self):
        return sum(s is not None for s in self.socks)


def test_http_slow(cl: Cluster):
    cl.start_gpud()
    cl.submit("graveler", battles=1 << 20, seed=1)
    _, key = page_link(cl)
    code, _, _ = http_get_key(cl, "/api/status", key)
    check(code == 200, "before the attack: %d" % code)

    # A lone dripper: closed by the deadline, not left to drip forever.
    lone = Drippers(cl.http, ["127.0.0.40"])
    lone.thread.start()
    t0 = time.time()
    while lone.closed_by_gpud == 0 and time.time() - t0 < 15:
        time.sleep(0.1)
    lone.stop.set()
    lone.thread.join(10)
    took = time.time() - t0
    check(lone.closed_by_gpud >= 1 and 4.0 <= took <= 8.0,
          "a lone dripper closed after %.1f s (deadline 5 s)" % took)

    sources = ["127.0.0.1"] * 24 + ["127.0.0.2"] * 32 + \
        ["127.0.0.%d" % a for a in range(3, 15) for _ in range(10)]
    attack = Drippers(cl.http, sources)
    attack.thread.start()
    try:
        time.sleep(3)
        held = attack.open_now()
        print("drippers: %d connections open, %d opened" % (held, attack.opened))
        check(held >= 60, "the attack holds connections: %d open" % held)
        answered = []
        for n in range(4):
            t = time.time()
            try:
                code, _, body = http_get_key(cl, "/api/status", key, timeout=2)
            except OSError as e:
                code, body = None, str(e).encode()
            took = time.time() - t
            print("request %d: %s in %.2f s (%d drippers open)" % (n + 1, code, took, attack.open_now()))
            if code == 200 and took < 2.0 and b'"jobs"' in body:
                answered.append(took)
            time.sleep(2.5)
        check(len(answered) == 4, "%d of 4 ordinary requests answered within 2 s" % len(answered))
        check(attack.closed_by_gpud > 0, "gpud closed drippers (deadline or room): %d" % attack.closed_by_gpud)
    finally:
        attack.stop.set()
        attack.thread.join(10)
    check(cl.gpud.poll() is None, "gpud runs on")
    code, _, body = http_get_key(cl, "/metrics", key)
    closed = dict(re.findall(r'^gpud_http_closed_total\{why="(\w+)"\} (\d+)$', body.decode(), re.M))
    check(code == 200 and int(closed.get("deadline", 0)) >= 1 and int(closed.get("room", 0)) >= 1,
          "the closings counted: %s" % closed)


if __name__ == "__main__":
    run(test_http_slow)
