"""gpud's end hook (issue 35): the command of --end-hook runs when a job
ends, done, failed (its time limit) or cancelled, with the job's id,
state, result path, workload and name as arguments and GPUD_JOB_*
variables, its output in gpud's log; a hook that never ends is killed at
--end-hook-timeout while gpud keeps serving, and one running does not
hold up gpud's shutdown; --check-config refuses a hook that is not an
absolute path of an executable regular file."""
import os
import subprocess
import time

from harness import GPUD, Cluster, check, run, wait_for

HOOK = """#!/bin/sh
out="$HOOK_DIR/hook-$1.txt"
printf '%s\\n' "$@" > "$out.tmp"
env | grep '^GPUD_JOB_' | sort >> "$out.tmp"
mv "$out.tmp" "$out"
echo "hello from the hook of job $1"
if [ "$5" = "sleeper" ]; then exec sleep 1000; fi
"""


def hook_lines(cl, job, timeout=20):
    path = os.path.join(cl.dir, "hook-%d.txt" % job)
    wait_for(lambda: os.path.exists(path), timeout, "the end hook of job %d" % job)
    return open(path).read().splitlines()


def check_hook(cl, job, state, name):
    lines = hook_lines(cl, job)
    results = os.path.join(cl.data, "results", "job-%d" % job)
    check(lines[0] == str(job) and lines[1] == state and lines[2].startswith(results)
          and lines[3] == "graveler" and lines[4] == name, "hook args of job %d: %s" % (job, lines))
    env = dict(l.split("=", 1) for l in lines[5:])
    check(env == {"GPUD_JOB_ID": str(job), "GPUD_JOB_STATE": state, "GPUD_JOB_RESULT": lines[2],
                  "GPUD_JOB_WORKLOAD": "graveler", "GPUD_JOB_NAME": name},
          "hook environment of job %d: %s" % (job, env))
    wait_for(lambda: "end hook job=%d: hello from the hook of job %d" % (job, job) in cl.log_text("gpud"),
             10, "the hook's output in gpud's log")


def check_config(cl, hook):
    def refused(path, why):
        r = subprocess.run([GPUD, "--data", os.path.join(cl.dir, "cc"), "--config", os.devnull,
                            "--end-hook", path, "--check-config"], capture_output=True, text=True, timeout=30)
        check(r.returncode != 0 and why in r.stderr, "--end-hook %s: %d %s" % (path, r.returncode, r.stderr))
    refused("hook.sh", "an absolute path is needed")
    refused(cl.dir, "not a regular file")
    refused(os.path.join(cl.dir, "missing"), "not a regular file")
    plain = os.path.join(cl.dir, "plain.sh")
    open(plain, "w").write("#!/bin/sh\n")
    os.chmod(plain, 0o644)
    refused(plain, "not executable")
    r = subprocess.run([GPUD, "--data", os.path.join(cl.dir, "cc"), "--config", os.devnull,
                        "--end-hook", hook, "--check-config"], capture_output=True, text=True, timeout=30)
    check(r.returncode == 0 and "end-hook = %s" % hook in r.stdout, "a good hook: %s %s" % (r.stdout, r.stderr))


def test_end_hook(cl: Cluster):
    hook = os.path.join(cl.dir, "hook.sh")
    with open(hook, "w") as f:
        f.write(HOOK)
    os.chmod(hook, 0o755)
    check_config(cl, hook)
    cl.gpud_args = ["--end-hook", hook, "--end-hook-timeout", "2", "--end-hook-max", "2",
                    "--heartbeat", "0.3"]
    cl.start_gpud(env={"HOOK_DIR": cl.dir})
    cl.start_worker("cpu:1")

    done = int(cl.ctl("submit", "graveler", "--battles", "100000", "--seed", "5", "--name", "small").stdout)
    cl.wait_job(done, 60)
    check_hook(cl, done, "done", "small")

    cancelled = int(cl.ctl("submit", "graveler", "--battles", "100000000000", "--name", "big").stdout)
    wait_for(lambda: cl.status(cancelled)["state"] == "running", 30, "the big job to run")
    cl.ctl("cancel", str(cancelled))
    check_hook(cl, cancelled, "cancelled", "big")

    failed = int(cl.ctl("submit", "graveler", "--battles", "100000000000", "--name", "limited",
                        "--time-limit", "1s").stdout)
    wait_for(lambda: cl.status(failed)["state"] == "failed", 30, "the time limit")
    check_hook(cl, failed, "failed", "limited")

    # A hook that never ends: killed at its timeout; gpud serves meanwhile.
    sleeper = int(cl.ctl("submit", "graveler", "--battles", "100000000000", "--name", "sleeper").stdout)
    cl.ctl("cancel", str(sleeper))
    hook_lines(cl, sleeper)
    t0 = time.time()
    check(cl.ctl_ok("status"), "gpud does not answer while a hook sleeps")
    wait_for(lambda: "end hook job=%d killed after 2 s" % sleeper in cl.log_text("gpud"), 20,
             "the sleeping hook to be killed")
    check(time.time() - t0 < 10, "the hook was killed after %.1f s" % (time.time() - t0))
    after = int(cl.ctl("submit", "graveler", "--battles", "100000", "--seed", "6", "--name", "after").stdout)
    cl.wait_job(after, 60)
    check_hook(cl, after, "done", "after")

    # --end-hook-max 2: a third hook waits until one of two running ends
    # (here: is killed at its timeout).
    three = [int(cl.ctl("submit", "graveler", "--battles", "100000000000", "--name", "sleeper").stdout)
             for _ in range(3)]
    for j in three:
        cl.ctl("cancel", str(j))
    started = lambda: [j for j in three if os.path.exists(os.path.join(cl.dir, "hook-%d.txt" % j))]
    wait_for(lambda: len(started()) >= 2, 20, "two hooks to start")
    time.sleep(1)
    check(len(started()) == 2, "hooks running beyond --end-hook-max 2: %s" % started())
    last = [j for j in three if j not in started()][0]
    hook_lines(cl, last)
    check(any("end hook job=%d killed after 2 s" % j in cl.log_text("gpud") for j in started() if j != last),
          "the third hook started before one of the first two ended")
    for j in three:
        wait_for(lambda: "end hook job=%d killed after 2 s" % j in cl.log_text("gpud"), 20,
                 "the hook of job %d to be killed" % j)

    # A hook gone from its path: logged, and gpud goes on.
    os.rename(hook, hook + ".away")
    gone = int(cl.ctl("submit", "graveler", "--battles", "100000000000", "--name", "gone").stdout)
    cl.ctl("cancel", str(gone))
    wait_for(lambda: "end hook job=%d: cannot run %s" % (gone, hook) in cl.log_text("gpud"), 20,
             "the missing hook to be logged")
    os.rename(hook + ".away", hook)
    check(cl.ctl_ok("status"), "gpud does not answer after a hook could not run")

    # Shutdown does not wait for a hook.
    sleeper2 = int(cl.ctl("submit", "graveler", "--battles", "100000000000", "--name", "sleeper").stdout)
    cl.ctl("cancel", str(sleeper2))
    hook_lines(cl, sleeper2)
    t0 = time.time()
    check(cl.stop_gpud() == 0, "gpud did not stop cleanly with a hook running")
    check(time.time() - t0 < 10, "gpud's shutdown took %.1f s with a hook running" % (time.time() - t0))
    check("end hook job=%d killed: gpud stops" % sleeper2 in cl.log_text("gpud"), "no word of the kill")


if __name__ == "__main__":
    run(test_end_hook)
