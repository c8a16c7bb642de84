/* test_place.c - where a worker runs: each field's rule, the environment
 * read under Slurm, under Kubernetes and with neither, and the line for
 * logs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "gerr.h"
#include "place.h"
#include "unit_main.h"

/* An environment as a NULL-terminated list of "NAME=VALUE". */
static const char *fake_env(void *opaque, const char *name)
{
	size_t n = strlen(name);

	for (const char *const *e = opaque; *e; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

static void test_rules(void **state)
{
	char s[PLACE_POD_MAX + 2];

	(void)state;
	assert_int_equal(place_check(PLACE_HOST, "node-7.cluster_a"), 0);
	assert_int_equal(place_check(PLACE_HOST, "node 7"), GERR_INVAL);
	assert_int_equal(place_check(PLACE_HOST, "n\x1b[2J"), GERR_INVAL);
	assert_int_equal(place_check(PLACE_HOST, ""), GERR_INVAL);
	assert_int_equal(place_check(PLACE_HOST, NULL), GERR_INVAL);
	assert_int_equal(place_check(PLACE_SLURM_JOB, "1240"), 0);
	assert_int_equal(place_check(PLACE_SLURM_JOB, "12a"), GERR_INVAL);
	assert_int_equal(place_check(PLACE_SLURM_JOB, "-1"), GERR_INVAL);
	assert_int_equal(place_check(PLACE_SLURM_JOB, "123456789012345678901"),
			 GERR_INVAL); /* 21 digits */
	assert_int_equal(place_check(PLACE_SLURM_ARRAY, "1234_0"), 0);
	assert_int_equal(place_check(PLACE_SLURM_ARRAY, "1234"), GERR_INVAL);
	assert_int_equal(place_check(PLACE_SLURM_ARRAY, "1234_"), GERR_INVAL);
	assert_int_equal(place_check(PLACE_SLURM_ARRAY, "_5"), GERR_INVAL);
	assert_int_equal(place_check(PLACE_SLURM_ARRAY, "1_2_3"), GERR_INVAL);
	assert_int_equal(place_check(PLACE_POD, "gpuworker-2-x7k2p"), 0);
	assert_int_equal(place_check(PLACE_POD, "Gpuworker"), GERR_INVAL);
	assert_int_equal(place_check(PLACE_POD, "-w"), GERR_INVAL);
	assert_int_equal(place_check(PLACE_POD, "w-"), GERR_INVAL);
	memset(s, 'p', PLACE_POD_MAX);
	s[PLACE_POD_MAX] = '\0';
	assert_int_equal(place_check(PLACE_POD, s), 0);
	s[PLACE_POD_MAX] = 'p';
	s[PLACE_POD_MAX + 1] = '\0';
	assert_int_equal(place_check(PLACE_POD, s), GERR_INVAL);
	assert_int_equal(place_check(PLACE_FIELDS, "x"), GERR_INVAL);
	assert_string_equal(place_field_name(PLACE_SLURM_ARRAY), "slurm_array");
	assert_string_equal(place_field_name(PLACE_FIELDS), "?");
}

static void test_set(void **state)
{
	struct place p = { 0 };

	(void)state;
	assert_int_equal(place_set(&p, PLACE_HOST, "a1"), 0);
	assert_string_equal(place_get(&p, PLACE_HOST), "a1");
	/* A refused value leaves the field as it was. */
	assert_int_equal(place_set(&p, PLACE_HOST, "a b"), GERR_INVAL);
	assert_string_equal(place_get(&p, PLACE_HOST), "a1");
	assert_int_equal(place_set(&p, PLACE_HOST, NULL), 0);
	assert_string_equal(place_get(&p, PLACE_HOST), "");
	assert_string_equal(place_get(NULL, PLACE_HOST), "");
}

static void test_slurm_env(void **state)
{
	const char *env[] = { "SLURM_JOB_ID=1240", "SLURM_ARRAY_JOB_ID=1234",
			      "SLURM_ARRAY_TASK_ID=0", "HOSTNAME=node7", NULL };
	struct place p;
	char err[200], line[PLACE_TEXT_MAX];

	(void)state;
	place_from_env(&p, "node7", fake_env, env, err, sizeof(err));
	assert_string_equal(err, "");
	assert_string_equal(p.host, "node7");
	assert_string_equal(p.slurm_job, "1240");
	assert_string_equal(p.slurm_array, "1234_0");
	/* HOSTNAME alone, outside Kubernetes, names no pod. */
	assert_string_equal(p.pod, "");
	place_format(&p, line, sizeof(line));
	assert_string_equal(line, "host=node7 slurm_job=1240 slurm_array=1234_0");
	/* A short buffer is cut, still terminated. */
	place_format(&p, line, 12);
	assert_string_equal(line, "host=node7");
}

static void test_kubernetes_env(void **state)
{
	const char *by_hostname[] = { "KUBERNETES_SERVICE_HOST=10.96.0.1",
				      "HOSTNAME=gpuworker-2-x7k2p", NULL };
	const char *by_api[] = { "KUBERNETES_SERVICE_HOST=10.96.0.1",
				 "HOSTNAME=cut", "POD_NAME=gpuworker-2-x7k2p",
				 NULL };
	struct place p;
	char err[200];

	(void)state;
	place_from_env(&p, "gpuworker-2-x7k2p", fake_env, by_hostname, err,
		       sizeof(err));
	assert_string_equal(p.pod, "gpuworker-2-x7k2p");
	assert_string_equal(p.slurm_job, "");
	place_from_env(&p, NULL, fake_env, by_api, err, sizeof(err));
	assert_string_equal(p.pod, "gpuworker-2-x7k2p");
	assert_string_equal(p.host, "");
}

static void test_bad_env(void **state)
{
	const char *env[] = { "SLURM_JOB_ID=12;rm", "SLURM_ARRAY_JOB_ID=1234",
			      "SLURM_ARRAY_TASK_ID=99999999999999999999999999",
			      "POD_NAME=Bad_Pod", NULL };
	const char *none[] = { NULL };
	struct place p;
	char err[200], line[PLACE_TEXT_MAX];

	(void)state;
	place_from_env(&p, "ok", fake_env, env, err, sizeof(err));
	/* Each bad value is left out; the first is named. */
	assert_string_equal(p.slurm_job, "");
	assert_string_equal(p.slurm_array, "");
	assert_string_equal(p.pod, "");
	assert_string_equal(p.host, "ok");
	assert_non_null(strstr(err, "SLURM_JOB_ID"));
	place_from_env(&p, NULL, fake_env, none, err, sizeof(err));
	assert_string_equal(err, "");
	place_format(&p, line, sizeof(line));
	assert_string_equal(line, "");
}

static void test_instance(void **state)
{
	static const char *const slurm[] = {
		"SLURM_JOB_ID=1240", "SLURM_ARRAY_JOB_ID=1234",
		"SLURM_ARRAY_TASK_ID=5", "SLURM_PROCID=0", NULL };
	static const char *const srun[] = { "SLURM_JOB_ID=77",
		"SLURM_PROCID=3", NULL };
	static const char *const pod[] = { "POD_NAME=gpuworker-2-x7k2p", NULL };
	static const char *const none[] = { NULL };
	char s[PLACE_INSTANCE_MAX + 2], host[PLACE_HOST_MAX + 1];
	struct place p;

	(void)state;
	assert_int_equal(place_instance_check("node7/slurm1234_5/cuda:0"), 0);
	assert_int_equal(place_instance_check("a@b+c"), 0);
	assert_int_equal(place_instance_check(""), GERR_INVAL);
	assert_int_equal(place_instance_check(NULL), GERR_INVAL);
	assert_int_equal(place_instance_check("a b"), GERR_INVAL);
	assert_int_equal(place_instance_check("a\x1b"), GERR_INVAL);
	memset(s, 'i', PLACE_INSTANCE_MAX);
	s[PLACE_INSTANCE_MAX] = '\0';
	assert_int_equal(place_instance_check(s), 0);
	s[PLACE_INSTANCE_MAX] = 'i';
	s[PLACE_INSTANCE_MAX + 1] = '\0';
	assert_int_equal(place_instance_check(s), GERR_INVAL);

	place_from_env(&p, "node7", fake_env, (void *)slurm, NULL, 0);
	place_default_instance(s, &p, "cuda:0", 42, fake_env, (void *)slurm);
	assert_string_equal(s, "node7/slurm1234_5/cuda:0");
	place_from_env(&p, "node7", fake_env, (void *)srun, NULL, 0);
	place_default_instance(s, &p, "cpu", 42, fake_env, (void *)srun);
	assert_string_equal(s, "node7/slurm77.3/cpu");
	place_from_env(&p, "node7", fake_env, (void *)pod, NULL, 0);
	place_default_instance(s, &p, "cuda:1", 42, fake_env, (void *)pod);
	assert_string_equal(s, "gpuworker-2-x7k2p/cuda:1");
	place_from_env(&p, "node7", fake_env, (void *)none, NULL, 0);
	place_default_instance(s, &p, "cpu", 4242, fake_env, (void *)none);
	assert_string_equal(s, "node7:4242");
	place_default_instance(s, NULL, NULL, 9, NULL, NULL);
	assert_string_equal(s, "pid9");
	/* A long name keeps its tail, where processes differ. */
	memset(host, 'h', PLACE_HOST_MAX);
	host[PLACE_HOST_MAX] = '\0';
	place_from_env(&p, host, fake_env, (void *)none, NULL, 0);
	place_default_instance(s, &p, "cpu", 123456, fake_env, (void *)none);
	assert_int_equal(strlen(s), PLACE_INSTANCE_MAX);
	assert_int_equal(place_instance_check(s), 0);
	assert_string_equal(s + PLACE_INSTANCE_MAX - 7, ":123456");
}

UNIT_MAIN(cmocka_unit_test(test_rules),
	cmocka_unit_test(test_instance),
	cmocka_unit_test(test_set),
	cmocka_unit_test(test_slurm_env),
	cmocka_unit_test(test_kubernetes_env),
	cmocka_unit_test(test_bad_env))
