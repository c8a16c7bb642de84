"""TLS 1.3 on the worker port and credentials that are key pairs (issue 34:
item 7 and "TLS 1.3 on every TCP port").

- `openssl s_client -tls1_3` completes the handshake with gpud's worker
  port and is shown gpud's certificate, whose Ed25519 key is gpud's.
- A worker and a gpuctl whose credential pins another key refuse gpud.
- A connection with an unknown key, or with none, is refused at login with
  a reason; so is a credential of the old kind (a file with "token =
  NAME:SECRET", a database row without a public key), saying how to make a
  new one.
- The local worker's credential (the one secret gpud writes into its own
  directory, and so into its backups) logs in from this machine only.
- The status page and /metrics beyond loopback are HTTPS with gpud's
  certificate (TLS 1.3); plain HTTP gets nothing there.
- Item 7: with a copy of gpud's directory (a backup: database and
  gpud.key) an attacker runs a fake gpud on it. A real worker, whose
  credential pins gpud's key, logs in to the fake (it holds the key), and
  the attacker records every byte the worker sends. Still it cannot log in
  to the real gpud as that worker: the recording replayed is refused, gpud's
  own key is no credential, and the worker's secret is nowhere in the copy.
"""
import json
import os
import re
import socket
import sqlite3
import ssl
import subprocess
import threading
import urllib.request

from harness import GPUCTL, MAGIC, T, WORKER, Chan, Cluster, RawWorker, check, frame, run, wait_for
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec


def write_cred(path, text):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o600)
    return path


def remote(port, cred, *args):
    return subprocess.run([GPUCTL, "--connect", "127.0.0.1:%d" % port, "--credential", cred] + list(args),
                          capture_output=True, text=True, timeout=60)


def refused_login(port, name, key, want):
    """A raw login as name with key (a seed, or None: no certificate) gets
    ERROR saying want, then the connection closes."""
    w = RawWorker(port, name, key)
    w.send_msg("HELLO", {"proto": 1, "worker": name, "instance": "raw", "device": "cpu",
                         "workloads": ["graveler"], "cuda": False, "threads": 1})
    f = w.recv(10)
    check(f is not None and f[0] == "ERROR" and want in f[1].get("message", ""),
          "login as %s: want ERROR %r, got %s" % (name, want, f))
    check(w.closed(5), "gpud closes a refused login")
    w.close()


def ec_client_refused(port, tmp):
    """A client certificate whose key is not Ed25519 (P-256): the
    handshake completes, the login is refused saying so."""
    import datetime
    key = ec.generate_private_key(ec.SECP256R1())
    cn = x509.Name([x509.NameAttribute(x509.oid.NameOID.COMMON_NAME, "p256")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(cn).issuer_name(cn).public_key(key.public_key())
            .serial_number(1).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1)).sign(key, hashes.SHA256()))
    cp, kp = os.path.join(tmp, "p256.crt"), os.path.join(tmp, "p256.key")
    with open(cp, "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(kp, "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    ctx.load_cert_chain(cp, kp)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        with ctx.wrap_socket(s) as t:
            t.sendall(frame(T["HELLO"], {"proto": 1, "worker": "local", "instance": "raw", "device": "cpu",
                                         "workloads": ["graveler"], "cuda": False, "threads": 1}))
            data = b""
            try:
                while True:
                    chunk = t.recv(65536)
                    if not chunk:
                        break
                    data += chunk
            except (OSError, ssl.SSLError):
                pass
    check(data[:4] == MAGIC.to_bytes(4, "big") and b"not an Ed25519" in data,
          "a P-256 client certificate: %r" % data[:300])


def outside_address():
    """This machine's address on a network (not loopback), or None."""
    try:
        out = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=10).stdout
    except OSError:
        return None
    for a in out.split():
        if "." in a and not a.startswith("127."):
            return a
    return None


def local_only(web):
    """The local worker's credential: welcome from 127.0.0.1, refused from
    this machine's network address."""
    name, key = web.token()
    ok = RawWorker(web.port, name, key)
    ok.login()
    ok.close()
    addr = outside_address()
    if addr is None:
        print("no network address here: the local credential's check from afar is skipped")
        return
    s = socket.create_connection((addr, web.port), timeout=10)
    ch = Chan(s, None, key, name)
    s.sendall(ch.seal(frame(T["HELLO"], {"proto": 1, "worker": name, "instance": "far", "device": "cpu",
                                         "workloads": ["graveler"], "cuda": False, "threads": 1})))
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += ch.open(chunk)
    except Exception:
        pass
    s.close()
    check(b"from this machine only" in data, "the local credential from %s: %r" % (addr, data[:300]))
    msg = json.loads(data[16:16 + int.from_bytes(data[8:12], "big")])
    print("local credential from %s: %s" % (addr, msg.get("message")))


