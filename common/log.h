/* log.h - leveled logging to stderr (journald picks it up under systemd).
 *
 * The level is a value in the caller's context (struct glog), not a global.
 * Macros test the level before formatting. Lines look like:
 *   2026-11-21T10:00:00.123Z gpud info lease claim job=1 lease=4 epoch=2
 * and, when stderr is journald's stream (glog_journal_detect), like
 *   <6>lease claim job=1 lease=4 epoch=2
 * with the syslog priority that sd-daemon(3) reads (3 error, 4 warning,
 * 6 info, 7 debug) and no timestamp: journald keeps its own.
 *
 * Repeated identical lines: with a struct glog_limit attached, a message
 * logged more than GLOG_BURST times in GLOG_WINDOW_S seconds is held back
 * until the window ends, then summed up in one line ("N similar messages
 * suppressed: TEXT"), written by the next call after the window (any
 * message) or by glog_flush.
 *
 * Ownership: the struct glog and its glog_limit belong to the caller and
 * outlive every call; no reference to the message is kept past a call.
 * Thread-safe: each line is written with one write(2); the limit's table
 * is guarded by its own mutex.
 */
#ifndef GPUD_LOG_H
#define GPUD_LOG_H

#include <pthread.h>
#include <stdint.h>

enum glog_level { GLOG_ERROR = 0, GLOG_WARN = 1, GLOG_INFO = 2, GLOG_DEBUG = 3 };

#define GLOG_BURST 10
#define GLOG_WINDOW_S 10.0
#define GLOG_LIMIT_SLOTS 16
#define GLOG_LIMIT_TEXT 160 /* of a message, repeated in its summary */

struct glog_slot {
	uint64_t hash;          /* level and text; 0 is a free slot */
	double start;           /* the window's first line */
	unsigned lines;         /* written in this window */
	unsigned held;          /* held back in this window */
	enum glog_level level;
	char text[GLOG_LIMIT_TEXT];
};

struct glog_limit {
	pthread_mutex_t mu;
	/* Seconds on a monotonic clock; tests inject theirs (NULL: the
	 * system's CLOCK_MONOTONIC). */
	double (*now)(void *opaque);
	void *opaque;
	struct glog_slot slot[GLOG_LIMIT_SLOTS]; /* guarded by mu */
};

struct glog {
	const char *prog;
	enum glog_level level;
	int journal;               /* <N> prefixes, no timestamp */
	struct glog_limit *limit;  /* borrowed; NULL: no limit */
};

void glog_write(const struct glog *lg, enum glog_level lvl, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Parse "error|warn|info|debug"; returns 0 or GERR_INVAL. */
int glog_level_parse(const char *s, enum glog_level *ret);
/* The level's name ("info"); "?" for a value out of range. */
const char *glog_level_name(enum glog_level lvl);
/* Whether stderr is the stream journald gave this process: JOURNAL_STREAM
 * ("DEV:INODE", systemd.exec(5)) names stderr's device and inode. A
 * variable inherited by a child whose stderr went elsewhere says no. */
int glog_journal_detect(void);
/* Returns 0 or GERR_NOMEM; glog_limit_free undoes it (NULL is a no-op). */
int glog_limit_init(struct glog_limit *l);
void glog_limit_free(struct glog_limit *l);
/* Write the summaries of windows that ended (all of them when force):
 * at shutdown, or from a timer so a burst that stopped is summed up. */
void glog_flush(const struct glog *lg, int force);

/* A level changed at run time (gpud's SIGHUP) while other threads log:
 * relaxed atomics, since a line more or less around the change is fine. */
#define GLOG_LEVEL(lg) ((int)__atomic_load_n(&(lg)->level, __ATOMIC_RELAXED))
#define GLOG_SET_LEVEL(lg, lvl) __atomic_store_n(&(lg)->level, (lvl), __ATOMIC_RELAXED)

#define GLOG(lg, lvl, ...)                                                   \
	do {                                                                 \
		if ((int)(lvl) <= GLOG_LEVEL(lg))                    \
			glog_write((lg), (lvl), __VA_ARGS__);                \
	} while (0)
#define LOG_ERROR(lg, ...) GLOG(lg, GLOG_ERROR, __VA_ARGS__)
#define LOG_WARN(lg, ...) GLOG(lg, GLOG_WARN, __VA_ARGS__)
#define LOG_INFO(lg, ...) GLOG(lg, GLOG_INFO, __VA_ARGS__)
#define LOG_DEBUG(lg, ...) GLOG(lg, GLOG_DEBUG, __VA_ARGS__)

#endif
