#!/usr/bin/env python3
"""Load generator: many simulated workers on loopback against a running gpud.

Each simulated worker opens the secure channel and logs in (HMAC
challenge), then loops: CLAIM a lease,
send HEARTBEATs, RELEASE it. Every reply is checked. Prints lease claims,
heartbeats and releases per second; gpud acknowledges each only after its
commit is durable (WAL, synchronous=FULL, group commit).

  loadgen.py --connect 127.0.0.1:PORT --token-file FILE [--workers 100]
             [--seconds 10] [--heartbeats 4] [--json]

The job it leases from must exist (e.g. gpuctl submit graveler --battles
1e15 with gpud --lease-units 1048576, so leases are plentiful).
"""
import argparse
import asyncio
import hashlib
import hmac
import json
import os
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpudchan import SERVER_HELLO_LEN, Chan  # noqa: E402

MAGIC = 0x47505544
T = {"HELLO": 1, "CHALLENGE": 2, "AUTH": 3, "WELCOME": 4, "CLAIM": 5, "LEASE": 6,
     "NOLEASE": 7, "HEARTBEAT": 8, "HB_ACK": 9, "ACK": 12, "RELEASE": 13, "ERROR": 14}
N = {v: k for k, v in T.items()}


class Stats:
    def __init__(self):
        self.claims = self.heartbeats = self.releases = self.noleases = self.errors = 0
        self.lat = []


class Conn:
    """Frames over the secure channel on an asyncio stream."""

    def __init__(self, r, w, ch):
        self.r, self.w, self.ch, self.buf = r, w, ch, b""

    @classmethod
    async def open(cls, host, port, pin):
        r, w = await asyncio.open_connection(host, port)
        ch = Chan(pin)
        w.write(ch.hello)
        w.write(ch.finish(await r.readexactly(SERVER_HELLO_LEN)))
        return cls(r, w, ch)

    async def read(self, n):
        while len(self.buf) < n:
            data = await self.r.read(65536)
            if not data:
                raise RuntimeError("gpud closed the connection")
            self.buf += self.ch.open(data)
        out, self.buf = self.buf[:n], self.buf[n:]
        return out


async def send(c, name, msg):
    body = json.dumps(msg).encode()
    c.w.write(c.ch.seal(struct.pack(">IBBHII", MAGIC, 1, T[name], 0, len(body), 0) + body))
    await c.w.drain()


async def recv(c):
    head = await c.read(16)
    magic, ver, ftype, flags, jl, bl = struct.unpack(">IBBHII", head)
    if magic != MAGIC or jl > (1 << 20) or bl > (256 << 20):
        raise RuntimeError("bad frame from gpud")
    body = await c.read(jl)
    if bl:
        await c.read(bl)
    return N.get(ftype, str(ftype)), json.loads(body)


async def expect(c, name):
    got, msg = await recv(c)
    if got != name:
        raise RuntimeError("expected %s, got %s %s" % (name, got, msg))
    return msg


async def worker(host, port, cred, index, stop_at, hb_per_lease, st):
    name, secret, pin = cred
    r = w = await Conn.open(host, port, pin)
    # Each simulated worker is a worker of its own (one process each).
    await send(w, "HELLO", {"proto": 1, "worker": name, "device": "cpu", "workloads": ["graveler"],
                            "cuda": False, "threads": 1,
                            "instance": "loadgen-%d/%d" % (os.getpid(), index)})
    nonce = bytes.fromhex((await expect(r, "CHALLENGE"))["nonce"])
    # proof = client_key XOR HMAC-SHA256(stored_key, nonce || name)
    ck = hashlib.blake2b(b"gpud-token-v1" + secret, digest_size=32).digest()
    sig = hmac.new(hashlib.blake2b(ck, digest_size=32).digest(), nonce + name.encode(), hashlib.sha256).digest()
    await send(w, "AUTH", {"mac": bytes(a ^ b for a, b in zip(ck, sig)).hex()})
    await expect(r, "WELCOME")
    while time.monotonic() < stop_at:
        t0 = time.monotonic()
        await send(w, "CLAIM", {"rate": 0})
        got, msg = await recv(r)
        if got == "NOLEASE":
            st.noleases += 1
            await asyncio.sleep(0.05)
            continue
        if got != "LEASE":
            st.errors += 1
            raise RuntimeError("claim answered %s %s" % (got, msg))
        st.claims += 1
        st.lat.append(time.monotonic() - t0)
        lease, epoch = msg["lease"], msg["epoch"]
        for k in range(hb_per_lease):
            t0 = time.monotonic()
            await send(w, "HEARTBEAT", {"lease": lease, "epoch": epoch, "units_done": k})
            ack = await expect(r, "HB_ACK")
            if ack["action"] != "continue":
                st.errors += 1
            st.heartbeats += 1
            st.lat.append(time.monotonic() - t0)
        await send(w, "RELEASE", {"lease": lease, "epoch": epoch})
        ack = await expect(r, "ACK")
        if ack.get("what") != "release":
            st.errors += 1
        st.releases += 1
    w.w.close()


async def main_async(a):
    host, port = a.connect.rsplit(":", 1)
    fields = dict(line.split("=", 1) for line in open(a.token_file).read().splitlines()
                  if "=" in line and not line.startswith("#"))
    fields = {k.strip(): v.strip() for k, v in fields.items()}
    name, secret = fields["token"].split(":", 1)
    cred = (name, bytes.fromhex(secret), bytes.fromhex(fields["gpud-key"]))
    st = Stats()
    t0 = time.monotonic()
    stop_at = t0 + a.seconds
    await asyncio.gather(*[worker(host, int(port), cred, i, stop_at, a.heartbeats, st)
                           for i in range(a.workers)])
    dt = time.monotonic() - t0
    st.lat.sort()
    ops = st.claims + st.heartbeats + st.releases
    out = {"workers": a.workers, "seconds": round(dt, 2), "claims_per_s": round(st.claims / dt),
           "heartbeats_per_s": round(st.heartbeats / dt), "releases_per_s": round(st.releases / dt),
           "lease_ops_per_s": round(ops / dt), "noleases": st.noleases, "errors": st.errors,
           "p50_ms": round(1e3 * st.lat[len(st.lat) // 2], 2) if st.lat else None,
           "p99_ms": round(1e3 * st.lat[int(len(st.lat) * 0.99)], 2) if st.lat else None}
    print(json.dumps(out) if a.json else
          "%(workers)d workers, %(seconds)ss: %(lease_ops_per_s)d lease ops/s (claims %(claims_per_s)d/s, "
          "heartbeats %(heartbeats_per_s)d/s, releases %(releases_per_s)d/s), latency p50 %(p50_ms)s ms "
          "p99 %(p99_ms)s ms, errors %(errors)d" % out)
    return 1 if st.errors else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--connect", required=True)
    p.add_argument("--token-file", required=True)
    p.add_argument("--workers", type=int, default=100)
    p.add_argument("--seconds", type=float, default=10)
    p.add_argument("--heartbeats", type=int, default=4)
    p.add_argument("--json", action="store_true")
    a = p.parse_args()
    if not (1 <= a.workers <= 10000 and 0 < a.seconds <= 3600 and 0 <= a.heartbeats <= 1000):
        p.error("out of range")
    sys.exit(asyncio.run(main_async(a)))


if __name__ == "__main__":
    main()