class Recorder:
    """A proxy that records what the client sends (the attacker's view)."""

    def __init__(self, target):
        self.target, self.c2s = target, []
        self.ls = socket.socket()
        self.ls.bind(("127.0.0.1", 0))
        self.ls.listen(4)
        self.port = self.ls.getsockname()[1]
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            try:
                c, _ = self.ls.accept()
            except OSError:
                return
            u = socket.create_connection(("127.0.0.1", self.target))
            rec = []
            self.c2s.append(rec)
            threading.Thread(target=self.pump, args=(c, u, rec), daemon=True).start()
            threading.Thread(target=self.pump, args=(u, c, None), daemon=True).start()

    def pump(self, src, dst, rec):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if rec is not None:
                    rec.append(data)
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def test_tls(cl: Cluster):
    cl.start_gpud()
    pin = cl.gpud_key()
    local = open(os.path.join(cl.data, "local-worker.token")).read()

    # openssl s_client: a TLS 1.3 handshake, gpud's key in the certificate.
    r = subprocess.run(["openssl", "s_client", "-tls1_3", "-showcerts", "-connect", "127.0.0.1:%d" % cl.port],
                       input="", capture_output=True, text=True, timeout=30)
    check("TLSv1.3" in r.stdout, "s_client: no TLS 1.3 handshake: " + r.stdout[-2000:] + r.stderr[-2000:])
    pem = re.search(r"-----BEGIN CERTIFICATE-----.*?-----END CERTIFICATE-----", r.stdout, re.S)
    check(pem is not None, "s_client shows no certificate")
    shown = x509.load_pem_x509_certificate(pem.group(0).encode()).public_key().public_bytes(
        serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    check(shown == pin, "the certificate's key %s is not gpud's %s" % (shown.hex(), pin.hex()))
    print("s_client: TLS 1.3, gpud's key %s..." % shown.hex()[:16])

    # A wrong pin: the worker and gpuctl refuse gpud.
    wrong = write_cred(os.path.join(cl.dir, "wrong-pin.token"),
                       re.sub(r"gpud-key = \w+", "gpud-key = " + "11" * 32, local))
    w = cl.start_worker("cpu:1", token_file=wrong)
    wait_for(lambda: "refusing gpud at 127.0.0.1:%d" % cl.port in cl.log_text("worker"), 20,
             "the worker to refuse a gpud that is not its pin")
    check("impostor" in cl.log_text("worker"), "the worker says why")
    check("worker online" not in cl.log_text("gpud"), "a worker with a wrong pin logged in")
    w.kill()
    w.wait(10)
    admin = cl.add_token("ops", role="admin")[0]
    wrong_admin = write_cred(os.path.join(cl.dir, "wrong-pin.cred"),
                             re.sub(r"gpud-key = \w+", "gpud-key = " + "22" * 32, open(admin).read()))
    r = remote(cl.port, wrong_admin, "status")
    check(r.returncode == 3 and "impostor" in r.stderr, "gpuctl, wrong pin: rc %d %s" % (r.returncode, r.stderr))
    check(remote(cl.port, admin, "status").returncode == 0, "the right admin credential works")

    # An unknown key, no key: refused at login, with the reason.
    refused_login(cl.port, "local", os.urandom(32), "bad token")
    refused_login(cl.port, "local", None, "no client certificate")
    ec_client_refused(cl.port, cl.dir)
    r = cl.ctl("token", "keygen", "stranger")
    stranger = write_cred(os.path.join(cl.dir, "stranger.cred"),
                          r.stdout + "gpud-key = %s\n" % pin.hex())
    r = remote(cl.port, stranger, "status")
    check(r.returncode == 1 and "bad token" in r.stderr, "gpuctl, unknown key: rc %d %s" % (r.returncode, r.stderr))

    # The old kind: a file with a shared secret, a row without a key.
    old = write_cred(os.path.join(cl.dir, "old.token"),
                     "token = local:%s\ngpud-key = %s\n" % ("ab" * 32, pin.hex()))
    r = subprocess.run([WORKER, "--connect", "127.0.0.1:%d" % cl.port, "--token-file", old, "--device", "cpu:1"],
                       capture_output=True, text=True, timeout=30)
    check(r.returncode == 1 and "old kind" in r.stderr and "gpuctl token add" in r.stderr,
          "gpuworker, old credential: rc %d %s" % (r.returncode, r.stderr))
    r = remote(cl.port, old, "status")
    check(r.returncode == 2 and "old kind" in r.stderr and "gpuctl token add" in r.stderr,
          "gpuctl, old credential: rc %d %s" % (r.returncode, r.stderr))
    db = sqlite3.connect(os.path.join(cl.data, "gpud.db"), timeout=10)
    db.execute("INSERT INTO tokens (name, public_key, created_at, role) VALUES ('legacy', NULL, 1.0, 'worker')")
    db.commit()
    db.close()
    refused_login(cl.port, "legacy", os.urandom(32), "old kind")
    check("gpuctl token add" in cl.log_text("gpud"), "gpud's log says how to make a new credential")

    # Item 7. A real worker with its own credential; a backup of gpud.
    victim_file, victim, victim_key = cl.add_token("victim")
    backup = os.path.join(cl.dir, "backup")
    cl.ctl("backup", backup)
    fake = Cluster("tls-fake")
    try:
        subprocess.run(["cp", "-a", backup, fake.data], check=True)
        fake.start_gpud()
        check(fake.gpud_key() == pin, "the fake gpud holds gpud's key")
        rec = Recorder(fake.port)
        cl.start_worker("cpu:1", token_file=victim_file, port=rec.port)
        wait_for(lambda: "worker online worker=%s@" % victim in fake.log_text("gpud"), 30,
                 "the real worker to log in to the fake gpud")
        # The worker's secret is nowhere in gpud's directory or the backup.
        for top in (cl.data, backup):
            for root, _, files in os.walk(top):
                for name in files:
                    path = os.path.join(root, name)
                    try:
                        data = open(path, "rb").read()
                    except OSError:
                        continue
                    check(victim_key not in data and victim_key.hex().encode() not in data,
                          "the worker's secret key is in %s" % path)
        # The recording, replayed to the real gpud: refused.
        check(rec.c2s and rec.c2s[0], "the attacker recorded the login")
        s = socket.create_connection(("127.0.0.1", cl.port), timeout=10)
        for chunk in rec.c2s[0]:
            try:
                s.sendall(chunk)
            except OSError:
                break
        s.settimeout(5)
        try:
            while s.recv(65536):
                pass
        except OSError:
            pass
        s.close()
        # gpud's own key, from the copy, is no credential.
        ident = open(os.path.join(backup, "gpud.key")).read().split()[1]
        refused_login(cl.port, victim, bytes.fromhex(ident)[:32], "bad token")
        check("worker online worker=%s@" % victim not in cl.log_text("gpud"),
              "the attacker logged in to the real gpud as the worker")
        check("TLS" in cl.log_text("gpud"), "gpud logs the replay's failed handshake")
        # The real worker still logs in to the real gpud.
        ok = RawWorker(cl.port, victim, victim_key, pin=pin)
        ok.login()
        ok.close()
    finally:
        fake.cleanup()
    check(cl.gpud.poll() is None, "gpud died")

    # The page beyond loopback: HTTPS with gpud's certificate, TLS 1.3.
    web = Cluster("tls-web")
    try:
        web.start_gpud(extra=["--http", "0.0.0.0:0", "--http-open"], host="0.0.0.0")
        local_only(web)
        port = int(web.http.rsplit(":", 1)[1])
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            with ctx.wrap_socket(s) as t:
                check(t.version() == "TLSv1.3", "the page speaks %s" % t.version())
                key = x509.load_der_x509_certificate(t.getpeercert(binary_form=True)).public_key()
                check(key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
                      == web.gpud_key(), "the page's certificate is not gpud's key")
        with urllib.request.urlopen("https://127.0.0.1:%d/metrics" % port, context=ctx, timeout=10) as r:
            check(r.status == 200 and b"gpud_" in r.read(), "metrics over HTTPS")
        try:
            urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5).read()
            check(False, "plain HTTP answered beyond loopback")
        except (OSError, ValueError):
            pass
        check("https://" in web.log_text("gpud"), "gpud logs the page's https address")
    finally:
        web.cleanup()


if __name__ == "__main__":
    run(test_tls)
