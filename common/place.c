/* place.c - where a worker runs (see place.h).
 *
 * Invariant: every non-empty field of a struct place passed place_check
 * for that field; place_set is the only writer besides zeroing.
 */
#include "place.h"

#include <stdio.h>
#include <string.h>

#include "gerr.h"

#define DIGITS_MAX 20 /* UINT64_MAX has 20 */

struct field_rule {
	const char *name;
	size_t off, size;
};

static const struct field_rule rules[PLACE_FIELDS] = {
	[PLACE_HOST] = { "host", offsetof(struct place, host),
			 sizeof(((struct place *)0)->host) },
	[PLACE_SLURM_JOB] = { "slurm_job", offsetof(struct place, slurm_job),
			      sizeof(((struct place *)0)->slurm_job) },
	[PLACE_SLURM_ARRAY] = { "slurm_array",
				offsetof(struct place, slurm_array),
				sizeof(((struct place *)0)->slurm_array) },
	[PLACE_POD] = { "pod", offsetof(struct place, pod),
			sizeof(((struct place *)0)->pod) },
};

const char *place_field_name(enum place_field f)
{
	return (unsigned)f < PLACE_FIELDS ? rules[f].name : "?";
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_lower_alnum(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z');
}

/* Length of the run of decimal digits at s. */
static size_t digits(const char *s)
{
	size_t n = 0;

	while (is_digit(s[n]))
		n++;
	return n;
}

static int host_ok(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			     "0123456789._-");

	return n > 0 && n <= PLACE_HOST_MAX && s[n] == '\0';
}

static int slurm_job_ok(const char *s)
{
	size_t n = digits(s);

	return n > 0 && n <= DIGITS_MAX && s[n] == '\0';
}

static int slurm_array_ok(const char *s)
{
	size_t a = digits(s), b;

	if (a == 0 || a > DIGITS_MAX || s[a] != '_')
		return 0;
	b = digits(s + a + 1);
	return b > 0 && b <= DIGITS_MAX && s[a + 1 + b] == '\0';
}

static int pod_ok(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789.-");

	return n > 0 && n <= PLACE_POD_MAX && s[n] == '\0' &&
	       is_lower_alnum(s[0]) && is_lower_alnum(s[n - 1]);
}

int place_check(enum place_field f, const char *text)
{
	int ok = 0;

	if (!text || !*text)
		return GERR_INVAL;
	switch (f) {
	case PLACE_HOST: ok = host_ok(text); break;
	case PLACE_SLURM_JOB: ok = slurm_job_ok(text); break;
	case PLACE_SLURM_ARRAY: ok = slurm_array_ok(text); break;
	case PLACE_POD: ok = pod_ok(text); break;
	default: ok = 0; break;
	}
	return ok ? 0 : GERR_INVAL;
}

static char *slot(const struct place *p, enum place_field f)
{
	return (char *)p + rules[f].off;
}

int place_set(struct place *p, enum place_field f, const char *text)
{
	if (!p || (unsigned)f >= PLACE_FIELDS)
		return GERR_INVAL;
	if (!text || !*text) {
		slot(p, f)[0] = '\0';
		return 0;
	}
	if (place_check(f, text))
		return GERR_INVAL;
	/* place_check bounded the length below the slot's size. */
	snprintf(slot(p, f), rules[f].size, "%s", text);
	return 0;
}

const char *place_get(const struct place *p, enum place_field f)
{
	return p && (unsigned)f < PLACE_FIELDS ? slot(p, f) : "";
}

/* Set a field, or note in err (first failure only) why it was left out. */
static void take(struct place *p, enum place_field f, const char *what,
		 const char *text, char *err, size_t errlen)
{
	if (place_set(p, f, text) == 0 || !err || errlen == 0 || *err)
		return;
	snprintf(err, errlen, "%s is not a valid %s (%.40s%s); left out", what,
		 rules[f].name, text, strlen(text) > 40 ? "..." : "");
}

