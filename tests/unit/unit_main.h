/* unit_main.h - a unit test program's main: run the tests named (each a
 * cmocka_unit_test(fn) or one with its own setup and teardown), in order,
 * with no group setup; the exit status is the number that failed. Include
 * after <cmocka.h>. */
#ifndef GPUD_UNIT_MAIN_H
#define GPUD_UNIT_MAIN_H

#define UNIT_MAIN(...)                                                       \
	int main(void)                                                       \
	{                                                                    \
		const struct CMUnitTest tests[] = {__VA_ARGS__};             \
		return cmocka_run_group_tests(tests, NULL, NULL);            \
	}

#endif
