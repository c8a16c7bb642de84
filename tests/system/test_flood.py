"""A peer cannot exhaust gpud: frames before login are bounded from their
header, unauthenticated and idle connections are closed, connections are
capped in all and per address, a zlib bomb is refused before it is
inflated, and when descriptors run out gpud says so and gpuctl is still
served (while gpuctl reports a closed connection instead of dying of
SIGPIPE)."""
import os
import resource
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
import zlib

from harness import GPUCTL, MAGIC, T, Chan, Cluster, RawWorker, check, frame, run, wait_for

MIB = 1 << 20


def peak_kib(pid):
    """gpud's peak resident size (VmHWM): a transient allocation counts."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise AssertionError("no VmHWM for pid %d" % pid)


def closed_by_peer(s, timeout):
    """True when gpud closes s within timeout (after any frames it sends)."""
    end = time.time() + timeout
    try:
        while time.time() < end:
            s.settimeout(max(0.05, end - time.time()))
            if not s.recv(65536):
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False
    return False


def connect(port, source="127.0.0.1"):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    return s


def bomb(kind, lease, epoch, raw_len):
    """A blob declaring raw_len zero bytes in a few hundred KB of zlib."""
    c = zlib.compressobj(9)
    z = b"\0" * MIB
    comp = b"".join([c.compress(z) for _ in range(raw_len // MIB)] + [c.flush()])
    head = struct.pack("<4sHH16sQQQQI", b"GPBL", 1, kind, b"graveler".ljust(16, b"\0"),
                       lease, epoch, raw_len, len(comp), zlib.crc32(comp))
    return head + struct.pack("<I", zlib.crc32(head)) + comp


def flood_before_login(cl):
    """The issue's 257 MiB per connection: three peers announce a HELLO of
    1 MiB JSON + 256 MiB and start sending it."""
    before = peak_kib(cl.gpud.pid)
    header = struct.pack(">IBBHII", MAGIC, 1, T["HELLO"], 0, MIB, 256 * MIB)
    socks = [connect(cl.port) for _ in range(3)]
    chans = [Chan(s) for s in socks]
    for s, ch in zip(socks, chans):
        try:
            s.sendall(ch.seal(header))
            for _ in range(48):
                s.sendall(ch.seal(b"\0" * MIB, record=4096))
        except (BrokenPipeError, ConnectionResetError):
            pass
    for s in socks:
        check(closed_by_peer(s, 5), "an oversized frame before login must close the connection")
        s.close()
    grown = peak_kib(cl.gpud.pid) - before
    check(grown < 24 * 1024, "gpud grew by %d KiB on frames before login" % grown)
    check("exceeds 8192" in cl.log_text("gpud"), "the refusal's reason should be logged")
    print("pre-login flood: gpud peak grew by %d KiB" % grown)


def timeouts(cl):
    silent = connect(cl.port)
    hello_only = connect(cl.port)
    name, secret = cl.token()
    ch = Chan(hello_only)
    hello_only.sendall(ch.seal(frame(T["HELLO"], {"proto": 1, "worker": name, "instance": "h", "device": "cpu",
                                                  "workloads": ["graveler"], "cuda": False, "threads": 1})))
    t0 = time.time()
    check(closed_by_peer(silent, 5), "a connection that never logs in must be closed")
    check(closed_by_peer(hello_only, 5), "a connection that stops after HELLO must be closed")
    check(time.time() - t0 < 4, "the login timeout is 1 s")
    check("no login within 1 s" in cl.log_text("gpud"), "the login timeout should be logged")
    # Logged in and silent: closed; logged in with a parked claim: kept.
    # Two processes of one token: two workers (one instance each).
    idle = RawWorker(cl.port, name, secret, instance="idle")
    parked = RawWorker(cl.port, name, secret, instance="parked")
    idle.login()
    parked.login()
    parked.send_msg("CLAIM", {"rate": 0})
    check(idle.closed(6), "an idle authenticated connection must be closed")
    check("idle: no message for 2 s" in cl.log_text("gpud"), "the idle timeout should be logged")
    check(not parked.closed(1), "a parked claim is not idle")
    parked.close()


def zlib_bombs(cl):
    """Two 1 MiB-class zlib bombs took gpud to 2 GiB: now refused from the
    blob header against Graveler's declared bound."""
    ckpt, result = bomb(1, 0, 0, 256 * MIB), bomb(2, 0, 0, 256 * MIB)
    job = cl.submit("graveler", battles=1 << 24, seed=9)
    name, secret = cl.token()
    rw = RawWorker(cl.port, name, secret)
    rw.login()
    before = peak_kib(cl.gpud.pid)
    rw.send_msg("CLAIM", {"rate": 0})
    lease, _ = rw.expect("LEASE")
    lid, ep = lease["lease"], lease["epoch"]

    def stamp(b):
        b = bytearray(b)
        struct.pack_into("<QQ", b, 24, lid, ep)
        struct.pack_into("<I", b, 60, zlib.crc32(bytes(b[:60])))
        return bytes(b)
    # Refused by whichever bound meets it first: the lease's bound on the
    # frame (from its JSON: the connection closes), the lease's bound on a
    # blob's compressed length, or its bound on the decoded length (from
    # the blob's header, before inflating).
    refusals = ("exceeds what its lease can hold", "its lease can take compressed",
                "decoded bytes")
    for what, tname, b in (("checkpoint", "CHECKPOINT", stamp(ckpt)), ("result", "RESULT", stamp(result))):
        msg = {"lease": lid, "epoch": ep, "units_done": 1}
        if tname == "RESULT":
            msg["seconds"] = 1
        rw.send_msg(tname, msg, b)
        err, _ = rw.expect("ERROR")
        check(any(r in err["message"] for r in refusals) and tname.lower() in err["message"].lower(),
              "%s bomb: unclear refusal %s" % (what, err))
        if "exceeds what its lease can hold" in err["message"]:
            check(rw.closed(5), "a frame over its lease's bound closes the connection")
            rw = RawWorker(cl.port, name, secret)
            rw.login()
    grown = peak_kib(cl.gpud.pid) - before
    check(grown < 64 * 1024, "gpud grew by %d KiB on two zlib bombs" % grown)
    rw.close()
    cl.ctl("cancel", str(job))
    print("zlib bombs: gpud peak grew by %d KiB" % grown)


