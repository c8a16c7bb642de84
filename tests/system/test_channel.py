"""TLS 1.3 on every TCP connection (issues 21, 34).

A proxy between the worker and gpud records the traffic and flips one byte
in the middle of a TLS record after the handshake, one connection at a
time: in an early worker message and in a checkpoint upload (worker to
gpud), in an early and a later reply (gpud to worker), then in a result
upload. Each time the connection drops with a logged reason, nothing of the
altered record is acted on, the worker reconnects, and the job still ends
with the exact answer. No message field appears in plain text anywhere in
the recording. A second gpud, with a key of its own, is refused by a worker
whose credential pins the first."""
import socket
import struct
import threading

from harness import (Cluster, answer_core, check, reference_answer, run,
                     wait_for)

BIG = 4000                  # a record this large is an upload (a blob)

# One entry per connection, in order: (direction, which TLS record, what it
# is). Records are counted from the first, handshake included: a TLS 1.3
# client sends at most 5 before its first message (ClientHello, a
# compatibility ChangeCipherSpec, Certificate, CertificateVerify,
# Finished), gpud at most 7 (ServerHello, ChangeCipherSpec,
# EncryptedExtensions, CertificateRequest, Certificate, CertificateVerify,
# Finished); so record 8 from the worker and 9 from gpud carry messages.
# "big": the first record of BIG bytes or more after the handshake.
PLAN = [
    ("c2s", 8, "an early worker message"),
    ("c2s", "big", "checkpoint"),
    ("s2c", 9, "an early reply"),
    ("s2c", 14, "a later reply"),
]
TLS_APPDATA = 23


class Proxy:
    def __init__(self, target_port, plan):
        self.target = target_port
        self.plan = list(plan)
        self.ls = socket.socket()
        self.ls.bind(("127.0.0.1", 0))
        self.ls.listen(16)
        self.port = self.ls.getsockname()[1]
        self.record = []          # every byte, both ways
        self.flipped = []         # (connection, what)
        self.conns = 0
        self.lock = threading.Lock()
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            try:
                c, _ = self.ls.accept()
            except OSError:
                return
            u = socket.create_connection(("127.0.0.1", self.target))
            with self.lock:
                n = self.conns
                self.conns += 1
                step = self.plan[n] if n < len(self.plan) else None
            for direction, src, dst in (("c2s", c, u), ("s2c", u, c)):
                flip = step if step and step[0] == direction else None
                threading.Thread(target=self.pump, args=(n, src, dst, flip), daemon=True).start()

    def hit(self, flip, index, rec):
        if flip[1] == "big":
            return index > 5 and rec[0] == TLS_APPDATA and len(rec) >= BIG
        return index == flip[1]

    def pump(self, n, src, dst, flip):
        """Forward whole TLS records (5-byte header: type, version, length),
        altering the planned one."""
        buf, index = b"", 0
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                with self.lock:
                    self.record.append(data)
                buf += data
                out = bytearray()
                while len(buf) >= 5:
                    size = 5 + struct.unpack(">H", buf[3:5])[0]
                    if len(buf) < size:
                        break
                    rec, buf = bytearray(buf[:size]), buf[size:]
                    index += 1
                    if flip and self.hit(flip, index, rec):
                        rec[5 + (size - 5) // 2] ^= 0x04
                        with self.lock:
                            self.flipped.append((n, flip[2]))
                        flip = None
                    out += rec
                if out:
                    dst.sendall(bytes(out))
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self):
        self.ls.close()


def test_channel(cl: Cluster):
    units = cl.start_gpud_leases(1.5, "0.3")
    battles = 3 * units + 999
    job = cl.submit("graveler", battles=battles, seed=2112)
    proxy = Proxy(cl.port, PLAN)
    cl.start_worker("cpu:1", port=proxy.port, extra=["--checkpoint-interval", "0.3"])
    wait_for(lambda: len(proxy.flipped) == len(PLAN), 60, "every planned flip")
    # Then a worker whose only uploads are results: flip its first.
    w = cl.workers[0]
    w.terminate()
    w.wait(20)
    proxy.plan = [None] * proxy.conns + [("c2s", "big", "result")]
    cl.start_worker("cpu:1", port=proxy.port, extra=["--checkpoint-interval", "3600"])
    wait_for(lambda: len(proxy.flipped) == len(PLAN) + 1, 90, "the result's flip")
    cl.wait_job(job, timeout=300)
    proxy.close()

    ref = reference_answer("graveler", battles=battles, seed=2112)
    check(answer_core(cl.result(job)["answer"]) == ref, "answer differs from the reference")
    glog, wlog = cl.log_text("gpud"), cl.log_text("worker")
    c2s = sum(1 for _, what in proxy.flipped if what in ("an early worker message", "checkpoint", "result"))
    refused = glog.count("TLS: a record did not authenticate")
    check(refused >= c2s, "gpud logged %d refused records for %d flips to it" % (refused, c2s))
    check(wlog.count("TLS: a record did not authenticate") >= len(proxy.flipped) - c2s,
          "the worker should log the records gpud's side altered")
    # Nothing of an altered record reached a handler: none was parsed as a
    # frame (it would have been "bad frame" or an invalid message).
    check("bad frame" not in glog and "invalid message" not in glog,
          "an altered record reached the frame parser")
    traffic = b"".join(proxy.record)
    check(len(traffic) > battles // 1000, "the proxy saw the traffic")
    for field in (b'"epoch"', b'"lease"', b'"units_done"', b'"worker"', b'"workloads"', b"GPBL",
                  b'"graveler"'):
        check(field not in traffic, "%r appears in plain text on the wire" % field)
    print("flipped: %s" % proxy.flipped)

    # A gpud with another key, where the worker thinks gpud is: refused.
    other = Cluster("channel-impostor")
    try:
        other.start_gpud()
        before = len(cl.workers)
        cl.start_worker("cpu:1", port=other.port)
        wait_for(lambda: "refusing gpud at 127.0.0.1:%d" % other.port in cl.log_text("worker"), 20,
                 "the worker to refuse the impostor")
        check("impostor" in cl.log_text("worker"), "the worker says why")
        check("worker online" not in other.log_text("gpud"), "no worker logged in to the impostor")
        check(len(cl.workers) == before + 1, "sanity")
    finally:
        other.cleanup()


if __name__ == "__main__":
    run(test_channel)
