"""The client side of gpud's TLS 1.3 (common/chan.h) in Python, for the test
harness and the load generator: no sockets here, bytes in and out.

    ch = Chan(pin, key, name)      # pin: gpud's 32-byte key, or None (tests);
                                   # key: the credential's 32-byte Ed25519
                                   # seed, or None (no client certificate)
    send(ch.start())               # the ClientHello
    while not ch.done:             # the handshake
        send(ch.feed(recv()))      # checks gpud's key against the pin
    send(ch.seal(frame_bytes))     # records
    plain = ch.open(received)      # plaintext of the complete records

gpud's certificate is self-signed: what is checked is its Ed25519 key, as
gpuworker and gpuctl check it. A client certificate is made here for key.
"""
import os
import ssl
import sys
import tempfile

try:
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
except ImportError:  # Debian's python3-cryptography, when python3 is not Debian's
    sys.path.append("/usr/lib/python3/dist-packages")
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

RECORD_MAX = 16 << 10
_contexts = {}


class ChannelError(Exception):
    pass


def public_key(seed):
    """The Ed25519 public key (32 bytes) of a 32-byte seed."""
    return Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def cert_key(der):
    """The Ed25519 key (32 bytes) of a DER certificate, or None."""
    try:
        k = x509.load_der_x509_certificate(der).public_key()
        return k.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    except Exception:
        return None


def _self_signed(seed, name):
    """PEM certificate and key for seed, self-signed (as chan.c makes them)."""
    import datetime
    key = Ed25519PrivateKey.from_private_bytes(seed)
    cn = x509.Name([x509.NameAttribute(x509.oid.NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(cn).issuer_name(cn)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=3650))
            .sign(key, None))
    return (cert.public_bytes(serialization.Encoding.PEM),
            key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption()))


def _context(seed, name):
    """One SSLContext per client key (made once: a flood opens many)."""
    k = (seed, name)
    if k not in _contexts:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE  # the pin is checked instead
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3
        ctx.maximum_version = ssl.TLSVersion.TLSv1_3
        if seed is not None:
            cert, pem = _self_signed(seed, name)
            with tempfile.TemporaryDirectory() as d:
                cp, kp = os.path.join(d, "c.pem"), os.path.join(d, "k.pem")
                with open(cp, "wb") as f:
                    f.write(cert)
                with open(kp, "wb") as f:
                    f.write(pem)
                ctx.load_cert_chain(cp, kp)
        _contexts[k] = ctx
    return _contexts[k]


class Chan:
    def __init__(self, pin=None, key=None, name="gpud-client"):
        self.pin = pin
        self.incoming, self.outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.obj = _context(key, name).wrap_bio(self.incoming, self.outgoing)
        self.done = False
        self.server_key = None

    def _out(self):
        return self.outgoing.read()

    def start(self):
        """The first bytes to send (the ClientHello)."""
        self._step()
        return self._out()

    def _step(self):
        try:
            self.obj.do_handshake()
        except ssl.SSLWantReadError:
            return
        except ssl.SSLError as e:
            raise ChannelError("TLS handshake failed: %s" % e) from e
        self.server_key = cert_key(self.obj.getpeercert(binary_form=True) or b"")
        if self.pin is not None and self.server_key != self.pin:
            raise ChannelError("gpud's key is not the pinned one")
        self.done = True

    def feed(self, raw):
        """Handshake bytes from gpud -> the bytes to send back."""
        self.incoming.write(raw)
        self._step()
        return self._out()

    def seal(self, data, record=RECORD_MAX):
        for i in range(0, len(data), record):
            self.obj.write(data[i:i + record])
        return self._out()

    def open(self, raw):
        """Plaintext of the complete records in what came so far."""
        self.incoming.write(raw)
        out = []
        while True:
            try:
                out.append(self.obj.read(1 << 20))
            except ssl.SSLWantReadError:
                break
            except ssl.SSLZeroReturnError:
                break
            except ssl.SSLError as e:
                raise ChannelError("a record did not open: %s" % e) from e
            if not out[-1]:
                break
        return b"".join(out)
