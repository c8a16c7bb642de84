"""Every frame bounded before it is buffered (issue 34, items 3-5): small
hostile clients on the project's own harness.

- memory: logged-in connections of one credential send oversized headers,
  a 256 MiB attachment and many 5 MB ones at once, fast and slow; gpud's
  resident memory (VmRSS, sampled throughout) stays under its
  --frame-memory budget plus its own baseline, reads pause and resume,
  and every sender gets its exact refusal.
- padded: a result padded past what its content can compress to, and one
  padded past its lease's bound, are refused before they are stored; the
  job then finishes with the exact answer.
- slots: one credential is capped at --max-connections-per-credential
  while another still logs in; idle connections from many loopback
  addresses fill the pre-login slots, yet a credentialed login and gpuctl
  get in.
"""
import os
import socket
import threading
import time
import zlib

from harness import T, Chan, Cluster, RawWorker, blob, check, frame, run, wait_for

MIB = 1 << 20
BUDGET_MIB = 4


def vm_kib(pid, key="VmRSS"):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise AssertionError("no %s for pid %d" % (key, pid))


def sanitized(pid):
    """Whether gpud runs under a sanitizer, whose allocator keeps freed
    memory (ASan's quarantine): its VmRSS then says nothing of gpud's."""
    with open("/proc/%d/maps" % pid) as f:
        return any(lib in f.read() for lib in ("libasan", "libtsan"))


