"""The client side of gpud's secure channel (common/chan.h) in Python, for
the test harness and the load generator: no sockets here, bytes in and out.

    ch = Chan(pin)                 # pin: gpud's 32-byte key, or None (tests)
    send(ch.hello)                 # 40 bytes
    send(ch.finish(recv(160)))     # checks gpud's signature (and the pin)
    send(ch.seal(frame_bytes))     # records
    plain = ch.open(received)      # plaintext of the complete records
"""
import hashlib
import struct
import sys

try:
    from nacl import bindings as nb
except ImportError:  # Debian's python3-nacl, when python3 is not Debian's
    sys.path.append("/usr/lib/python3/dist-packages")
    from nacl import bindings as nb

SS = "crypto_secretstream_xchacha20poly1305_"
RECORD_MAX = 256 << 10
SERVER_HELLO_LEN = 160


def _ss(name):
    return getattr(nb, SS + name)


class ChannelError(Exception):
    pass


class Chan:
    def __init__(self, pin=None):
        self.pk, self._sk = nb.crypto_kx_keypair()
        self.hello = b"GPUDSEC1" + self.pk
        self.pin = pin
        self.raw = b""
        self.body = 0
        self.server_key = None

    def finish(self, sh):
        """gpud's SERVER_HELLO -> the FINISH bytes to send."""
        eph, stat, sig, hdr = sh[8:40], sh[40:72], sh[72:136], sh[136:160]
        if len(sh) != SERVER_HELLO_LEN or sh[:8] != b"GPUDSEC1":
            raise ChannelError("gpud did not answer the handshake")
        if self.pin is not None and stat != self.pin:
            raise ChannelError("gpud's key is not the pinned one")
        t = hashlib.blake2b(b"gpud-chan-v1" + self.hello + eph + stat, digest_size=32).digest()
        try:
            nb.crypto_sign_open(sig + t, stat)
        except Exception as e:
            raise ChannelError("gpud's signature does not verify") from e
        rx, tx = nb.crypto_kx_client_session_keys(self.pk, self._sk, eph)
        rx = hashlib.blake2b(t, key=rx, digest_size=32).digest()
        tx = hashlib.blake2b(t, key=tx, digest_size=32).digest()
        self.rx = _ss("state")()
        _ss("init_pull")(self.rx, hdr, rx)
        self.tx = _ss("state")()
        self.server_key = stat
        return _ss("init_push")(self.tx, tx)

    def seal(self, data, record=RECORD_MAX):
        out = []
        for i in range(0, max(len(data), 1), record):
            part = data[i:i + record]
            out += [_ss("push")(self.tx, struct.pack(">I", len(part))), _ss("push")(self.tx, part)]
        return b"".join(out)

    def open(self, raw):
        """Plaintext of the complete records in what came so far."""
        self.raw += raw
        out = []
        while True:
            if not self.body:
                if len(self.raw) < 21:
                    break
                n = struct.unpack(">I", _ss("pull")(self.rx, self.raw[:21])[0])[0]
                self.raw, self.body = self.raw[21:], n + 17
            if len(self.raw) < self.body:
                break
            out.append(_ss("pull")(self.rx, self.raw[:self.body])[0])
            self.raw, self.body = self.raw[self.body:], 0
        return b"".join(out)