def caps(tmp_cl):
    tmp_cl.gpud_args = ["--max-connections", "5", "--max-connections-per-address", "3",
                        "--login-timeout", "60"]
    tmp_cl.start_gpud()
    held = [connect(tmp_cl.port) for _ in range(3)]
    extra = connect(tmp_cl.port)
    check(closed_by_peer(extra, 2), "a 4th connection from one address must be closed at once")
    held += [connect(tmp_cl.port, "127.0.0.2") for _ in range(2)]
    # Every slot is held by connections not logged in: a 6th sheds the
    # oldest of the address with the most (127.0.0.1's first).
    extra = connect(tmp_cl.port, "127.0.0.2")
    check(closed_by_peer(held[0], 2), "a 6th connection in all sheds the oldest not logged in")
    held[0] = extra
    for s in held:
        check(not closed_by_peer(s, 0.2), "connections within the caps stay open")
    log = tmp_cl.log_text("gpud")
    check("--max-connections-per-address 3" in log and "--max-connections 5" in log,
          "both caps should be logged: " + tmp_cl.tail("gpud", 10))
    for s in held:
        s.close()


def descriptors(tmp_cl):
    """gpud with 40 descriptors and more connections than that: gpud logs
    the shortage, gpuctl status works and shows it."""
    def low_limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (40, 40))
    tmp_cl.gpud_args = ["--login-timeout", "60", "--max-prelogin-per-address", "100"]
    tmp_cl.start_gpud(preexec_fn=low_limit)
    socks = [connect(tmp_cl.port) for _ in range(48)]
    wait_for(lambda: "out of file descriptors on the worker listener" in tmp_cl.log_text("gpud"),
             10, "the descriptor shortage in gpud's log")
    for _ in range(3):
        r = tmp_cl.ctl("status", timeout=20)
        check("warning: out of file descriptors" in r.stdout, "status should say why: %r" % r.stdout)
    check("on the control listener" in tmp_cl.log_text("gpud") and
          "a gpuctl connection was served with the spare descriptor" in tmp_cl.log_text("gpud"),
          "gpuctl should have been served from the spare descriptor")
    for s in socks:
        s.close()
    check(tmp_cl.gpud.poll() is None, "gpud died")


def gpuctl_sigpipe():
    """gpuctl writing to a gpud that closed the connection reports it."""
    d = tempfile.mkdtemp(prefix="gpud-sigpipe-")
    path = os.path.join(d, "fake.sock")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(4)

    def close_each():
        c, _ = srv.accept()
        c.close()
    t = threading.Thread(target=close_each, daemon=True)
    t.start()
    big = os.path.join(d, "big.obf")
    with open(big, "wb") as f:
        f.write(b"x" * (8 * MIB))
    r = subprocess.run([GPUCTL, "--socket", path, "submit", "othello", "--file", big],
                       capture_output=True, text=True, timeout=30)
    srv.close()
    check(r.returncode != -signal.SIGPIPE, "gpuctl died of SIGPIPE")
    check(r.returncode != 0 and "gpud closed the connection" in r.stderr,
          "gpuctl should report the closed connection: %d %r" % (r.returncode, r.stderr))


def test_flood(cl: Cluster):
    cl.gpud_args = ["--login-timeout", "1", "--heartbeat", "1", "--idle-timeout", "2"]
    cl.start_gpud()
    flood_before_login(cl)
    timeouts(cl)
    zlib_bombs(cl)
    check(cl.gpud.poll() is None, "gpud died")
    gpuctl_sigpipe()
    for part in (caps, descriptors):
        other = Cluster("flood-" + part.__name__)
        try:
            part(other)
        except Exception:
            print(other.tail("gpud"))
            raise
        finally:
            other.cleanup()


if __name__ == "__main__":
    run(test_flood)
