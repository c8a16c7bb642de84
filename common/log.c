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
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "gerr.h"

#define GLOG_LINE_MAX 4096
/* A summary: its text, cut, and the count. */
#define GLOG_SUMMARY_MAX (GLOG_LIMIT_TEXT + 96)

static const char *const level_names[] = {
	[GLOG_ERROR] = "error",
	[GLOG_WARN] = "warn",
	[GLOG_INFO] = "info",
	[GLOG_DEBUG] = "debug",
};

/* syslog(3)'s LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG. */
static const int level_prio[] = {
	[GLOG_ERROR] = 3,
	[GLOG_WARN] = 4,
	[GLOG_INFO] = 6,
	[GLOG_DEBUG] = 7,
};

struct summary {
	enum glog_level level;
	char text[GLOG_SUMMARY_MAX];
};

/* Prefix and body as one line; body has no control characters. */
static void emit(const struct glog *lg, enum glog_level lvl, const char *body,
		 size_t blen)
{
	char line[GLOG_LINE_MAX];
	struct tm tm;
	size_t n;
	int w;

	if (lg && lg->journal) {
		w = snprintf(line, sizeof(line), "<%d>", level_prio[lvl]);
	} else {
		int64_t ns = gclock_wall_ns();
		time_t sec = (time_t)(ns / 1000000000);

		gmtime_r(&sec, &tm);
		w = snprintf(line, sizeof(line),
			     "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s %s ",
			     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
			     tm.tm_hour, tm.tm_min, tm.tm_sec,
			     (long)(ns % 1000000000 / 1000000),
			     lg && lg->prog ? lg->prog : "gpud", level_names[lvl]);
	}
	if (w < 0)
		return;
	n = (size_t)w;
	if (blen > sizeof(line) - 1 - n)
		blen = sizeof(line) - 1 - n;
	memcpy(line + n, body, blen);
	n += blen;
	line[n++] = '\n';
	while (write(STDERR_FILENO, line, n) < 0 && errno == EINTR)
		;
}

static double limit_now(const struct glog_limit *l)
{
	return l->now ? l->now(l->opaque) : gclock_mono();
}

static uint64_t text_hash(enum glog_level lvl, const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL ^ (uint64_t)lvl;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ULL;
	}
	return h ? h : 1;
}

/* Caller holds l->mu. A slot whose window ended: its summary (when it
 * held lines back) into out, and the slot freed. */
static int slot_close(struct glog_slot *s, struct summary *out)
{
	int said = 0;

	if (s->held) {
		out->level = s->level;
		snprintf(out->text, sizeof(out->text),
			 "%u similar message%s suppressed in %.0f s: %s", s->held,
			 s->held == 1 ? "" : "s", GLOG_WINDOW_S, s->text);
		said = 1;
	}
	memset(s, 0, sizeof(*s));
	return said;
}

/* Caller holds l->mu: close every ended window (every one when force). */
static size_t close_ended(struct glog_limit *l, double now, int force,
			  struct summary *out)
{
	size_t n = 0;

	for (int i = 0; i < GLOG_LIMIT_SLOTS; i++) {
		struct glog_slot *s = &l->slot[i];
		if (s->hash && (force || now - s->start >= GLOG_WINDOW_S))
			n += (size_t)slot_close(s, &out[n]);
	}
	return n;
}

/* Whether the message may be written now; the summaries due go to out
 * (*nout of them). */
static int limit_pass(struct glog_limit *l, enum glog_level lvl,
		      const char *body, size_t blen, struct summary *out,
		      size_t *nout)
{
	uint64_t h = text_hash(lvl, body, blen);
	double now = limit_now(l);
	struct glog_slot *s = NULL, *oldest = NULL;
	int pass = 1;

	pthread_mutex_lock(&l->mu);
	*nout = close_ended(l, now, 0, out);
	for (int i = 0; i < GLOG_LIMIT_SLOTS; i++) {
		struct glog_slot *x = &l->slot[i];
		if (x->hash == h) {
			s = x;
			break;
		}
		if (!oldest || !x->hash || (oldest->hash && x->start < oldest->start))
			oldest = x;
	}
	if (!s) {
		/* The table is full of live windows: the oldest gives way. */
		if (oldest->hash)
			*nout += (size_t)slot_close(oldest, &out[*nout]);
		s = oldest;
		s->hash = h;
		s->start = now;
		s->level = lvl;
		snprintf(s->text, sizeof(s->text), "%.*s", (int)blen, body);
	}
	if (s->lines < GLOG_BURST) {
		s->lines++;
	} else {
		s->held++;
		pass = 0;
	}
	pthread_mutex_unlock(&l->mu);
	return pass;
}

void glog_write(const struct glog *lg, enum glog_level lvl, const char *fmt, ...)
{
	char body[GLOG_LINE_MAX];
	struct summary due[GLOG_LIMIT_SLOTS + 1];
	size_t n, ndue = 0;
	int saved = errno, w, pass = 1;
	va_list ap;

	if (!fmt || (int)lvl < GLOG_ERROR || lvl > GLOG_DEBUG)
		return;
	if (lg && (int)lvl > GLOG_LEVEL(lg))
		return;

	va_start(ap, fmt);
	w = vsnprintf(body, sizeof(body), fmt, ap);
	va_end(ap);
	if (w < 0)
		w = 0;
	/* Room for the prefix and the newline. */
	n = (size_t)w;
	if (n > sizeof(body) - 128) {
		n = sizeof(body) - 128;
		memcpy(body + n - 3, "...", 3); /* say it was cut */
	}
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)body[i] < 0x20 || body[i] == 0x7f)
			body[i] = ' ';

	if (lg && lg->limit)
		pass = limit_pass(lg->limit, lvl, body, n, due, &ndue);
	for (size_t i = 0; i < ndue; i++)
		if ((int)due[i].level <= GLOG_LEVEL(lg))
			emit(lg, due[i].level, due[i].text, strlen(due[i].text));
	if (pass)
		emit(lg, lvl, body, n);
	errno = saved;
}

void glog_flush(const struct glog *lg, int force)
{
	struct summary due[GLOG_LIMIT_SLOTS];
	size_t ndue;
	int saved = errno;

	if (!lg || !lg->limit)
		return;
	pthread_mutex_lock(&lg->limit->mu);
	ndue = close_ended(lg->limit, limit_now(lg->limit), force, due);
	pthread_mutex_unlock(&lg->limit->mu);
	for (size_t i = 0; i < ndue; i++)
		if ((int)due[i].level <= GLOG_LEVEL(lg))
			emit(lg, due[i].level, due[i].text, strlen(due[i].text));
	errno = saved;
}

int glog_journal_detect(void)
{
	const char *v = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	int used = 0;

	if (!v || sscanf(v, "%llu:%llu%n", &dev, &ino, &used) != 2 ||
	    v[used] != '\0')
		return 0;
	if (fstat(STDERR_FILENO, &st))
		return 0;
	return (unsigned long long)st.st_dev == dev &&
	       (unsigned long long)st.st_ino == ino;
}

int glog_limit_init(struct glog_limit *l)
{
	memset(l, 0, sizeof(*l));
	return pthread_mutex_init(&l->mu, NULL) ? GERR_NOMEM : 0;
}

void glog_limit_free(struct glog_limit *l)
{
	if (l)
		pthread_mutex_destroy(&l->mu);
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
