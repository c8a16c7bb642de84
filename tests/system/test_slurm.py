"""gpud's workers as a real Slurm job array (deploy/slurm/gpuworker.sbatch).

The test starts a single-node Slurm from Debian's packages on 127.0.0.1 in
its temporary directory: munged with its own key and socket, slurmctld and
slurmd on free ports, no cgroups (proctrack/linuxproc, task/none). It
submits the sbatch script as an array of 3 CPU tasks against a gpud, then
preempts one task in the middle of a lease the way Slurm preempts (SIGTERM
to every process of the task: scancel --full --signal=TERM) and requeues
it (scontrol requeue), and gives another the time-limit warning the script
asks for (USR1 to the batch shell alone, which passes it on).

Asserts: the job's answer equals gpurun's; no lease's result was stored
twice (gpud's events: one 'result' per lease); the preempted lease resumed
from the checkpoint its task uploaded on SIGTERM (gpud's grant line,
resume_from=); the preempted task's gpuworker exited 0 after releasing; the
warned task's gpuworker got SIGTERM from its shell and exited 0; the
requeued task ran again; gpuctl workers shows the Slurm ids; the array's
tasks, sharing one credential, are a worker each (TOKEN@HOST/slurmA_T/cpu,
the requeued task the same worker again) and more than one got leases of
the job. Prints how long
the preempted lease waited between its release and its next grant.

Exit 77 only when Slurm cannot run here at all (not root, or Debian's
slurmctld, slurmd, slurm-client or munge packages missing).
"""
import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import time

from harness import (WORKER, Cluster, TestFailure, answer_core, check, lease_units_for,
                     reference_answer, run, wait_for)

SBATCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "deploy", "slurm",
                      "gpuworker.sbatch")
