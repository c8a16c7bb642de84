"""System-test harness: real gpud / gpuworker / gpuctl processes on 127.0.0.1.

Every test gets a fresh temporary data directory, lets gpud pick a free port
(--listen 127.0.0.1:0, read back from DATA/gpud.addr), and kills every process
it started when it ends, pass or fail. Binaries come from $GPUD_BUILD (the
meson build directory).
"""
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import struct
import subprocess
import sys
import tempfile
import time
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import gpudchan  # noqa: E402

BUILD = os.environ.get("GPUD_BUILD", os.path.join(os.path.dirname(__file__), "..", "..", "build"))
GPUD = os.path.join(BUILD, "daemon", "gpud")
WORKER = os.path.join(BUILD, "worker", "gpuworker")
GPUCTL = os.path.join(BUILD, "tools", "gpuctl")
GPURUN = os.path.join(BUILD, "tools", "gpurun")

MAGIC = 0x47505544
T = {"HELLO": 1, "WELCOME": 4, "CLAIM": 5, "LEASE": 6,
     "NOLEASE": 7, "HEARTBEAT": 8, "HB_ACK": 9, "CHECKPOINT": 10, "RESULT": 11,
     "ACK": 12, "RELEASE": 13, "ERROR": 14, "CTL_REQ": 15, "CTL_REPLY": 16,
     "FETCH": 17, "BLOB": 18, "CTL_HELLO": 19, "WITHDRAW": 20}
TNAME = {v: k for k, v in T.items()}


class TestFailure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise TestFailure(msg)


def wait_for(pred, timeout, what, interval=0.1):
    end = time.time() + timeout
    while time.time() < end:
        v = pred()
        if v:
            return v
        time.sleep(interval)
    raise TestFailure("timed out after %.0fs waiting for %s" % (timeout, what))


def no_config(args):
    """A machine's /etc/gpud/*.conf must not change a test: no file unless
    the test names one."""
    return [] if "--config" in args else ["--config", os.devnull]


