/* Unit tests of the workload registry and the shared parameter helper. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "gerr.h"
#include "workload.h"

static void test_every_workload_is_complete(void **state)
{
	const struct workload *const *all = workload_all();
	size_t n = 0;

	(void)state;
	for (; all[n]; n++) {
		const struct workload *w = all[n];
		assert_non_null(w->name);
		assert_non_null(w->unit_name);
		assert_true(strlen(w->name) > 0 && strlen(w->name) <= 16); /* blob header */
		assert_non_null(w->parse_params);
		assert_non_null(w->carve);
		assert_non_null(w->run);
		assert_non_null(w->check_checkpoint);
		assert_non_null(w->verify);
		assert_non_null(w->merge);
		assert_non_null(w->finish);
		assert_non_null(w->render_text);
		assert_true((w->cuda_open == NULL) == (w->cuda_close == NULL));
		assert_ptr_equal(workload_find(w->name), w);
		for (size_t k = 0; k < n; k++)
			assert_string_not_equal(all[k]->name, w->name);
	}
	assert_true(n >= 1);
	assert_null(workload_find("no-such-workload"));
	assert_null(workload_find(NULL));
}

static void test_json_u64(void **state)
{
	char err[WL_ERRLEN];
	uint64_t v = 0;
	json_t *o = json_pack("{s:s, s:s, s:I, s:s, s:s, s:s, s:s, s:I, s:f, s:s}",
			      "plain", "12345", "sci", "1e9", "int", (json_int_t)77,
			      "neg", "-3", "junk", "12x", "empty", "", "huge",
			      "99999999999999999999", "negint", (json_int_t)-1, "real", 1.5,
			      "bigsci", "2e19");

	(void)state;
	assert_int_equal(wl_json_u64(o, "plain", 1, 0, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 12345);
	assert_int_equal(wl_json_u64(o, "sci", 1, 0, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 1000000000ull);
	assert_int_equal(wl_json_u64(o, "int", 1, 0, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 77);
	assert_int_equal(wl_json_u64(o, "missing", 0, 5, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 5);
	assert_int_equal(wl_json_u64(o, "missing", 1, 5, &v, err, sizeof(err)), GERR_INVAL);
	assert_non_null(strstr(err, "missing parameter 'missing'"));
	const char *bad[] = {"neg", "junk", "empty", "huge", "negint", "real", "bigsci"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(wl_json_u64(o, bad[i], 1, 0, &v, err, sizeof(err)), GERR_INVAL);
		assert_non_null(strstr(err, bad[i]));
	}
	json_decref(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_workload_is_complete),
		cmocka_unit_test(test_json_u64),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
