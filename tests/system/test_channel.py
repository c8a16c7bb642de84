"""The secure channel on every TCP connection (issue 21).

A proxy between the worker and gpud records the traffic and flips one byte
in it after the handshake, one connection at a time: in the worker's CLAIM,
in a checkpoint upload, in a result upload (worker to gpud), and in the
LEASE and a later reply (gpud to worker). Each time the connection drops
with a logged reason, nothing of the altered record is acted on, the worker
reconnects, and the job still ends with the exact answer. No message field
appears in plain text anywhere in the recording. A second gpud, with a key
of its own, is refused by a worker whose credential pins the first."""
import os
import socket
import threading
import time

from harness import (Cluster, answer_core, check, reference_answer, run,
                     wait_for)

C2S_HANDSHAKE = 40 + 24     # CLIENT_HELLO + FINISH
S2C_HANDSHAKE = 160         # SERVER_HELLO
BIG = 4000                  # a read this large is an upload (a blob)

# One entry per connection, in order: (direction, which read, what it is).
# Reads are counted after the handshake bytes; the worker sends HELLO, AUTH,
# then CLAIM, each after an answer, so they arrive as reads 1, 2, 3; gpud
# sends CHALLENGE, WELCOME, then LEASE.
PLAN = [
    ("c2s", 3, "claim"),
    ("c2s", "big", "checkpoint"),
    ("s2c", 3, "lease"),
    ("s2c", 6, "an answer to a heartbeat or checkpoint"),
]


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
            for direction, src, dst, skip in (("c2s", c, u, C2S_HANDSHAKE), ("s2c", u, c, S2C_HANDSHAKE)):
                flip = step if step and step[0] == direction else None
                threading.Thread(target=self.pump, args=(n, src, dst, skip, flip), daemon=True).start()

    def pump(self, n, src, dst, skip, flip):
        reads, seen = 0, 0
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                with self.lock:
                    self.record.append(data)
                before = seen
                seen += len(data)
                if flip and seen > skip:
                    body = data[max(0, skip - before):]
                    reads += 1
                    hit = flip[1] == reads if flip[1] != "big" else len(body) >= BIG
                    if hit:
                        b = bytearray(data)
                        b[len(data) - len(body) // 2 - 1] ^= 0x04
                        data = bytes(b)
                        with self.lock:
                            self.flipped.append((n, flip[2]))
                        flip = None
                dst.sendall(data)
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
    c2s = sum(1 for _, what in proxy.flipped if what in ("claim", "checkpoint", "result"))
    refused = glog.count("secure channel: a record")
    check(refused >= c2s, "gpud logged %d refused records for %d flips to it" % (refused, c2s))
    check(wlog.count("secure channel: a record") >= len(proxy.flipped) - c2s,
          "the worker should log the records gpud's side altered")
    # Nothing of an altered record reached a handler: none was parsed as a
    # frame (it would have been "bad frame" or an invalid message).
    check("bad frame" not in glog and "invalid message" not in glog,
          "an altered record reached the frame parser")
    traffic = b"".join(proxy.record)
    check(len(traffic) > battles // 1000, "the proxy saw the traffic")
    for field in (b'"epoch"', b'"lease"', b'"units_done"', b'"nonce"', b'"workloads"', b"GPBL",
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
