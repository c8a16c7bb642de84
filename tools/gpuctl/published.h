/* published.h - results others have published, for one line of
 * information beside an answer in `gpuctl result` ("agrees with the
 * published count"). Nothing in gpud decides with them: a job passes or
 * fails by its own checks (verify, finish); the tests assert these numbers
 * themselves.
 *
 * published_note returns that line for a workload's answer (a static
 * string or buf), or NULL when nothing published matches the answer.
 * Any thread; keeps nothing.
 */
#ifndef GPUD_PUBLISHED_H
#define GPUD_PUBLISHED_H

#include <stddef.h>
#include <jansson.h>

const char *published_note(const char *workload, const json_t *answer,
			   char *buf, size_t len);

#endif
