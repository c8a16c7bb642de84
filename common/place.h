/* place.h - where a worker runs: its host name and, under a cluster engine,
 * its Slurm job and array task or its Kubernetes pod.
 *
 * gpuworker reads its place from its environment once at start
 * (place_from_env) and sends it in HELLO (msg.h); gpud checks every field
 * again (place_check) before it stores the place with the worker, logs it
 * and shows it in `gpuctl workers`. Every field is optional: "" means not
 * known (no cluster engine, or a value that did not pass the check).
 *
 * Fields and their rules (the same both ways):
 *   host         1..PLACE_HOST_MAX of [A-Za-z0-9._-] (gethostname)
 *   slurm_job    SLURM_JOB_ID: 1..20 decimal digits
 *   slurm_array  SLURM_ARRAY_JOB_ID "_" SLURM_ARRAY_TASK_ID, each 1..20
 *                digits: Slurm's own "%A_%a" spelling of an array task
 *   pod          POD_NAME (the downward API), else HOSTNAME when
 *                KUBERNETES_SERVICE_HOST is set: 1..PLACE_POD_MAX of
 *                [a-z0-9.-], first and last alphanumeric (a DNS subdomain,
 *                as Kubernetes names objects)
 *
 * A worker's instance names one gpuworker process among those that share
 * its credential: gpud keys its worker rows by (credential, instance).
 * Its rule: 1..PLACE_INSTANCE_MAX of [A-Za-z0-9._:@/+-].
 *
 * Ownership: a struct place holds its text inline; nothing to free.
 * Threads: pure functions; the environment is read only through the
 * getenv callback the caller passes.
 */
#ifndef GPUD_PLACE_H
#define GPUD_PLACE_H

#include <stddef.h>

#define PLACE_HOST_MAX 64    /* Linux's HOST_NAME_MAX */
#define PLACE_SLURM_MAX 41   /* "20 digits_20 digits" */
#define PLACE_POD_MAX 253    /* a Kubernetes object name */
#define PLACE_TEXT_MAX 512   /* place_format's longest line, with its NUL */
#define PLACE_INSTANCE_MAX 64 /* a worker process's instance name */

struct place {
	char host[PLACE_HOST_MAX + 1];
	char slurm_job[PLACE_SLURM_MAX + 1];
	char slurm_array[PLACE_SLURM_MAX + 1];
	char pod[PLACE_POD_MAX + 1];
};

enum place_field {
	PLACE_HOST,
	PLACE_SLURM_JOB,
	PLACE_SLURM_ARRAY,
	PLACE_POD,
	PLACE_FIELDS,
};

/* The field's name in HELLO, the store and --json ("slurm_array"). */
const char *place_field_name(enum place_field f);

/* 0 when text is a valid value of field f (see above), else GERR_INVAL.
 * "" and NULL are not valid values (they mean "absent"). */
int place_check(enum place_field f, const char *text);

/* Sets field f of p from text: 0, or GERR_INVAL (p unchanged) when text
 * breaks the field's rule. NULL or "" clears the field. */
int place_set(struct place *p, enum place_field f, const char *text);

/* The field's value in p ("" when absent). */
const char *place_get(const struct place *p, enum place_field f);

/* Reads the variables named above through env (getenv's contract: NULL
 * when unset) and takes hostname as the host (NULL: none). A value that
 * breaks its rule is left out, and the first one is named in err (which
 * stays "" when all were valid), so the caller may warn. Always fills
 * *ret. */
typedef const char *(*place_getenv_fn)(void *opaque, const char *name);
void place_from_env(struct place *ret, const char *hostname,
		    place_getenv_fn env, void *opaque, char *err,
		    size_t errlen);

/* One line for logs and events: "host=node7 slurm_job=1240
 * slurm_array=1234_5", the absent fields left out; "" when nothing is
 * known. Writes at most len bytes, NUL included, and only whole fields
 * (PLACE_TEXT_MAX always suffices). */
void place_format(const struct place *p, char *buf, size_t len);

/* 0 when text is a valid instance name (see above), else GERR_INVAL. */
int place_instance_check(const char *text);

/* The default instance of a gpuworker process on device (its --device
 * name, "" or NULL: none) whose process id is pid, unique among the
 * processes of one credential and stable for the life of the process:
 *   in a pod                POD/DEVICE
 *   under Slurm             HOST/slurmARRAYJOB_TASK/DEVICE (or slurmJOB;
 *                           ".N" after it when SLURM_PROCID is N > 0)
 *   otherwise               HOST:PID (or pidPID without a host)
 * Characters outside the rule become '_'; a name longer than
 * PLACE_INSTANCE_MAX keeps its last PLACE_INSTANCE_MAX characters (the
 * parts that tell processes apart). Writes a valid name into ret
 * (PLACE_INSTANCE_MAX + 1 bytes). */
void place_default_instance(char ret[PLACE_INSTANCE_MAX + 1],
			    const struct place *p, const char *device,
			    long pid, place_getenv_fn env, void *opaque);

#endif
