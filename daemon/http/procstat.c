/* procstat.c - this process's figures from /proc (see procstat.h), read
 * the way the Prometheus client libraries read them: /proc/self/stat's
 * times in clock ticks after boot (btime, /proc/stat), its sizes in bytes
 * and pages, /proc/self/fd's entries, RLIMIT_NOFILE's soft limit. */
#include "procstat.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "gerr.h"

/* btime: the boot time in Unix seconds. */
static int boot_time(double *ret)
{
	char line[256];
	FILE *f = fopen("/proc/stat", "re");
	int found = 0;

	if (!f)
		return GERR_IO;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long long bt;

		if (sscanf(line, "btime %llu", &bt) == 1) {
			*ret = (double)bt;
			found = 1;
		}
	}
	fclose(f);
	return found ? 0 : GERR_IO;
}

static uint64_t count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	uint64_t n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	/* Less the one opendir holds. */
	return n ? n - 1 : 0;
}

int procstat_read(struct procstat *ret)
{
	char buf[1024], *p;
	FILE *f = fopen("/proc/self/stat", "re");
	unsigned long long utime, stime, start, vsize;
	long long rss;
	long tick = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	struct rlimit rl;
	double boot;
	size_t n;

	if (!f)
		return GERR_IO;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* The command's name is in parentheses and may hold spaces: fields
	 * are counted from the last ')'. Field 3 (state) follows it. */
	p = strrchr(buf, ')');
	if (!p || tick <= 0 || page <= 0 || boot_time(&boot))
		return GERR_IO;
	if (sscanf(p + 2, "%*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu %llu "
		   "%*s %*s %*s %*s %*s %*s %llu %llu %lld",
		   &utime, &stime, &start, &vsize, &rss) != 5)
		return GERR_IO;
	ret->start_time = boot + (double)start / (double)tick;
	ret->cpu_seconds = (double)(utime + stime) / (double)tick;
	ret->virtual_bytes = vsize;
	ret->resident_bytes = rss > 0 ? (uint64_t)rss * (uint64_t)page : 0;
	ret->open_fds = count_fds();
	ret->max_fds = getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
		       rl.rlim_cur != RLIM_INFINITY ? (uint64_t)rl.rlim_cur : 0;
	return 0;
}
