/* blob_audit.c - the start-up sweep, gpuctl check's blob pass and the
 * start-up check of the digests (see blob_audit.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blob.h"
#include "blob_audit.h"
#include "fileio.h"
#include "gerr.h"

/* Removals are logged one by one up to this many, then only counted. */
#define AUDIT_LOG_EACH 32

static int is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

static int ref_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct store_blob_ref *)elem)->hash);
}

static int named(const struct store_blob_ref *refs, size_t n, const char *hash)
{
	return n && bsearch(hash, refs, n, sizeof(*refs), ref_cmp) != NULL;
}

static void remove_one(const char *path, const char *what, const struct glog *log,
		       struct audit_sweep *s, size_t *count)
{
	struct stat sb;
	uint64_t size = lstat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;

	if (unlink(path) != 0) {
		LOG_WARN(log, "sweep: cannot remove %s %s: %s", what, path,
			 strerror(errno));
		return;
	}
	if (s->temps + s->orphans < AUDIT_LOG_EACH)
		LOG_INFO(log, "sweep: removed %s %s (%" PRIu64 " bytes)", what,
			 path, size);
	(*count)++;
	s->bytes += size;
}

/* One DATA/blobs/xx directory. */
static int sweep_sub(const char *sub, const char *xx, const struct store_blob_ref *refs,
		     size_t n, const struct glog *log, struct audit_sweep *s)
{
	DIR *d = opendir(sub);
	struct dirent *e;
	char path[4200];
	size_t before = s->temps + s->orphans;

	if (!d)
		return gerr_from_errno(errno);
	while ((e = readdir(d))) {
		const char *name = e->d_name;
		size_t len = strlen(name);

		if (snprintf(path, sizeof(path), "%s/%s", sub, name) >= (int)sizeof(path))
			continue;
		if (strncmp(name, ".tmp-", 5) == 0)
			remove_one(path, "temporary file", log, s, &s->temps);
		else if (len == BLOB_HASH_HEX - 1 && is_hex(name, len) &&
			 memcmp(name, xx, 2) == 0) {
			if (named(refs, n, name))
				s->kept++;
			else
				remove_one(path, "orphan blob", log, s, &s->orphans);
		}
	}
	closedir(d);
	/* Best effort: a removal the crash undoes is done again next time. */
	if (s->temps + s->orphans > before)
		fileio_fsync_path(sub);
	return 0;
}

/* Temporary files gpud writes beside its blobs: the address files'
 * (gpud.addr, gpud.http) and the token and key files' (fileio, renamed
 * into place when complete) and the write probe's. Only
 * these names: anything else in the directory is the operator's. */
static void sweep_temps(const char *dir, const struct glog *log, struct audit_sweep *s)
{
	static const char *const prefixes[] = {
		"gpud.addr.tmp", "gpud.http.tmp-", "local-worker.token.tmp-",
		"gpud.key.tmp-", ".write-probe-",
	};
	char path[4200];
	struct dirent *e;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((e = readdir(d)))
		for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
			if (strncmp(e->d_name, prefixes[i], strlen(prefixes[i])) == 0 &&
			    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) <
				    (int)sizeof(path)) {
				remove_one(path, "temporary file", log, s, &s->temps);
				break;
			}
	closedir(d);
}

int audit_sweep(const char *data_dir, const struct store_blob_ref *refs,
		size_t n, const struct glog *log, struct audit_sweep *ret)
{
	struct audit_sweep s = {0};
	char top[4200], sub[4300];
	struct dirent *e;
	DIR *d;
	int r = 0;

	if (!data_dir || (n && !refs) || !log)
		return GERR_INVAL;
	if (snprintf(top, sizeof(top), "%s/blobs", data_dir) >= (int)sizeof(top))
		return GERR_TOOBIG;
	sweep_temps(data_dir, log, &s);
	sweep_temps(top, log, &s);
	if (ret)
		*ret = s;
	d = opendir(top);
	if (!d)
		return errno == ENOENT ? 0 : gerr_from_errno(errno);
	while ((e = readdir(d))) {
		if (strlen(e->d_name) != 2 || !is_hex(e->d_name, 2))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", top, e->d_name);
		int rs = sweep_sub(sub, e->d_name, refs, n, log, &s);
		if (rs && !r)
			r = rs;
	}
	closedir(d);
	if (s.temps || s.orphans)
		LOG_INFO(log, "sweep: removed %zu temporary file(s) and %zu orphan "
			 "blob(s), %" PRIu64 " bytes; %zu blob(s) in use", s.temps,
			 s.orphans, s.bytes, s.kept);
	if (ret)
		*ret = s;
	return r;
}