void place_from_env(struct place *ret, const char *hostname,
		    place_getenv_fn env, void *opaque, char *err,
		    size_t errlen)
{
	const char *job, *task, *pod, *pod_var;
	char array[2 * PLACE_SLURM_MAX + 2];

	memset(ret, 0, sizeof(*ret));
	if (err && errlen)
		err[0] = '\0';
	if (hostname)
		take(ret, PLACE_HOST, "the host name", hostname, err, errlen);
	if (!env)
		return;
	if ((job = env(opaque, "SLURM_JOB_ID")))
		take(ret, PLACE_SLURM_JOB, "SLURM_JOB_ID", job, err, errlen);
	job = env(opaque, "SLURM_ARRAY_JOB_ID");
	task = env(opaque, "SLURM_ARRAY_TASK_ID");
	if (job && task) {
		/* Too long for the slot: place_set refuses it whole. */
		snprintf(array, sizeof(array), "%.*s_%.*s", PLACE_SLURM_MAX, job,
			 PLACE_SLURM_MAX, task);
		take(ret, PLACE_SLURM_ARRAY,
		     "SLURM_ARRAY_JOB_ID_SLURM_ARRAY_TASK_ID", array, err, errlen);
	}
	/* A pod's HOSTNAME is its name (cut to 63 characters). */
	pod_var = "POD_NAME";
	pod = env(opaque, pod_var);
	if (!pod && env(opaque, "KUBERNETES_SERVICE_HOST")) {
		pod_var = "HOSTNAME";
		pod = env(opaque, pod_var);
	}
	if (pod)
		take(ret, PLACE_POD, pod_var, pod, err, errlen);
}

void place_format(const struct place *p, char *buf, size_t len)
{
	size_t used = 0;

	if (!buf || len == 0)
		return;
	buf[0] = '\0';
	for (int f = 0; p && f < PLACE_FIELDS; f++) {
		const char *v = slot(p, (enum place_field)f);
		int n;

		if (!*v)
			continue;
		n = snprintf(buf + used, len - used, "%s%s=%s", used ? " " : "",
			     rules[f].name, v);
		if (n < 0 || (size_t)n >= len - used) {
			buf[used] = '\0'; /* whole fields only */
			return;
		}
		used += (size_t)n;
	}
}

#define INSTANCE_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" \
		       "0123456789._:@/+-"

int place_instance_check(const char *text)
{
	size_t n;

	if (!text)
		return GERR_INVAL;
	n = strspn(text, INSTANCE_CHARS);
	return n > 0 && n <= PLACE_INSTANCE_MAX && text[n] == '\0' ? 0
								   : GERR_INVAL;
}

void place_default_instance(char ret[PLACE_INSTANCE_MAX + 1],
			    const struct place *p, const char *device,
			    long pid, place_getenv_fn env, void *opaque)
{
	/* Every part is bounded by its slot; the sum fits. */
	char buf[PLACE_POD_MAX + PLACE_HOST_MAX + PLACE_SLURM_MAX + 128];
	const char *procid = env ? env(opaque, "SLURM_PROCID") : NULL;
	const char *dev = device && *device ? device : NULL;
	size_t n, skip;

	if (p && p->pod[0]) {
		snprintf(buf, sizeof(buf), "%s%s%s", p->pod, dev ? "/" : "",
			 dev ? dev : "");
	} else if (p && (p->slurm_array[0] || p->slurm_job[0])) {
		int proc = procid && slurm_job_ok(procid) && strlen(procid) < 10 &&
			   strcmp(procid, "0") != 0;

		snprintf(buf, sizeof(buf), "%s%sslurm%s%s%s%s%s",
			 p->host, p->host[0] ? "/" : "",
			 p->slurm_array[0] ? p->slurm_array : p->slurm_job,
			 proc ? "." : "", proc ? procid : "", dev ? "/" : "",
			 dev ? dev : "");
	} else if (p && p->host[0]) {
		snprintf(buf, sizeof(buf), "%s:%ld", p->host, pid);
	} else {
		snprintf(buf, sizeof(buf), "pid%ld", pid);
	}
	for (char *c = buf; *c; c++)
		if (!strchr(INSTANCE_CHARS, *c))
			*c = '_';
	n = strlen(buf);
	skip = n > PLACE_INSTANCE_MAX ? n - PLACE_INSTANCE_MAX : 0;
	snprintf(ret, PLACE_INSTANCE_MAX + 1, "%s", buf + skip);
}
