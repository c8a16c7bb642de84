"""Malformed and oversized frames (sent inside the secure channel, so the
frame checks behind it are what is tried) and a peer that skips the channel
close only the offending connection, with a logged reason; gpud keeps
serving and a job still completes exactly."""
import socket
import struct

from harness import MAGIC, Chan, Cluster, RawWorker, T, check, frame, run


def raw(cl):
    s = socket.create_connection(("127.0.0.1", cl.port), timeout=5)
    return s, Chan(s)


def closed_by_peer(s, timeout=5):
    s.settimeout(timeout)
    try:
        while True:
            d = s.recv(65536)
            if not d:
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def test_bad_frames(cl: Cluster):
    cl.gpud_args = ["--lease-units", str(1 << 20)]
    cl.start_gpud()
    cases = {
        "bad magic": frame(T["HELLO"], {"proto": 1}, magic=0x12345678),
        "bad version": frame(T["HELLO"], {"proto": 1}, version=9),
        "unknown type": frame(99, {"x": 1}),
        "nonzero flags": frame(T["HELLO"], {"proto": 1}, flags=1),
        # Announces 4 GiB of payload: refused from the header alone.
        "oversized binary": struct.pack(">IBBHII", MAGIC, 1, T["RESULT"], 0, 2, 0xFFFFFFFF) + b"{}",
        "oversized json": struct.pack(">IBBHII", MAGIC, 1, T["HELLO"], 0, 0x7FFFFFFF, 0),
        "json not an object": frame(T["HELLO"], b"[1,2,3]"),
        "invalid json": frame(T["HELLO"], b"{not json"),
        "zero-length json": struct.pack(">IBBHII", MAGIC, 1, T["HELLO"], 0, 0, 0),
        "claim before login": frame(T["CLAIM"], {"rate": 0}),
        "hello with bad fields": frame(T["HELLO"], {"proto": 1, "worker": "../../etc", "device": "cpu", "workloads": []}),
        "garbage": bytes(range(256)) * 4,
    }
    for what, data in cases.items():
        s, ch = raw(cl)
        s.sendall(ch.seal(data))
        check(closed_by_peer(s), "%s: gpud did not close the connection" % what)
        s.close()
    # A frame in plain text, without the channel's handshake.
    s = socket.create_connection(("127.0.0.1", cl.port), timeout=5)
    s.sendall(frame(T["HELLO"], {"proto": 1, "worker": "w", "instance": "i", "device": "cpu",
                                 "workloads": []}) * 4)
    check(closed_by_peer(s), "a plain-text frame: gpud did not close the connection")
    s.close()
    check("TLS: not TLS" in cl.log_text("gpud"),
          "a peer without the channel should be logged as such")
    # A bad MAC is refused.
    name, secret = cl.token()
    rw = RawWorker(cl.port, name, b"\x00" * 32)
    try:
        rw.login()
        check(False, "login with a wrong token succeeded")
    except Exception:
        pass
    rw.close()
    # An authenticated worker that then sends junk is cut off too.
    rw = RawWorker(cl.port, name, secret)
    rw.login()
    rw.send(frame(T["HEARTBEAT"], {"lease": "x", "epoch": -1}))
    check(rw.closed(), "invalid heartbeat fields should close the connection")
    log = cl.log_text("gpud")
    check("bad frame" in log, "reasons should be logged")
    check(cl.gpud.poll() is None, "gpud died")
    # Still serving: a real job completes exactly.
    job = cl.submit("graveler", battles=3 << 20, seed=3)
    cl.start_worker("cpu:1")
    cl.check_reference(job, 120, battles=3 << 20, seed=3, msg="answer differs")


if __name__ == "__main__":
    run(test_bad_frames)