class Cluster:
    """A gpud with its data directory, and the workers attached to it."""

    def __init__(self, name, gpud_args=()):
        self.dir = tempfile.mkdtemp(prefix="gpud-%s-" % name)
        self.data = os.path.join(self.dir, "data")
        self.sock = os.path.join(self.dir, "gpud.sock")
        self.gpud_args = list(gpud_args)
        self.gpud = None
        self.port = 0
        self.http = None  # ADDR:PORT of gpud's --http, from DATA/gpud.http
        self.workers = []
        self.logs = []

    # -- processes --
    def _log(self, name):
        path = os.path.join(self.dir, "%s-%d.log" % (name, len(self.logs)))
        self.logs.append(path)
        return open(path, "wb")

    def start_gpud(self, extra=(), env=None, preexec_fn=None, host="127.0.0.1", prefix=()):
        """prefix: a command gpud runs under (ip netns exec NS)."""
        listen = "%s:%d" % (host, self.port)
        addr_file = os.path.join(self.data, "gpud.addr")
        if os.path.exists(addr_file):
            os.unlink(addr_file)
        # The page and /metrics on a port of their own (DATA/gpud.http):
        # tests running side by side never share 7780.
        args = list(prefix) + [GPUD, "--data", self.data, "--listen", listen, "--socket", self.sock,
                               "--log-level", "debug", "--http", "127.0.0.1:0"] + self.gpud_args + list(extra)
        args += no_config(args)
        full_env = dict(os.environ, **(env or {}))
        self.gpud = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=self._log("gpud"), env=full_env,
                                     preexec_fn=preexec_fn)
        wait_for(lambda: os.path.exists(addr_file) or self.gpud.poll() is not None, 20, "gpud to listen")
        check(self.gpud.poll() is None, "gpud exited at start: " + self.tail("gpud"))
        self.port = int(open(addr_file).read().strip().rsplit(":", 1)[1])
        wait_for(lambda: self.ctl_ok("status"), 20, "gpud control socket")
        http_file = os.path.join(self.data, "gpud.http")
        self.http = open(http_file).read().strip() if os.path.exists(http_file) else None
        return self.gpud

    def start_gpud_leases(self, seconds, heartbeat, lease_timeout=None, extra=()):
        """Start gpud with leases of about `seconds` of one CPU's Graveler
        work (lease_units_for), heartbeats every heartbeat s, lease_timeout
        if given and the extra arguments; the units of a lease."""
        units = lease_units_for(seconds)
        self.gpud_args = ["--lease-units", str(units), "--heartbeat", heartbeat]
        if lease_timeout is not None:
            self.gpud_args += ["--lease-timeout", lease_timeout]
        self.gpud_args += list(extra)
        self.start_gpud()
        return units

    def http_get(self, path, timeout=10):
        """GET http://ADDR/path from gpud's --http: (status, headers, body bytes)."""
        import urllib.error
        import urllib.request
        check(self.http, "gpud serves no --http")
        try:
            with urllib.request.urlopen("http://%s%s" % (self.http, path), timeout=timeout) as r:
                return r.status, dict(r.headers), r.read()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read()

    def kill_gpud(self):
        if self.gpud and self.gpud.poll() is None:
            self.gpud.send_signal(signal.SIGKILL)
            self.gpud.wait(10)

    def stop_gpud(self):
        if self.gpud and self.gpud.poll() is None:
            self.gpud.send_signal(signal.SIGTERM)
            try:
                return self.gpud.wait(20)
            except subprocess.TimeoutExpired:
                self.gpud.kill()
                raise TestFailure("gpud did not stop on SIGTERM")
        return self.gpud.returncode if self.gpud else None

    def start_worker(self, device="cpu:1", extra=(), token_file=None, host="127.0.0.1", prefix=(), port=None):
        args = list(prefix) + [WORKER, "--connect", "%s:%d" % (host, port or self.port),
                "--token-file", token_file or os.path.join(self.data, "local-worker.token"),
                "--device", device, "--log-level", "debug"] + list(extra)
        args += no_config(args)
        p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=self._log("worker"))
        self.workers.append(p)
        return p

    def cleanup(self, keep=False):
        for p in self.workers + ([self.gpud] if self.gpud else []):
            if p.poll() is None:
                p.kill()
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    pass
        if not keep:
            shutil.rmtree(self.dir, ignore_errors=True)

    def tail(self, prefix, lines=40):
        out = []
        for path in self.logs:
            if os.path.basename(path).startswith(prefix):
                with open(path, "rb") as f:
                    out.append("== %s ==\n" % path + b"\n".join(f.read().splitlines()[-lines:]).decode(errors="replace"))
        return "\n".join(out)

    def log_text(self, prefix):
        text = ""
        for path in self.logs:
            if os.path.basename(path).startswith(prefix):
                with open(path, "rb") as f:
                    text += f.read().decode(errors="replace")
        return text

    def db_rows(self, sql, *args):
        """The rows of a read-only query of gpud's database."""
        db = sqlite3.connect("file:%s/gpud.db?mode=ro" % self.data, uri=True, timeout=10)
        try:
            return db.execute(sql, args).fetchall()
        finally:
            db.close()

    # -- gpuctl --
    def ctl(self, *args, check_rc=True, timeout=60):
        r = subprocess.run([GPUCTL, "--socket", self.sock] + list(args), capture_output=True,
                           text=True, timeout=timeout)
        if check_rc and r.returncode != 0:
            raise TestFailure("gpuctl %s failed (%d): %s%s" % (" ".join(args), r.returncode, r.stdout, r.stderr))
        return r

    def ctl_ok(self, *args):
        try:
            return subprocess.run([GPUCTL, "--socket", self.sock] + list(args), capture_output=True,
                                  timeout=10).returncode == 0
        except subprocess.TimeoutExpired:
            return False

    def submit(self, workload, **kw):
        args = ["submit", workload]
        for k, v in kw.items():
            args += ["--" + k.replace("_", "-"), str(v)]
        return int(self.ctl(*args).stdout.strip())

    def status(self, job):
        return json.loads(self.ctl("status", str(job), "--json").stdout)[0]

    def result(self, job):
        return json.loads(self.ctl("result", str(job), "--json").stdout)

    def wait_job(self, job, timeout=120):
        r = self.ctl("wait", str(job), "--timeout", str(timeout), check_rc=False, timeout=timeout + 30)
        if r.returncode != 0:
            raise TestFailure("job %d did not verify: %s\n%s\n%s" % (job, r.stderr, self.tail("gpud"), self.tail("worker")))

    def regrant(self, job, epoch, timeout, what, lease=1):
        """Wait until gpud grants lease of job again at epoch; the units
        it resumes from."""
        pat = r"lease grant job=%d lease=%d epoch=%d .*resume_from=(\d+)" % (job, lease, epoch)
        m = wait_for(lambda: re.search(pat, self.log_text("gpud")), timeout, what)
        return int(m.group(1))

    def check_reference(self, job, timeout, msg="answer differs from the reference", **kw):
        """Wait for the Graveler job, then check that its answer is the one
        gpurun computes for kw (battles, seed) in one process."""
        self.wait_job(job, timeout=timeout)
        check(answer_core(self.result(job)["answer"]) == reference_answer("graveler", **kw), msg)

    def raw_worker(self, cls=None, name=None, secret=None, **kw):
        """A RawWorker (or cls) logged in to gpud, with the local token
        unless name and secret (the credential's 32-byte key) are given."""
        if name is None:
            name, secret = self.token()
        w = (cls or RawWorker)(self.port, name, secret, **kw)
        w.login()
        return w

    def add_token(self, name, role="worker"):
        """A new credential (gpuctl token add) in a file of its own:
        (file, name, secret: the 32-byte seed of its Ed25519 key)."""
        text = self.ctl("token", "add", name, "--role", role).stdout
        path = os.path.join(self.dir, name + ".token")
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o600)
        n, secret = credential_token(text)
        return path, n, secret

    def token(self):
        return credential_token(open(os.path.join(self.data, "local-worker.token")).read())

    def gpud_key(self):
        """gpud's public key, as the local worker's credential pins it."""
        return credential_field(open(os.path.join(self.data, "local-worker.token")).read(), "gpud-key")


