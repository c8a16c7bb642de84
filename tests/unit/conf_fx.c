/* conf_fx.c - see conf_fx.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "conf_fx.h"
#include "gerr.h"

const char *const fx_bad_addresses[FX_BAD_ADDRESSES] = {
	"localhost", ":7700", "host:", "host:-1", "host:65536", "host:+1",
	"host: 1", "host:1x", "a b:1", "a/b:1", "[]:1", "[]:7700", "[::1:7700",
	"::1]:7700", "[::1]7700", "ho]st:1", "h]:1", "h\tst:1", "h\x7f:1",
	"host:99999999999999999999",
};

const struct conf_key *fx_key(const struct conf_table *t, const char *name)
{
	int i = conf_find(t, name);

	if (i < 0)
		fail_msg("no key '%s'", name);
	return &t->keys[i];
}

const char *fx_show(const struct conf_table *t, const void *settings,
		    const char *name)
{
	static char buf[CONF_SHOW_MAX];

	conf_show(fx_key(t, name), settings, buf, sizeof(buf));
	return buf;
}

void fx_taken(const struct conf_table *t, void *settings, const char *name,
	      const char *value)
{
	char err[512];

	if (conf_set(fx_key(t, name), settings, value, err, sizeof(err)))
		fail_msg("%s = '%s' refused: %s", name, value, err);
}

void fx_shows(const struct conf_table *t, void *settings, const char *name,
	      const char *value, const char *want)
{
	fx_taken(t, settings, name, value);
	assert_string_equal(fx_show(t, settings, name), want);
}

void fx_refused(const struct conf_table *t, void *settings, size_t size,
		const char *name, const char *value, const char *want)
{
	char err[512];
	void *before = malloc(size);

	assert_non_null(before);
	memcpy(before, settings, size);
	if (conf_set(fx_key(t, name), settings, value, err, sizeof(err)) !=
	    GERR_INVAL)
		fail_msg("%s = '%s' taken", name, value);
	if (!strstr(err, want))
		fail_msg("%s = '%s': got '%s', want '%s'", name, value, err,
			 want);
	assert_memory_equal(settings, before, size);
	free(before);
}

void fx_refused_each(const struct conf_table *t, void *settings, size_t size,
		     const char *name, const char *const *values, size_t n,
		     const char *want)
{
	for (size_t i = 0; i < n; i++)
		fx_refused(t, settings, size, name, values[i], want);
}
