"""Bad gpuctl input gets a clear message and a non-zero exit; gpud unharmed."""
import os
import subprocess

from harness import answer_core, GPUCTL, Cluster, check, credential_field, credential_token, run


def test_gpuctl_errors(cl: Cluster):
    cl.start_gpud()
    cases = [
        (["submit", "graveler"], 1, "missing parameter 'battles'"),
        (["submit", "graveler", "--battles", "abc"], 1, "battles"),
        (["submit", "graveler", "--battles", "-5"], 1, "battles"),
        (["submit", "graveler", "--battles", "0"], 1, "battles"),
        (["submit", "graveler", "--battles", "99999999999999999999999"], 1, "battles"),
        (["submit", "graveler", "--battles", "10", "--seed", "x"], 1, "seed"),
        (["submit", "graveler", "--battles", "10", "--bogus", "1"], 1, "bogus"),
        (["submit", "nosuchworkload", "--n", "1"], 1, "unknown workload"),
        (["submit", "graveler", "--battles"], 2, "needs a value"),
        (["submit", "graveler", "battles", "10"], 2, "expected --KEY VALUE"),
        (["submit"], 2, "needs a workload"),
        (["status", "999"], 4, "no job 999"),
        (["status", "abc"], 2, "not a job id"),
        (["result", "999"], 4, "no job 999"),
        (["cancel", "0"], 2, "not a job id"),
        (["pause", "999"], 4, "no job 999"),
        (["token", "add", "bad name!"], 1, "token names"),
        (["frobnicate"], 2, "unknown command"),
    ]
    for args, want_rc, want_msg in cases:
        r = cl.ctl(*args, check_rc=False)
        check(r.returncode == want_rc, "gpuctl %s: exit %d, want %d (%s)" % (args, r.returncode, want_rc, r.stderr))
        check(want_msg in r.stderr, "gpuctl %s: message %r lacks %r" % (args, r.stderr, want_msg))
    r = subprocess.run([GPUCTL, "--socket", os.path.join(cl.dir, "nope.sock"), "status"], capture_output=True, text=True)
    check(r.returncode == 3 and "cannot reach gpud" in r.stderr, "unreachable gpud: %d %s" % (r.returncode, r.stderr))
    # Valid requests still work; a good token is printed once.
    job = cl.submit("graveler", battles="1e6", seed=1)
    check(job == 1, "first valid job should be 1, got %d" % job)
    check(cl.ctl("pause", str(job)).returncode == 0, "pause")
    check(cl.status(job)["state"] == "paused", "paused state")
    r = cl.ctl("pause", str(job), check_rc=False)
    check(r.returncode == 1 and "not queued or running" in r.stderr, "double pause: " + r.stderr)
    cl.ctl("resume", str(job))
    cl.ctl("cancel", str(job))
    check(cl.status(job)["state"] == "cancelled", "cancelled state")
    r = cl.ctl("token", "add", "gpu-box-1")
    name, secret = credential_token(r.stdout)
    check(name == "gpu-box-1" and len(secret) == 32, "token format: " + r.stdout)
    check(credential_field(r.stdout, "gpud-key") == cl.gpud_key(), "the credential pins gpud's key")
    check(cl.gpud_key().hex() in r.stderr, "token add shows gpud's key: " + r.stderr)
    r = cl.ctl("token", "add", "gpu-box-1", check_rc=False)
    check(r.returncode == 1 and "already exists" in r.stderr, "duplicate token: " + r.stderr)
    check(cl.gpud.poll() is None, "gpud died")


if __name__ == "__main__":
    run(test_gpuctl_errors)
