/* par.c - the parallel for of par.h. */
#include "par.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

struct par_job {
	par_fn *fn;
	void *arg;
	size_t n;
	atomic_size_t next; /* the next chunk nobody has taken */
};

static void *par_thread(void *p)
{
	struct par_job *j = p;
	size_t i;

	while ((i = atomic_fetch_add(&j->next, 1)) < j->n)
		j->fn(j->arg, i);
	return NULL;
}

size_t par_threads(size_t n, uint64_t bytes)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t nt = cpus > 1 ? (size_t)cpus : 1;
	uint64_t worth = (bytes + PAR_CHUNK - 1) / PAR_CHUNK;

	if (nt > PAR_THREADS)
		nt = PAR_THREADS;
	if (nt > n)
		nt = n;
	if (nt > worth)
		nt = (size_t)worth;
	return nt ? nt : 1;
}

void par_run(par_fn *fn, void *arg, size_t n, size_t nt)
{
	struct par_job job = { .fn = fn, .arg = arg, .n = n };
	pthread_t tid[PAR_MAX_THREADS];
	size_t started = 0;

	atomic_init(&job.next, 0);
	for (size_t t = 1; t < nt && t < PAR_MAX_THREADS; t++)
		if (pthread_create(&tid[started], NULL, par_thread, &job) == 0)
			started++;
	par_thread(&job);
	for (size_t t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
}
