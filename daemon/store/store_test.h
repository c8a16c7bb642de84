/* store_test.h - hooks for the store's unit tests; gpud never calls them.
 * (Only the store files include sqlite3.h; this header does not.)
 */
#ifndef GPUD_STORE_TEST_H
#define GPUD_STORE_TEST_H

#include <stddef.h>

#include "store.h"

/* store_open as a gpud that knew only migrations 1..version would: the
 * database is created or migrated up to version and no further, so a test
 * can write an older schema's rows through the store calls and then let
 * store_open migrate them. Calls over tables that version lacks fail with
 * GERR_DB. A database newer than version is GERR_UNSUPPORTED, as for
 * store_open; GERR_INVAL unless 1 <= version <= the newest migration. */
int store_open_version(const char *path, int version, struct store **ret,
		       char *err, size_t errlen);

#endif
