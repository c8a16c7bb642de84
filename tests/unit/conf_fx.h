/* conf_fx.h - helpers shared by the settings tables' tests
 * (test_options.c for gpud, test_woptions.c for gpuworker): a key by name,
 * a value as a file would hold it, and one value set, taken or refused.
 * The helpers fail the running cmocka test on any error. */
#ifndef GPUD_CONF_FX_H
#define GPUD_CONF_FX_H

#include <stddef.h>

#include "conf.h"

/* Malformed HOST:PORT values that every address key refuses (whatever its
 * port range), FX_BAD_ADDRESSES of them. */
#define FX_BAD_ADDRESSES 20
extern const char *const fx_bad_addresses[FX_BAD_ADDRESSES];

/* Table t's key name. */
const struct conf_key *fx_key(const struct conf_table *t, const char *name);
/* Key name's value in settings, as a file would hold it; a static buffer,
 * overwritten by the next call. */
const char *fx_show(const struct conf_table *t, const void *settings,
		    const char *name);
/* Set key name to value in settings, which must take it. */
void fx_taken(const struct conf_table *t, void *settings, const char *name,
	      const char *value);
/* fx_taken, and the key then shows as want. */
void fx_shows(const struct conf_table *t, void *settings, const char *name,
	      const char *value, const char *want);
/* Set key name to value in settings (size bytes), which must refuse it with
 * GERR_INVAL and an error that contains want, and stay as it was. */
void fx_refused(const struct conf_table *t, void *settings, size_t size,
		const char *name, const char *value, const char *want);
/* fx_refused of each of the n values in turn. */
void fx_refused_each(const struct conf_table *t, void *settings, size_t size,
		     const char *name, const char *const *values, size_t n,
		     const char *want);

#endif
