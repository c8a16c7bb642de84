/* store_fx.c - the store tests' fixture (store_fx.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "gerr.h"
#include "store_fx.h"
#include "store_test.h"

int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char err[256] = "";

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_store.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->path, sizeof(f->path), "%s/gpud.db", f->dir);
	assert_int_equal(store_open(f->path, &f->st, err, sizeof(err)), 0);
	*state = f;
	return 0;
}

int fx_teardown(void **state)
{
	struct fx *f = *state;
	char cmd[200];

	store_close(f->st);
	snprintf(cmd, sizeof(cmd), "chmod -R u+rwx '%s' && rm -rf '%s'",
		 f->dir, f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

void reopen(struct fx *f)
{
	char err[256] = "";

	store_close(f->st); /* NULL-safe */
	f->st = NULL;
	assert_int_equal(store_open(f->path, &f->st, err, sizeof(err)), 0);
}

/* Replace the fixture's store with a new database old.db in its directory,
 * as a gpud that knew only migrations 1..version made it; reopen(f) then
 * migrates it to the newest schema. */
void open_old(struct fx *f, int version)
{
	char err[256] = "";

	store_close(f->st);
	f->st = NULL;
	snprintf(f->path, sizeof(f->path), "%s/old.db", f->dir);
	assert_int_equal(store_open_version(f->path, version, &f->st, err,
					    sizeof(err)), 0);
}

int64_t add_job(struct store *st, const char *workload)
{
	int64_t id = 0;

	assert_int_equal(store_job_insert(st, workload, "{\"n\":100}", 100,
					  10.0, &id), 0);
	assert_true(id > 0);
	return id;
}

int64_t add_worker(struct store *st, const char *name)
{
	int64_t id = 0;

	assert_int_equal(store_worker_upsert(st, name, "", "cpu", 5.0, &id), 0);
	assert_true(id > 0);
	return id;
}

/* A leased lease (epoch 1) of job. */
struct store_lease add_lease(struct store *st, int64_t job,
				    int64_t worker, uint64_t units)
{
	struct store_lease l;

	assert_int_equal(store_lease_insert_leased(st, job, "{\"r\":[0,10]}",
						   units, worker, 1000.0, 20.0,
						   &l), 0);
	return l;
}

/* A lease of job with units and result "r<id>", verified. */
int64_t add_verified_lease(struct store *st, int64_t job, int64_t worker,
			   uint64_t units)
{
	struct store_lease l = add_lease(st, job, worker, units);
	int64_t id = l.id;
	char hash[32];

	snprintf(hash, sizeof(hash), "r%lld", (long long)id);
	assert_int_equal(store_lease_set_result(st, id, l.epoch, hash, units,
						30.0), 0);
	assert_int_equal(store_lease_set_verified(st, id, l.epoch, 31.0), 0);
	store_lease_clear(&l);
	return id;
}

/* A pending lease (released once: epoch 1, attempts 1). */
int64_t add_pending(struct store *st, int64_t job, int64_t worker)
{
	struct store_lease l = add_lease(st, job, worker, 10);
	int64_t id = l.id;

	assert_int_equal(store_lease_release(st, l.id, l.epoch, 21.0), 0);
	store_lease_clear(&l);
	return id;
}

void assert_str_or_null(const char *a, const char *b)
{
	if (!a || !b)
		assert_ptr_equal(a, b);
	else
		assert_string_equal(a, b);
}

int64_t claim_at(struct store *st, int64_t worker, const char *workloads,
		 double deadline, double now, struct store_lease *ret)
{
	struct store_lease l;
	int64_t id;
	int r = store_lease_claim_pending(st, worker, workloads, deadline, now,
					  &l);

	if (r == GERR_NOTFOUND)
		return 0;
	assert_int_equal(r, 0);
	id = l.id;
	if (ret)
		*ret = l;
	else
		store_lease_clear(&l);
	return id;
}

int64_t claim_id(struct store *st, int64_t worker, struct store_lease *ret)
{
	return claim_at(st, worker, "[\"graveler\"]", 99.0, 40.0, ret);
}

/* Every field of l as text: one comparison shows all that differs. */
static void lease_text(const struct store_lease *l, char *buf, size_t n)
{
	snprintf(buf, n, "id %lld job %lld spec %s units %llu state %d epoch "
		 "%llu worker %lld deadline %a attempts %u failures %u done "
		 "%llu checkpoint %s at %llu result %s updated %a error %s",
		 (long long)l->id, (long long)l->job_id, l->spec,
		 (unsigned long long)l->units, (int)l->state,
		 (unsigned long long)l->epoch, (long long)l->worker_id,
		 l->deadline, l->attempts, l->failures,
		 (unsigned long long)l->units_done,
		 l->checkpoint ? l->checkpoint : "(none)",
		 (unsigned long long)l->checkpoint_units,
		 l->result ? l->result : "(none)", l->updated_at,
		 l->last_error ? l->last_error : "(none)");
}

void assert_lease_equal(const struct store_lease *a,
			const struct store_lease *b)
{
	char ta[1024], tb[1024];

	assert_non_null(a->spec);
	assert_non_null(b->spec);
	lease_text(a, ta, sizeof(ta));
	lease_text(b, tb, sizeof(tb));
	assert_string_equal(ta, tb);
}

void get_lease(struct store *st, int64_t id, struct store_lease *l)
{
	assert_int_equal(store_lease_get(st, id, l), 0);
}
