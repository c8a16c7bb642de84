/* log.h - leveled logging to stderr (journald picks it up under systemd).
 *
 * The level is a value in the caller's context (struct glog), not a global.
 * Macros test the level before formatting. Lines look like:
 *   2026-11-21T10:00:00.123Z gpud info lease claim job=1 lease=4 epoch=2
 * Thread-safe: each line is written with one write(2).
 */
#ifndef GPUD_LOG_H
#define GPUD_LOG_H

enum glog_level { GLOG_ERROR = 0, GLOG_WARN = 1, GLOG_INFO = 2, GLOG_DEBUG = 3 };

struct glog {
	const char *prog;
	enum glog_level level;
};

void glog_write(const struct glog *lg, enum glog_level lvl, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Parse "error|warn|info|debug"; returns 0 or GERR_INVAL. */
int glog_level_parse(const char *s, enum glog_level *ret);
/* The level's name ("info"); "?" for a value out of range. */
const char *glog_level_name(enum glog_level lvl);
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