TOOLS = ("munged", "munge", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "scontrol")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Slurm:
    """munged + slurmctld + slurmd for one node, all under dir."""

    def __init__(self, base):
        self.dir = os.path.join(base, "slurm")
        self.procs = []
        self.node = socket.gethostname().split(".")[0]
        self.env = dict(os.environ, SLURM_CONF=os.path.join(self.dir, "slurm.conf"))

    def _spawn(self, name, args):
        log = open(os.path.join(self.dir, name + ".out"), "wb")
        p = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=self.env)
        self.procs.append(p)
        return p

    def start(self):
        d = self.dir
        for sub in ("munge", "state", "spool"):
            os.makedirs(os.path.join(d, sub), mode=0o700)
        os.chmod(d, 0o755)
        key = os.path.join(d, "munge", "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        sock = os.path.join(d, "munge", "munge.sock")
        self._spawn("munged", ["munged", "-F", "-f", "--socket", sock, "--key-file", key,
                               "--pid-file", os.path.join(d, "munge", "munged.pid"),
                               "--seed-file", os.path.join(d, "munge", "seed"),
                               "--log-file", os.path.join(d, "munge", "munged.log")])
        wait_for(lambda: os.path.exists(sock), 10, "munged's socket")
        with open(self.env["SLURM_CONF"], "w") as f:
            f.write("""ClusterName=gpudtest
SlurmctldHost={node}(127.0.0.1)
SlurmctldPort={cport}
SlurmdPort={dport}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={sock}
SlurmUser=root
SlurmdUser=root
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
SchedulerParameters=sched_interval=1
MessageTimeout=10
KillWait=3
JobRequeue=1
NodeName={node} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN
PartitionName=test Nodes={node} Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
""".format(node=self.node, cport=free_port(), dport=free_port(), sock=sock, d=d,
           cpus=os.cpu_count() or 1))
        conf = self.env["SLURM_CONF"]
        self._spawn("slurmctld", ["slurmctld", "-D", "-i", "-f", conf])
        self._spawn("slurmd", ["slurmd", "-D", "-f", conf])

        def node_idle():
            for p in self.procs:
                check(p.poll() is None, "a Slurm daemon exited at start:\n" + self.logs())
            r = self.cmd("sinfo", "-h", "-o", "%T", check_rc=False)
            return r.returncode == 0 and r.stdout.strip() == "idle"
        wait_for(node_idle, 30, "Slurm's node to be idle", interval=0.3)

    def cmd(self, *args, check_rc=True):
        r = subprocess.run(list(args), capture_output=True, text=True, env=self.env, timeout=30)
        if check_rc and r.returncode != 0:
            raise TestFailure("%s failed (%d): %s%s" % (" ".join(args), r.returncode, r.stdout, r.stderr))
        return r

    def task_state(self, job, task):
        r = self.cmd("scontrol", "-o", "show", "job", "%s_%d" % (job, task), check_rc=False)
        m = re.search(r"JobState=(\S+)", r.stdout)
        return m.group(1) if m else None

    def logs(self):
        out = []
        for name in ("slurmctld.log", "slurmd.log", "munged.out", "slurmctld.out", "slurmd.out"):
            path = os.path.join(self.dir, name)
            if os.path.exists(path):
                with open(path, errors="replace") as f:
                    out.append("== %s ==\n%s" % (name, "".join(f.readlines()[-15:])))
        return "\n".join(out)

    def stop(self):
        if os.path.exists(self.env["SLURM_CONF"]):
            self.cmd("scancel", "--full", "-u", "root", check_rc=False)
            try:
                wait_for(lambda: not self.cmd("squeue", "-h", check_rc=False).stdout.strip(), 15,
                         "Slurm's jobs to end", interval=0.3)
            except TestFailure:
                pass
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait(10)


def slurm_missing():
    if os.geteuid() != 0:
        return "slurmd must run as root to start jobs, and this test is not root"
    missing = [t for t in TOOLS if not shutil.which(t)]
    if missing:
        return "missing %s (Debian: slurmctld slurmd slurm-client munge)" % " ".join(missing)
    return None


def task_log(out_dir, task):
    path = os.path.join(out_dir, "task-%d.out" % task)
    if not os.path.exists(path):
        return ""
    with open(path, errors="replace") as f:
        return f.read()


def events(data):
    db = sqlite3.connect("file:%s?mode=ro" % os.path.join(data, "gpud.db"), uri=True, timeout=10)
    try:
        return db.execute("SELECT ts, lease_id, epoch, kind, detail FROM events "
                          "WHERE lease_id != 0 ORDER BY id").fetchall()
    finally:
        db.close()


def test_slurm(cl: Cluster):
    units = lease_units_for(2)
    leases, seed, tasks = 6, 23, 3
    battles = leases * units
    ref = reference_answer("graveler", battles=battles, seed=seed)
    cl.gpud_args = ["--lease-units", str(units), "--heartbeat", "1"]
    cl.start_gpud()
    slurm = Slurm(cl.dir)
    try:
        t = time.time()
        slurm.start()
        print("slurm: started in %.1fs" % (time.time() - t))
        job = cl.submit("graveler", battles=battles, seed=seed)
        out_dir = os.path.join(cl.dir, "tasks")
        os.makedirs(out_dir)
        env = dict(GPUD="127.0.0.1:%d" % cl.port,
                   GPUD_TOKEN=os.path.join(cl.data, "local-worker.token"),
                   GPUWORKER=os.path.abspath(WORKER),
                   GPUWORKER_ARGS="--checkpoint-interval 0.5 --log-level debug")
        slurm.env.update(env)
        r = slurm.cmd("sbatch", "--parsable", "--array=0-%d" % (tasks - 1), "--cpus-per-task=1",
                      "--gres=gpu:0", "--time=10", "--output=%s/task-%%a.out" % out_dir, SBATCH)
        array = r.stdout.strip().split(";")[0]
        t0 = time.time()

        # Preempt task 1 once it has a checkpoint of its current lease stored.
        victim = 1

        def victim_mid_lease():
            grants = re.findall(r"lease granted job=%d lease=(\d+) epoch=(\d+)" % job,
                                task_log(out_dir, victim))
            if not grants:
                return None
            lease, epoch = grants[-1]
            m = re.findall(r"checkpoint stored job=%d lease=%s epoch=%s worker=\S+ units_done=(\d+)"
                           % (job, lease, epoch), cl.log_text("gpud"))
            if m and 0 < int(m[-1]) < units // 2:
                return int(lease), int(epoch)
            return None
        lease, epoch = wait_for(victim_mid_lease, 60, "task %d in the middle of a lease" % victim)
        slurm.cmd("scancel", "--full", "--signal=TERM", "%s_%d" % (array, victim))
        wait_for(lambda: slurm.task_state(array, victim) == "COMPLETED", 30,
                 "the preempted task to end after releasing its lease")
        log = task_log(out_dir, victim)
        check("lease released job=%d lease=%d epoch=%d" % (job, lease, epoch) in log,
              "the preempted task did not release its lease:\n" + log[-2000:])
        check("gpuworker exited with status 0" in log, "gpuworker's exit after SIGTERM:\n" + log[-2000:])
        # The time-limit warning (--signal=B:USR1@120) reaches the batch
        # shell alone, which passes it on to gpuworker as SIGTERM.
        warned = 2
        slurm.cmd("scancel", "--batch", "--signal=USR1", "%s_%d" % (array, warned))
        wait_for(lambda: slurm.task_state(array, warned) == "COMPLETED", 30,
                 "task %d to end after the time-limit warning" % warned)
        log = task_log(out_dir, warned)
        check("Terminated: checkpointing and releasing" in log and "gpuworker exited with status 0" in log,
              "task %d's gpuworker should have had SIGTERM from its shell:\n%s" % (warned, log[-2000:]))
        slurm.cmd("scontrol", "requeue", "%s_%d" % (array, victim))
        # A requeued task waits for the scheduler's next pass; an update of
        # its start time, once it is pending again, makes one now. slurmd
        # may refuse to start a job id it has just signalled ("Job N
        # already killed, do not launch batch job": the task FAILED at
        # once, gpuworker never ran): requeue it again.
        tq = time.time()

        def restarted():
            if re.search(r"restart [1-9]", task_log(out_dir, victim)):
                return True
            state = slurm.task_state(array, victim)
            if state == "PENDING":
                slurm.cmd("scontrol", "update", "JobId=%s_%d" % (array, victim), "StartTime=now",
                          check_rc=False)
            elif state == "FAILED":
                slurm.cmd("scontrol", "requeue", "%s_%d" % (array, victim), check_rc=False)
            return False
        wait_for(restarted, 30, "the requeued task to start", interval=0.5)
        requeued_s = time.time() - tq

        cl.wait_job(job, timeout=240)
        took = time.time() - t0
        check(answer_core(cl.result(job)["answer"]) == ref, "answer differs from gpurun's")

        ev = events(cl.data)
        results = {}
        for ts, lid, ep, kind, _ in ev:
            if kind == "result":
                results[lid] = results.get(lid, 0) + 1
        check(len(results) == leases and set(results.values()) == {1},
              "each of the %d leases should have exactly one stored result: %s" % (leases, results))
        released = [ts for ts, lid, ep, kind, _ in ev
                    if kind == "release" and lid == lease and ep == epoch]
        regrant = [ts for ts, lid, ep, kind, _ in ev if kind == "grant" and lid == lease and ep > epoch]
        check(released and regrant, "the preempted lease's release and next grant: %s" % ev)
        ckpt = re.findall(r"checkpoint stored job=%d lease=%d epoch=%d worker=\S+ units_done=(\d+)"
                          % (job, lease, epoch), cl.log_text("gpud"))
        m = re.search(r"lease grant job=%d lease=%d epoch=%d .*resume_from=(\d+)"
                      % (job, lease, epoch + 1), cl.log_text("gpud"))
        check(m and int(m.group(1)) == int(ckpt[-1]) > 0,
              "the preempted lease should resume from its SIGTERM checkpoint (%s): %s"
              % (ckpt, m and m.group(0)))

        # The requeued task logged in again, with the same array task id.
        def logins():
            return len(re.findall(r"worker online .* slurm_array=%s_%d\b" % (array, victim),
                                  cl.log_text("gpud")))
        wait_for(lambda: logins() >= 2, 30, "the requeued task to log in")
        check(logins() == 2, "the task should log in once per run: %d" % logins())
        ws = cl.ctl("workers", "--json").stdout
        check(re.search(r'"slurm_array": "%s_\d"' % array, ws) and '"slurm_job": "' in ws,
              "gpuctl workers --json should show the Slurm ids: " + ws)
        text = cl.ctl("workers").stdout
        check("WHERE" in text.splitlines()[0] and re.search(r" slurm %s_\d \(job \d+\)" % array, text),
              "gpuctl workers should show the Slurm ids: " + text)
        # One credential, a worker per array task (a requeued task is the
        # same worker: its instance names the array task, not the run).
        token = cl.token()[0]
        rows = sorted((w for w in json.loads(ws) if w["credential"] == token),
                      key=lambda w: w["instance"])
        check(len(rows) == tasks and
              all(re.search(r"/slurm%s_%d/cpu$" % (array, i), w["instance"]) and
                  w["name"] == "%s@%s" % (token, w["instance"]) for i, w in enumerate(rows)),
              "a worker per array task on one credential: %s" % rows)
        ids = {w["id"] for w in rows}
        db = sqlite3.connect("file:%s?mode=ro" % os.path.join(cl.data, "gpud.db"), uri=True)
        try:
            granted = {r[0] for r in db.execute("SELECT DISTINCT worker_id FROM events "
                                                "WHERE kind = 'grant' AND job_id = ?", (job,))}
        finally:
            db.close()
        check(len(granted) >= 2 and granted <= ids,
              "the array's workers should share the job: %s of %s" % (granted, ids))
        print("slurm: job of %d leases done in %.1fs by %d array tasks; the preempted lease %d "
              "waited %.2fs from its release to its next grant and resumed at %s of %d units; "
              "the requeued task started %.1fs after scontrol requeue"
              % (len(results), took, tasks, lease, regrant[0] - released[-1], ckpt[-1], units,
                 requeued_s))
    except Exception:
        print(slurm.logs())
        for t in range(tasks):
            print("== task %d ==\n%s" % (t, task_log(os.path.join(cl.dir, "tasks"), t)[-1500:]))
        raise
    finally:
        slurm.stop()


if __name__ == "__main__":
    run(test_slurm, missing=slurm_missing)