# Per workload, the answer's fields that must not depend on how the job was
# leased, where it ran or how long it took (no lease counts, blob hashes,
# timings). None: every field but "leases".
SCIENCE = {
    "graveler": None,
    "officers": ["n", "fnv", "counts", "first", "max", "rares", "zeros"],
    "othello": ["positions", "hist", "mismatches"],
    "sudoku": ["gangsters", "sum", "total"],
}


def answer_core(answer, workload="graveler"):
    """The answer without bookkeeping that depends on how it was leased."""
    keys = SCIENCE.get(workload)
    if keys is None:
        return {k: v for k, v in answer.items() if k != "leases"}
    return {k: answer.get(k) for k in keys}


def reference_answer(workload, **kw):
    """The answer computed in one process through the workload interface
    (without lease bookkeeping; compare with answer_core(...))."""
    args = [GPURUN, workload]
    for k, v in kw.items():
        args += ["--" + k.replace("_", "-"), str(v)]
    r = subprocess.run(args + ["--json"], capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise TestFailure("gpurun failed: " + r.stderr)
    return answer_core(json.loads(r.stdout)["answer"], workload)


def credential_field(text, key):
    for line in text.splitlines():
        k, _, v = line.partition("=")
        if k.strip() == key:
            return bytes.fromhex(v.strip()) if key in ("gpud-key", "key") else v.strip()
    raise TestFailure("no %s in the credential" % key)


def credential_token(text):
    """(name, secret) of a credential file: its name and its key (the
    32-byte seed of its Ed25519 key pair)."""
    return credential_field(text, "name"), credential_field(text, "key")


# -- a raw protocol client, for fault tests --

def frame(ftype, msg, binary=b"", version=1, magic=MAGIC, flags=0, json_len=None, bin_len=None):
    body = json.dumps(msg).encode() if not isinstance(msg, bytes) else msg
    jl = len(body) if json_len is None else json_len
    bl = len(binary) if bin_len is None else bin_len
    return struct.pack(">IBBHII", magic, version, ftype, flags, jl, bl) + body + binary


def blob(kind, workload, lease, epoch, raw):
    comp = zlib.compress(raw, 6)
    head = struct.pack("<4sHH16sQQQQI", b"GPBL", 1, kind, workload.encode().ljust(16, b"\0"),
                       lease, epoch, len(raw), len(comp), zlib.crc32(comp))
    return head + struct.pack("<I", zlib.crc32(head)) + comp


def recv_exact(s, n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed in the handshake")
        data += chunk
    return data


def Chan(s, pin=None, key=None, name="gpud-client"):
    """The TLS 1.3 handshake on socket s (gpudchan.py), showing the
    credential key's certificate when key (a 32-byte seed) is given."""
    ch = gpudchan.Chan(pin, key, name)
    s.sendall(ch.start())
    while not ch.done:
        data = s.recv(65536)
        if not data:
            raise ConnectionError("closed in the handshake")
        out = ch.feed(data)
        if out:
            s.sendall(out)
    return ch


class RawWorker:
    """Speaks the worker protocol by hand (HELLO, WELCOME) inside TLS with
    the credential's key. A worker is one process: (token name, instance);
    two RawWorkers of one token with the same instance are one worker (the
    newer login replaces the older connection), with different instances
    two."""

    def __init__(self, port, name, secret, workloads=("graveler",), pin=None, instance="raw"):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.chan = Chan(self.s, pin, secret, name)
        self.buf = b""
        self.name, self.secret, self.workloads = name, secret, list(workloads)
        self.instance = instance

    def send(self, data):
        self.s.sendall(self.chan.seal(data))

    def send_msg(self, tname, msg, binary=b""):
        self.send(frame(T[tname], msg, binary))

    def recv(self, timeout=10):
        """Next frame as (type name, json, bin); None when the peer closed."""
        f = self.recv_raw(timeout)
        if f is None:
            return None
        _, _, ftype, _, jl, _ = struct.unpack(">IBBHII", f[:16])
        return TNAME.get(ftype, str(ftype)), json.loads(f[16:16 + jl]), f[16 + jl:]

    def recv_raw(self, timeout=10):
        """The next frame's bytes, exactly as gpud sent them; None when the
        peer closed."""
        self.s.settimeout(timeout)
        while True:
            if len(self.buf) >= 16:
                _, _, _, _, jl, bl = struct.unpack(">IBBHII", self.buf[:16])
                if len(self.buf) >= 16 + jl + bl:
                    f, self.buf = self.buf[:16 + jl + bl], self.buf[16 + jl + bl:]
                    return f
            try:
                chunk = self.s.recv(65536)
            except ConnectionResetError:
                return None
            if not chunk:
                return None
            try:
                self.buf += self.chan.open(chunk)
            except gpudchan.ChannelError:
                return None  # gpud's alert: the connection is dead

    def expect(self, tname, timeout=10):
        f = self.recv(timeout)
        check(f is not None, "connection closed while waiting for %s" % tname)
        check(f[0] == tname, "expected %s, got %s %s" % (tname, f[0], f[1]))
        return f[1], f[2]

    def claim_lease(self, timeout=10):
        """CLAIM (it carries no field) and the LEASE that answers it: the
        message and its binary part (the checkpoint to resume from)."""
        self.send_msg("CLAIM", {})
        return self.expect("LEASE", timeout)

    def login(self):
        self.send_msg("HELLO", {"proto": 1, "worker": self.name, "instance": self.instance,
                                "device": "cpu", "workloads": self.workloads, "cuda": False,
                                "threads": 1})
        # gpud knows the credential by the key the TLS handshake proved.
        return self.expect("WELCOME")[0]

    def closed(self, timeout=5):
        """True when gpud closes the connection (after any frames it sends)."""
        end = time.time() + timeout
        while time.time() < end:
            try:
                f = self.recv(max(0.1, end - time.time()))
            except socket.timeout:
                return False
            if f is None:
                return True
        return False

    def close(self):
        self.s.close()


def run(test_fn, missing=None):
    """Run one test function with a cluster; exit 0/1 for meson. missing,
    when given, says why the test cannot run here (or None): then it is
    skipped (exit 77, meson's SKIP) before any cluster starts."""
    name = test_fn.__name__
    why = missing() if missing else None
    if why:
        print("SKIP %s: %s" % (name, why))
        sys.exit(77)
    cl = Cluster(name)
    keep = os.environ.get("GPUD_KEEP") == "1"
    t0 = time.time()
    try:
        test_fn(cl)
    except Exception as e:  # report, keep the logs, fail
        print("FAIL %s: %s" % (name, e))
        print(cl.tail("gpud"))
        print(cl.tail("worker"))
        cl.cleanup(keep=True)
        print("logs kept in", cl.dir)
        sys.exit(1)
    cl.cleanup(keep=keep)
    print("PASS %s (%.1fs)" % (name, time.time() - t0))
    sys.exit(0)


_RATE = None


def cpu_rate():
    """Battles per second of one CPU thread here (measured once), so tests
    size their leases in seconds rather than in battles."""
    global _RATE
    if _RATE is None:
        n = 1 << 24
        t0 = time.time()
        subprocess.run([GPURUN, "graveler", "--battles", str(n), "--device", "cpu:1", "--json"],
                       check=True, capture_output=True, timeout=600)
        _RATE = n / max(time.time() - t0, 1e-3)
    return _RATE


def lease_units_for(seconds):
    """A lease size (power of two, >= 2^20) that takes about `seconds` on one thread."""
    want = cpu_rate() * seconds
    units = 1 << 20
    while units * 2 <= want:
        units *= 2
    return units


def page_link(cl, *args):
    """`gpuctl page-link --json` on cl's gpud (issue 34): (url, key)."""
    import json
    out = json.loads(cl.ctl("page-link", "--json", *args).stdout)
    return out["url"], out["key"]


def http_get_key(cl, path, key, timeout=10, headers=None):
    """GET http://ADDR/path from gpud's --http with `Authorization: Bearer
    key` (none when key is None): (status, headers, body bytes)."""
    import urllib.error
    import urllib.request
    check(cl.http, "gpud serves no --http")
    req = urllib.request.Request("http://%s%s" % (cl.http, path), headers=dict(headers or {}))
    if key is not None:
        req.add_header("Authorization", "Bearer " + key)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


class Chromium:
    """Headless Chromium driven over the DevTools protocol on a pipe
    (--remote-debugging-pipe: fd 3 in, fd 4 out, NUL-ended JSON), so that
    a page can be loaded with its scripts disabled (what the server sent,
    as a person sees it before any script runs), its DOM read, an
    expression evaluated and a screenshot taken. Use as a context manager."""

    def __init__(self, width=1400, height=1000):
        import tempfile
        self.profile = tempfile.mkdtemp(prefix="gpud-chromium-")
        to_child_r, self._w = os.pipe()
        self._r, from_child_w = os.pipe()

        def fds():
            import fcntl
            # Above 4 first: a pipe's end may itself be 3 or 4.
            a = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)
            b = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)
        self.proc = subprocess.Popen(
            ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--no-first-run", "--hide-scrollbars", "--user-data-dir=" + self.profile,
             "--remote-debugging-pipe", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=fds, close_fds=False)
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._id = 0
        self._events = []
        self.width, self.height = width, height
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        try:
            self.call("Browser.close", timeout=10)
        except Exception:
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        for fd in (self._r, self._w):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read(self, deadline):
        import json
        import select
        while b"\0" not in self._buf:
            left = deadline - time.time()
            check(left > 0, "chromium did not answer in time")
            ready, _, _ = select.select([self._r], [], [], left)
            if ready:
                chunk = os.read(self._r, 1 << 20)
                check(chunk, "chromium exited")
                self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, session=None, timeout=60, **params):
        """One command; its result (events seen meanwhile are dropped
        unless wait_event asked for them)."""
        import json
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        deadline = time.time() + timeout
        while True:
            m = self._read(deadline)
            if m.get("id") == self._id:
                check("error" not in m, "chromium %s: %s" % (method, m.get("error")))
                return m.get("result", {})
            self._events.append(m)

    def load(self, url, scripts=True, timeout=60):
        """Open url in the page (scripts disabled when asked) and wait for
        its load event."""
        s = self.session
        self._events = []
        self.call("Page.enable", session=s)
        self.call("Emulation.setScriptExecutionDisabled", session=s, value=not scripts)
        self.call("Emulation.setDeviceMetricsOverride", session=s, width=self.width, height=self.height,
                  deviceScaleFactor=1, mobile=False)
        self.call("Page.navigate", session=s, url=url)
        deadline = time.time() + timeout
        while not any(e.get("method") == "Page.loadEventFired" for e in self._events):
            self._events.append(self._read(deadline))
        self._events = []

    def html(self):
        """The document as it is now (DOM.getOuterHTML: runs no script)."""
        root = self.call("DOM.getDocument", session=self.session, depth=-1)["root"]
        return self.call("DOM.getOuterHTML", session=self.session, nodeId=root["nodeId"])["outerHTML"]

    def evaluate(self, expression):
        """expression's value, by value (DevTools' own evaluation: it runs
        when the page's scripts are disabled)."""
        r = self.call("Runtime.evaluate", session=self.session, expression=expression, returnByValue=True)
        check("exceptionDetails" not in r, "evaluate %s: %s" % (expression, r.get("exceptionDetails")))
        return r["result"].get("value")

    def screenshot(self, path, full=True):
        import base64
        params = {"format": "png"}
        if full:
            size = self.evaluate("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
            params["clip"] = {"x": 0, "y": 0, "width": size[0], "height": size[1], "scale": 1}
            params["captureBeyondViewport"] = True
        data = self.call("Page.captureScreenshot", session=self.session, **params)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
