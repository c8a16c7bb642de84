"""Remote gpuctl over TLS 1.3 with its own key, with roles (issues 21, 34):
a viewer credential reads (status, result, workers, export) and cannot
submit, cancel or add tokens; an admin credential can; a revoked admin is
refused at once; a worker token cannot run gpuctl and a viewer token cannot
lease work; a credential pinning another key refuses gpud; a key made
elsewhere (token keygen) is registered by its public key alone; a peer that
accepts and never answers cannot hold gpuctl (connect, handshake and reply
timeouts: wait --timeout 3 ends in about 3 s)."""
import json
import os
import socket
import subprocess
import time

from harness import GPUCTL, Cluster, check, run, wait_for


def remote(cl, cred, *args):
    return subprocess.run([GPUCTL, "--connect", "127.0.0.1:%d" % cl.port, "--credential", cred] + list(args),
                          capture_output=True, text=True, timeout=60)


def test_remote_ctl(cl: Cluster):
    cl.start_gpud()
    viewer, _, _ = cl.add_token("ops-viewer", role="viewer")
    admin, _, _ = cl.add_token("ops-admin", role="admin")
    worker_tok, _, _ = cl.add_token("box", role="worker")
    listing = cl.ctl("token", "list").stdout
    check("ops-viewer" in listing and "viewer" in listing and "admin" in listing, "token list: " + listing)

    # The admin submits from afar; the local worker runs it.
    r = remote(cl, admin, "submit", "graveler", "--battles", str(1 << 22), "--seed", "5")
    check(r.returncode == 0, "admin submit: %s" % r.stderr)
    job = int(r.stdout.strip())
    cl.start_worker("cpu:1")
    r = remote(cl, admin, "wait", str(job), "--timeout", "120")
    check(r.returncode == 0, "admin wait: %s" % r.stderr)

    # The viewer reads what the Unix socket reads.
    r = remote(cl, viewer, "status", str(job), "--json")
    check(r.returncode == 0, "viewer status: %s" % r.stderr)
    check(json.loads(r.stdout)[0]["state"] == "done", "viewer status: " + r.stdout)
    r = remote(cl, viewer, "result", str(job), "--json")
    check(r.returncode == 0 and json.loads(r.stdout)["answer"] == cl.result(job)["answer"],
          "viewer result: %s" % r.stderr)
    check(remote(cl, viewer, "workers").returncode == 0, "viewer workers")
    # ... and changes nothing.
    for args in (["submit", "graveler", "--battles", "1000"], ["cancel", str(job)],
                 ["token", "add", "sneaky", "--role", "admin"], ["token", "list"], ["check"]):
        r = remote(cl, viewer, *args)
        check(r.returncode == 1 and "needs an admin credential" in r.stderr,
              "viewer %s: rc %d %s" % (args[0], r.returncode, r.stderr))
    check("sneaky" not in cl.ctl("token", "list").stdout, "the viewer made a token")

    # A worker's token is not gpuctl's, nor a viewer's a worker's.
    r = remote(cl, worker_tok, "status")
    check(r.returncode == 1 and "worker token cannot run gpuctl" in r.stderr, "worker token: " + r.stderr)
    cl.start_worker("cpu:1", token_file=viewer)
    wait_for(lambda: "only a worker token may lease work" in cl.log_text("gpud"), 20,
             "a viewer token refused as a worker")

    # Revoked: refused at once.
    cl.ctl("token", "revoke", "ops-admin")
    r = remote(cl, admin, "status")
    check(r.returncode == 1 and "refused the credential" in r.stderr, "revoked admin: %s" % r.stderr)

    # A credential pinning another gpud's key.
    lines = [ln if not ln.startswith("gpud-key") else "gpud-key = " + "11" * 32
             for ln in open(viewer).read().splitlines()]
    wrong = os.path.join(cl.dir, "wrong.cred")
    with open(wrong, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.chmod(wrong, 0o600)
    r = remote(cl, wrong, "status")
    check(r.returncode == 3 and "impostor" in r.stderr, "wrong key: rc %d %s" % (r.returncode, r.stderr))
    # Usage errors.
    r = subprocess.run([GPUCTL, "--connect", "127.0.0.1:%d" % cl.port, "status"], capture_output=True, text=True)
    check(r.returncode == 2 and "--credential" in r.stderr, "no credential: " + r.stderr)
    r = subprocess.run([GPUCTL, "--connect", "nowhere", "--credential", viewer, "status"], capture_output=True,
                       text=True)
    check(r.returncode == 2 and "HOST:PORT" in r.stderr, "bad address: " + r.stderr)

    # A key pair made where it is used: gpud gets the public key only.
    r = cl.ctl("token", "keygen", "far-viewer")
    check("gpud-key" not in r.stdout and "--public-key" in r.stderr, "keygen: " + r.stdout + r.stderr)
    pub = r.stderr.split("--public-key ")[1].split()[0]
    far = os.path.join(cl.dir, "far.cred")
    with open(far, "w") as f:
        f.write(r.stdout)
    os.chmod(far, 0o600)
    r2 = cl.ctl("token", "add", "far-viewer", "--role", "viewer", "--public-key", pub)
    check(r2.stdout.startswith("gpud-key = ") and len(r2.stdout.splitlines()) == 1,
          "add --public-key prints only the pin: " + r2.stdout)
    with open(far, "a") as f:
        f.write(r2.stdout)
    r = remote(cl, far, "status", str(job), "--json")
    check(r.returncode == 0 and json.loads(r.stdout)[0]["state"] == "done", "keygen'd viewer: " + r.stderr)
    r = cl.ctl("token", "add", "far-2", "--public-key", "00" * 32, check_rc=False)
    check(r.returncode == 1 and "not an Ed25519 public key" in r.stderr, "a bad public key: " + r.stderr)

    # A peer that accepts and never answers: gpuctl gives up in time.
    mute = socket.socket()
    mute.bind(("127.0.0.1", 0))
    mute.listen(8)
    t0 = time.monotonic()
    r = subprocess.run([GPUCTL, "--connect", "127.0.0.1:%d" % mute.getsockname()[1], "--credential", viewer,
                        "wait", str(job), "--timeout", "3"], capture_output=True, text=True, timeout=60)
    took = time.monotonic() - t0
    check(r.returncode == 3 and "did not answer in time" in r.stderr and took < 6,
          "a mute TCP peer: rc %d in %.1f s: %s" % (r.returncode, took, r.stderr))
    mute.close()
    mpath = os.path.join(cl.dir, "mute.sock")
    mute = socket.socket(socket.AF_UNIX)
    mute.bind(mpath)
    mute.listen(8)
    t0 = time.monotonic()
    r = subprocess.run([GPUCTL, "--socket", mpath, "wait", str(job), "--timeout", "3"], capture_output=True,
                       text=True, timeout=60)
    took = time.monotonic() - t0
    check(r.returncode == 3 and "did not answer in time (reply)" in r.stderr and took < 6,
          "a mute control socket: rc %d in %.1f s: %s" % (r.returncode, took, r.stderr))
    mute.close()
    check(cl.gpud.poll() is None, "gpud died")


if __name__ == "__main__":
    run(test_remote_ctl)
