/* sched_fx.c - the lease policy's test fixture (sched_fx.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "sched_fx.h"

void sched_fx_open(char dir[64], const char *tag, struct store **ret_st)
{
	char path[128], err[256];

	snprintf(dir, 64, "/tmp/gpud-%s-XXXXXX", tag);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/gpud.db", dir);
	assert_int_equal(store_open(path, ret_st, err, sizeof(err)), 0);
}

int64_t sched_fx_graveler(struct store *st, const char *battles,
			  const char *seed, json_t **ret_params)
{
	const struct workload *wl = workload_find("graveler");
	json_t *args = json_pack("{s:s, s:s}", "battles", battles, "seed", seed);
	char err[256], *text;
	uint64_t total;
	int64_t job;

	assert_non_null(wl);
	assert_int_equal(wl->parse_params(workload_ctx(wl), args, ret_params,
					  &total, err, sizeof(err)), 0);
	json_decref(args);
	text = json_dumps(*ret_params, JSON_COMPACT);
	assert_int_equal(store_job_insert(st, "graveler", text, total, 1000,
					  &job), 0);
	free(text);
	return job;
}

int sched_fx_verify(struct store *st, const struct sched_policy *pol,
		    int64_t lease, uint64_t epoch, int *ret_finished)
{
	struct sched_verify v = {0};
	int passed;

	v.pol = pol;
	v.lease_id = lease;
	v.epoch = epoch;
	v.seed = 42;
	sched_verify_load(st, &v);
	assert_int_equal(v.rc, 0);
	sched_verify_check(&v);
	sched_verify_commit(st, &v);
	assert_int_equal(v.rc, 0);
	passed = v.passed;
	if (ret_finished)
		*ret_finished = v.job_finished;
	sched_verify_clear(&v);
	return passed;
}

void sched_fx_close(const char *dir, struct store *st, json_t *params)
{
	char cmd[128];

	store_close(st);
	json_decref(params);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}
