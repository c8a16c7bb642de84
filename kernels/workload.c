/* workload.c - helpers shared by workloads. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "workload.h"

int wl_device_get(const struct wl_device *dev, const char *who,
		  int *ret_threads, void **ret_cuda, char *err,
		  size_t errlen)
{
	if (ret_threads)
		*ret_threads = dev && dev->threads > 0 ? dev->threads : 1;
	*ret_cuda = NULL;
	if (dev && dev->kind == WL_DEVICE_CUDA) {
		*ret_cuda = dev->cuda_ctx;
		if (!*ret_cuda) {
			gerr_printf(err, errlen, "%s: CUDA device without a "
				    "context (cuda_open)", who);
			return GERR_INVAL;
		}
	}
	return 0;
}

int wl_args_check(const json_t *args, const char *const *keys,
		  const char *who, const char *takes, char *err,
		  size_t errlen)
{
	const char *key;
	json_t *val;

	if (!json_is_object(args)) {
		gerr_printf(err, errlen, "%s: arguments must be an object",
			    who);
		return GERR_INVAL;
	}
	json_object_foreach((json_t *)args, key, val) {
		size_t i = 0;

		while (keys[i] && strcmp(keys[i], key) != 0)
			i++;
		if (!keys[i]) {
			gerr_printf(err, errlen, "%s: unknown parameter '%s' "
				    "(takes %s)", who, key, takes);
			return GERR_INVAL;
		}
	}
	return 0;
}

int wl_spec_u64s(const json_t *spec, const char *who, const char *k1,
		 uint64_t *ret1, const char *k2, uint64_t *ret2, char *err,
		 size_t errlen)
{
	int rc;

	if (!json_is_object(spec)) {
		gerr_printf(err, errlen, "%s: spec must be an object", who);
		return GERR_INVAL;
	}
	rc = wl_json_u64(spec, k1, 1, 0, ret1, err, errlen);
	if (rc == 0)
		rc = wl_json_u64(spec, k2, 1, 0, ret2, err, errlen);
	return rc;
}

int wl_json_u64(const json_t *obj, const char *key, int required,
		uint64_t def, uint64_t *ret, char *err, size_t errlen)
{
	const json_t *v = json_object_get(obj, key);

	if (!v || json_is_null(v)) {
		if (required) {
			snprintf(err, errlen, "missing parameter '%s'", key);
			return GERR_INVAL;
		}
		*ret = def;
		return 0;
	}
	if (json_is_integer(v)) {
		json_int_t i = json_integer_value(v);
		if (i < 0) {
			snprintf(err, errlen, "'%s' must not be negative", key);
			return GERR_INVAL;
		}
		*ret = (uint64_t)i;
		return 0;
	}
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		char *end = NULL;
		unsigned long long u;
		/* Accept plain decimal and scientific shorthand like 1e9. */
		if (*s == '\0' || *s == '-' || *s == '+') {
			snprintf(err, errlen, "'%s' must be a non-negative integer, got '%s'", key, s);
			return GERR_INVAL;
		}
		errno = 0;
		u = strtoull(s, &end, 10);
		if (errno == 0 && (*end == 'e' || *end == 'E') && end[1] >= '0' && end[1] <= '9') {
			char *end2;
			unsigned long exp = strtoul(end + 1, &end2, 10);
			if (*end2 == '\0' && exp <= 19) {
				unsigned long long r = u;
				for (unsigned long k = 0; k < exp; k++) {
					if (r > UINT64_MAX / 10) {
						errno = ERANGE;
						break;
					}
					r *= 10;
				}
				if (errno == 0) {
					*ret = r;
					return 0;
				}
			}
		}
		if (errno == ERANGE) {
			snprintf(err, errlen, "'%s' is too large: '%s'", key, s);
			return GERR_INVAL;
		}
		if (errno != 0 || *end != '\0') {
			snprintf(err, errlen, "'%s' must be a non-negative integer, got '%s'", key, s);
			return GERR_INVAL;
		}
		*ret = u;
		return 0;
	}
	snprintf(err, errlen, "'%s' must be a non-negative integer", key);
	return GERR_INVAL;
}

void wl_io_quiet_progress(void *opaque, uint64_t units_done)
{
}

int wl_io_quiet_never(void *opaque)
{
	return 0;
}

int wl_io_quiet_checkpoint(void *opaque, const void *bytes, size_t len,
			   uint64_t units_done)
{
	return 0;
}