size_t audit_missing(const char *data_dir, const struct store_blob_ref *refs,
		     size_t n)
{
	char path[4300];
	size_t missing = 0;

	for (size_t i = 0; i < n; i++) {
		const char *h = refs[i].hash;

		if (refs[i].job_id == 0 || /* a guess of the sweep's, not a name */
		    (i > 0 && strcmp(h, refs[i - 1].hash) == 0) ||
		    strlen(h) != BLOB_HASH_HEX - 1 || !is_hex(h, strlen(h)))
			continue;
		snprintf(path, sizeof(path), "%s/blobs/%.2s/%s", data_dir, h, h);
		missing += access(path, F_OK) != 0;
	}
	return missing;
}

const char *audit_problem_name(int rc)
{
	switch (rc) {
	case GERR_NOTFOUND:
		return "missing";
	case GERR_CORRUPT:
		return "corrupt (its content no longer matches its hash)";
	case GERR_INVAL:
		return "not a blob name";
	case GERR_PERM:
		return "unreadable (permission denied)";
	default:
		return "unreadable";
	}
}

int audit_blobs(const char *data_dir, const struct store_blob_ref *refs,
		size_t n, struct audit_problem **ret, size_t *ret_n,
		size_t *ret_checked)
{
	struct audit_problem *p = NULL;
	size_t np = 0, cap = 0, checked = 0;

	if (!data_dir || (n && !refs) || !ret || !ret_n || !ret_checked)
		return GERR_INVAL;
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		int rc = blob_store_check(data_dir, refs[i].hash);

		while (j < n && strcmp(refs[j].hash, refs[i].hash) == 0)
			j++;
		checked++;
		for (size_t k = i; rc && k < j; k++) {
			if (np == cap) {
				size_t ncap = cap ? 2 * cap : 16;
				void *na = realloc(p, ncap * sizeof(*p));
				if (!na) {
					free(p);
					return GERR_NOMEM;
				}
				p = na;
				cap = ncap;
			}
			p[np].ref = &refs[k];
			p[np].rc = rc;
			np++;
		}
		i = j;
	}
	*ret = p;
	*ret_n = np;
	*ret_checked = checked;
	return 0;
}

/* Damaged answers and parts logged one by one up to this many. */
#define AUDIT_DIGESTS_LOGGED 32

void audit_digest_text(const struct store_digest_bad *b, char *out, size_t n)
{
	if (b->seq < 0)
		snprintf(out, n, "job %" PRId64 ": its stored answer does not "
			 "match its digest (damaged)", b->job_id);
	else
		snprintf(out, n, "job %" PRId64 ": part %" PRId64 " (lease %"
			 PRId64 ") does not match its digest (damaged)",
			 b->job_id, b->seq, b->lease_id);
}

int audit_digest_lines(const struct store_digest_bad *bad, size_t nbad,
		       uint64_t total, char ***lines, size_t *n)
{
	char text[200], **na;

	if (nbad == 0 && total == 0)
		return 0;
	na = realloc(*lines, (*n + nbad + 2) * sizeof(*na));
	if (!na)
		return GERR_NOMEM;
	*lines = na;
	for (size_t i = 0; i <= nbad; i++) {
		if (i < nbad)
			audit_digest_text(&bad[i], text, sizeof(text));
		else if (total > nbad)
			snprintf(text, sizeof(text), "and %" PRIu64 " more "
				 "answer(s) or part(s) that do not match their "
				 "digests", total - nbad);
		else
			break;
		if (!(na[*n] = strdup(text)))
			return GERR_NOMEM;
		(*n)++;
	}
	return 0;
}

size_t audit_digests(struct store *st, const struct glog *log)
{
	struct store_digest_bad *bad = NULL;
	uint64_t total = 0;
	size_t n = 0;
	char text[200];

	if (store_digest_audit(st, AUDIT_DIGESTS_LOGGED, &bad, &n, &total)) {
		LOG_WARN(log, "digest check skipped: %s", store_errmsg(st));
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		audit_digest_text(&bad[i], text, sizeof(text));
		LOG_ERROR(log, "digest check: %s: gpuctl result refuses job %"
			  PRId64, text, bad[i].job_id);
	}
	if (total)
		LOG_ERROR(log, "digest check: %" PRIu64 " stored answer(s) or "
			  "part(s) were changed outside gpud or damaged; the "
			  "rest is sound. Restore the database from a backup "
			  "(gpuctl backup) to get them back; gpuctl check lists "
			  "them", total);
	free(bad);
	return total > SIZE_MAX ? SIZE_MAX : (size_t)total;
}