class Sampler(threading.Thread):
    """gpud's VmRSS every 10 ms until stopped: the largest seen."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.peak, self.stop = pid, 0, threading.Event()

    def run(self):
        while not self.stop.is_set():
            self.peak = max(self.peak, vm_kib(self.pid))
            time.sleep(0.01)


def upload(rw, tname, lease, epoch, data, piece=None, pause=0.0):
    """Send an upload frame; a slow sender sends piece bytes at a time."""
    msg = {"lease": lease, "epoch": epoch, "units_done": 1}
    if tname == "RESULT":
        msg["seconds"] = 1
    f = frame(T[tname], msg, data)
    if not piece:
        rw.send(f)
        return
    for i in range(0, len(f), piece):
        rw.send(f[i:i + piece])
        time.sleep(pause)


def refusal(rw, timeout=60):
    f = rw.recv(timeout)
    check(f is not None and f[0] == "ERROR", "expected an ERROR, got %s" % (f,))
    return f[1]["message"]


def memory(cl):
    cl.gpud_args = ["--frame-memory", str(BUDGET_MIB), "--quarantine-after", "1000",
                    "--heartbeat", "1", "--idle-timeout", "3"]
    cl.start_gpud()
    name, secret = cl.token()
    time.sleep(0.5)
    base = vm_kib(cl.gpud.pid)
    sampler = Sampler(cl.gpud.pid)
    sampler.start()

    # A HEARTBEAT announcing 60 KB of JSON: refused from its header.
    rw = cl.raw_worker(name=name, secret=secret, instance="hb")
    rw.send(frame(T["HEARTBEAT"], {"lease": 1, "epoch": 1, "units_done": 1}, json_len=60000))
    msg = refusal(rw)
    check("HEARTBEAT: JSON header of 60000 bytes exceeds 2048" in msg, "unclear refusal: " + msg)
    check(rw.closed(5), "an oversized HEARTBEAT closes the connection")

    # A RESULT announcing 256 MiB: refused once its JSON is read, its
    # workloads' largest upload being about 5 MB.
    rw = cl.raw_worker(name=name, secret=secret, instance="big")
    msg_json = {"lease": 999999, "epoch": 1, "units_done": 1, "seconds": 1}
    try:
        rw.send(frame(T["RESULT"], msg_json, b"\0" * MIB, bin_len=256 * MIB))
    except (BrokenPipeError, ConnectionResetError):
        pass
    msg = refusal(rw)
    check("RESULT: attachment of 268435456 bytes exceeds its workloads' largest upload" in msg,
          "unclear refusal: " + msg)
    check(rw.closed(5), "an oversized RESULT closes the connection")

    # A RESULT without its blob: refused, the connection closed.
    rw = cl.raw_worker(name=name, secret=secret, instance="empty")
    rw.send_msg("RESULT", {"lease": 1, "epoch": 1, "units_done": 1, "seconds": 1})
    msg = refusal(rw)
    check("unexpected or invalid message (RESULT" in msg, "unclear refusal: " + msg)
    check(rw.closed(5), "a RESULT without its blob closes the connection")

    # A frame that stops halfway holds its bytes no longer than the idle
    # timeout, even while it trickles (a byte a second).
    stall = cl.raw_worker(name=name, secret=secret, instance="stall")
    half = frame(T["HEARTBEAT"], {"lease": 1, "epoch": 1, "units_done": 1})
    stall.send(half[:20])
    t0 = time.time()

    def trickle():
        for b in half[20:-1]:
            try:
                stall.send(bytes([b]))
            except OSError:
                return
            time.sleep(1)
    threading.Thread(target=trickle, daemon=True).start()
    check(stall.closed(10), "a stalled frame closes its connection")
    check(time.time() - t0 < 8, "within the idle timeout (3 s) and a sweep")
    check("stalled: " in cl.log_text("gpud"), "the stall is logged: " + cl.tail("gpud", 5))

    # Eight connections send 5 MB results at once (40 MB in all, ten times
    # the budget), one of them slowly: each streams to a file, reads pause
    # while the budget is spent, and each gets its own refusal (they name
    # a lease nobody granted).
    data = os.urandom(5 * 1000 * 1000)
    senders = [cl.raw_worker(name=name, secret=secret, instance="bulk%d" % i) for i in range(8)]
    answers = [None] * len(senders)

    def send(i):
        rw = senders[i]
        if i == 0:
            upload(rw, "RESULT", 900000 + i, 1, data, piece=256 * 1024, pause=0.02)
        else:
            upload(rw, "RESULT", 900000 + i, 1, data)
        answers[i] = refusal(rw, timeout=120)
    live = cl.raw_worker(name=name, secret=secret, instance="live")
    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(senders))]
    for t in threads:
        t.start()
    # Meanwhile another worker's small messages are answered: a frame's
    # first read always finds room in the budget.
    waits = []
    for _ in range(10):
        t0 = time.time()
        live.send_msg("FETCH", {"hash": os.urandom(32).hex()})
        f = live.recv(10)
        check(f is not None and f[0] == "ERROR", "a FETCH during the flood: %s" % (f,))
        waits.append(time.time() - t0)
        time.sleep(0.05)
    for t in threads:
        t.join(180)
    print("memory: a FETCH during the flood answered in at most %.3f s" % max(waits))
    check(max(waits) < 2, "small messages wait %.2f s while the budget is spent" % max(waits))
    sampler.stop.set()
    sampler.join()
    for i, a in enumerate(answers):
        check(a is not None and "not held" in a, "sender %d: no exact refusal: %s" % (i, a))
    log = cl.log_text("gpud")
    check("reads paused" in log and "--frame-memory" in log,
          "the budget should have paused reads: " + cl.tail("gpud", 20))
    grown = sampler.peak - base
    print("memory: VmRSS %d KiB at rest, peak %d KiB (+%d KiB) with 40 MB in flight, budget %d MiB"
          % (base, sampler.peak, grown, BUDGET_MIB))
    check(grown < (BUDGET_MIB + 6) * 1024 or sanitized(cl.gpud.pid),
          "gpud grew by %d KiB, over its budget of %d MiB" % (grown, BUDGET_MIB))
    check(not [f for f in os.listdir(cl.data) if f.startswith(".upload-")],
          "no upload file is left in the data directory")
    for rw in senders:
        rw.close()

    # A worker that asks and asks (FETCH) and never reads the answers:
    # past 4 MiB of unread replies its frames wait and its reads pause;
    # unread for the idle timeout, it is closed. gpud stays small.
    before = vm_kib(cl.gpud.pid, "VmHWM")
    deaf = cl.raw_worker(name=name, secret=secret, instance="deaf")
    batch = b"".join(frame(T["FETCH"], {"hash": "%064x" % i}) for i in range(2000))
    sent = [0]

    def ask():
        try:
            for _ in range(100):
                deaf.send(batch)
                sent[0] += 2000
        except OSError:
            pass
    t = threading.Thread(target=ask, daemon=True)
    t.start()
    wait_for(lambda: "its replies unread" in cl.log_text("gpud"), 30, "the deaf worker to be closed")
    t.join(15)
    grown = vm_kib(cl.gpud.pid, "VmHWM") - before
    print("memory: a worker that never reads sent %d FETCHes; gpud's peak grew by %d KiB" % (sent[0], grown))
    check(sent[0] < 200000, "gpud stopped reading a worker that does not read its replies")
    check(grown < 16 * 1024 or sanitized(cl.gpud.pid), "gpud grew by %d KiB on unread replies" % grown)
    deaf.close()
    # Still serving, answers exact.
    job = cl.submit("graveler", battles=1 << 22, seed=5)
    cl.start_worker("cpu:1")
    cl.check_reference(job, 120, battles=1 << 22, seed=5)


def padded_blob(lease, epoch, raw, pad):
    """A result blob whose zlib stream inflates to raw exactly, padded
    with pad empty stored blocks (5 bytes each) before its final one."""
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    body = c.compress(raw) + c.flush(zlib.Z_SYNC_FLUSH)
    comp = (b"\x78\x9c" + body + b"\x00\x00\x00\xff\xff" * pad + b"\x01\x00\x00\xff\xff" +
            zlib.adler32(raw).to_bytes(4, "big"))
    check(zlib.decompress(comp) == raw, "the padded stream inflates to its content")
    head = blob(2, "graveler", lease, epoch, raw)[:60]
    head = head[:48] + len(comp).to_bytes(8, "little") + zlib.crc32(comp).to_bytes(4, "little")
    return head + zlib.crc32(head).to_bytes(4, "little") + comp


def padded(cl):
    cl.start_gpud()
    name, secret = cl.token()
    battles = 1 << 24
    job = cl.submit("graveler", battles=battles, seed=11)
    rw = cl.raw_worker(name=name, secret=secret, instance="pad")
    lease, _ = rw.claim_lease()
    lid, ep = lease["lease"], lease["epoch"]
    raw = os.urandom(2000)
    # 2000 bytes padded to 100 KB: within the lease's bound, but longer
    # than 2000 bytes can compress to.
    upload(rw, "RESULT", lid, ep, padded_blob(lid, ep, raw, 20000))
    msg = refusal(rw)
    check("longer than 2000 bytes of data can compress to (padded)" in msg, "unclear refusal: " + msg)
    # The case, padded to 64 MiB: past the lease's bound, refused
    # from the frame's JSON before its attachment is read.
    big = padded_blob(lid, ep, raw, (64 * MIB) // 5)
    try:
        rw.send(frame(T["RESULT"], {"lease": lid, "epoch": ep, "units_done": 1, "seconds": 1},
                      big[:MIB], bin_len=len(big)))
    except (BrokenPipeError, ConnectionResetError):
        pass
    msg = refusal(rw)
    check("exceeds what its lease can hold" in msg, "unclear refusal: " + msg)
    check(rw.closed(5), "a frame past its lease's bound closes the connection")
    # From a new connection (the worker logged in again), one padded to
    # 1 MB (under Graveler's largest upload, over this lease's bound)
    # meets the upload's own bound before it is read back or stored.
    rw = cl.raw_worker(name=name, secret=secret, instance="pad")
    upload(rw, "RESULT", lid, ep, padded_blob(lid, ep, raw, MIB // 5))
    msg = refusal(rw, timeout=60)
    check("its lease can take compressed (padded?)" in msg, "unclear refusal: " + msg)
    stored = cl.db_rows("SELECT count(*) FROM leases WHERE result IS NOT NULL")
    check(stored[0][0] == 0, "no padded result is stored: %s" % stored)
    log = cl.log_text("gpud")
    check(log.count("result refused") >= 2, "the refusals are logged: " + cl.tail("gpud", 20))
    rw.send_msg("RELEASE", {"lease": lid, "epoch": ep})
    rw.expect("ACK")
    rw.close()
    cl.start_worker("cpu:1")
    cl.check_reference(job, 300, battles=battles, seed=11)


def connect(port, source):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    return s


def slots(cl):
    cl.gpud_args = ["--max-connections", "64", "--max-prelogin", "16", "--max-prelogin-per-address", "4",
                    "--max-connections-per-credential", "4", "--login-timeout", "60"]
    cl.start_gpud()
    name, secret = cl.token()
    _, other, other_secret = cl.add_token("other")
    # One credential holds its 4 connections; a 5th is refused with a
    # reason, a new login of one of its workers replaces its old one, and
    # another credential still logs in.
    held = [cl.raw_worker(name=name, secret=secret, instance="c%d" % i) for i in range(4)]
    extra = RawWorker(cl.port, name, secret, instance="c4")
    try:
        extra.login()
        logged_in = True
    except Exception:  # the ERROR instead of WELCOME
        logged_in = False
    check(not logged_in, "a 5th connection of one credential logged in")
    check(extra.closed(5), "the 5th connection is closed")
    wait_for(lambda: "--max-connections-per-credential 4" in cl.log_text("gpud"), 5,
             "the credential cap to be logged")
    again = cl.raw_worker(name=name, secret=secret, instance="c0")
    check(held[0].closed(5), "a worker's new login replaces its old connection")
    held[0] = again
    # Another credential still logs in (raw_worker waits for WELCOME).
    ok = cl.raw_worker(name=other, secret=other_secret, instance="o0")
    # A 5th connection not logged in from one address is refused.
    four = [connect(cl.port, "127.0.2.1") for _ in range(4)]
    fifth = connect(cl.port, "127.0.2.1")
    wait_for(lambda: closed(fifth, 0.2), 5, "the 5th connection from one address to close")
    check(not any(closed(s, 0) for s in four), "4 connections from one address stay open")
    check("--max-prelogin-per-address 4" in cl.log_text("gpud"), "the per-address refusal is logged")
    for s in four + [fifth]:
        s.close()
    # 16 loopback addresses open 4 idle connections each (64 > 16
    # pre-login slots): the newest shed the oldest.
    flood = []
    for a in range(16):
        for _ in range(4):
            flood.append(connect(cl.port, "127.0.1.%d" % (a + 1)))
    wait_for(lambda: "--max-prelogin 16" in cl.log_text("gpud"), 5, "the shedding to be logged")
    # A credentialed login and gpuctl still get in, again and again.
    for i in range(5):
        w = cl.raw_worker(name=other, secret=other_secret, instance="o%d" % (i + 1))
        w.close()
        check(cl.ctl_ok("status"), "gpuctl is served while the pre-login slots are full")
        for _ in range(4):
            flood.append(connect(cl.port, "127.0.1.%d" % (i + 1)))
    time.sleep(0.3)
    open_flood = sum(1 for s in flood if not closed(s, 0))
    check(open_flood <= 16, "at most 16 connections wait for a login: %d" % open_flood)
    for s in flood:
        s.close()
    for w in held + [ok]:
        w.close()


def closed(s, timeout):
    """True when gpud closed s (waiting up to timeout s)."""
    s.settimeout(timeout if timeout > 0 else 0.01)
    try:
        return s.recv(1) == b""
    except socket.timeout:
        return False
    except OSError:
        return True


def test_frames(cl):
    memory(cl)
    cl.stop_gpud()
    for name, fn in (("padded", padded), ("slots", slots)):
        sub = Cluster(name)
        try:
            fn(sub)
        except Exception:
            print(sub.tail("gpud"))
            sub.cleanup(keep=True)
            print("logs kept in", sub.dir)
            raise
        sub.cleanup(keep=False)


if __name__ == "__main__":
    run(test_frames)
