/* log.c - one line per call on stderr (see log.h).
 *
 * The whole line is formatted into a stack buffer and handed to a single
 * write(2) so that lines from several threads or processes sharing the fd
 * never interleave. Control characters in the message are replaced so that
 * text from the network cannot forge extra log lines. errno is preserved.
 */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gerr.h"

#define GLOG_LINE_MAX 4096

static const char *const level_names[] = {
	[GLOG_ERROR] = "error",
	[GLOG_WARN] = "warn",
	[GLOG_INFO] = "info",
	[GLOG_DEBUG] = "debug",
};

void glog_write(const struct glog *lg, enum glog_level lvl, const char *fmt, ...)
{
	char line[GLOG_LINE_MAX];
	struct timespec ts;
	struct tm tm;
	size_t n, start;
	int saved = errno, w;
	va_list ap;

	if (!fmt || (int)lvl < GLOG_ERROR || lvl > GLOG_DEBUG)
		return;
	if (lg && (int)lvl > GLOG_LEVEL(lg))
		return;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	w = snprintf(line, sizeof(line),
		     "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s %s ",
		     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		     tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000L,
		     lg && lg->prog ? lg->prog : "gpud", level_names[lvl]);
	if (w < 0)
		goto out;
	/* Leave room for the newline. */
	start = (size_t)w < sizeof(line) - 1 ? (size_t)w : sizeof(line) - 2;

	va_start(ap, fmt);
	w = vsnprintf(line + start, sizeof(line) - 1 - start, fmt, ap);
	va_end(ap);
	if (w < 0)
		w = 0;
	n = start + (size_t)w;
	if (n > sizeof(line) - 2) {
		n = sizeof(line) - 2;
		memcpy(line + n - 3, "...", 3); /* say it was cut */
	}
	for (size_t i = start; i < n; i++)
		if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
			line[i] = ' ';
	line[n++] = '\n';

	while (write(STDERR_FILENO, line, n) < 0 && errno == EINTR)
		;
out:
	errno = saved;
}

int glog_level_parse(const char *s, enum glog_level *ret)
{
	if (!s || !ret)
		return GERR_INVAL;
	for (int i = GLOG_ERROR; i <= GLOG_DEBUG; i++) {
		if (strcmp(s, level_names[i]) == 0) {
			*ret = (enum glog_level)i;
			return 0;
		}
	}
	return GERR_INVAL;
}

const char *glog_level_name(enum glog_level lvl)
{
	if ((int)lvl < GLOG_ERROR || lvl > GLOG_DEBUG)
		return "?";
	return level_names[lvl];
}
