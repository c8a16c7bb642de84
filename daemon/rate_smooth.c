/* rate_smooth.c - a job's smoothed rate and its steadiness (the rule is
 * in rate_smooth.h). */
#include <math.h>
#include <string.h>

#include "rate_smooth.h"

static void note(struct rate_smooth *r, double now)
{
	r->hist_t[r->head] = now;
	r->hist_r[r->head] = rate_smooth_rate(r);
	r->head = (r->head + 1) % RATE_HIST;
	if (r->n_hist < RATE_HIST)
		r->n_hist++;
}

/* Weigh du units over dt seconds into the decayed sums. */
static void weigh(struct rate_smooth *r, double dt, uint64_t du, double now)
{
	double decay = exp(-dt / RATE_TAU_S);

	r->units = r->units * decay + (double)du;
	r->secs = r->secs * decay + dt;
	note(r, now);
}

/* A new origin at (now, units); across a gap the old weights go too. */
static void restart(struct rate_smooth *r, double now, uint64_t units, int keep)
{
	if (!keep) {
		memset(r, 0, sizeof(*r));
		r->started = 1;
	}
	r->t_last = now;
	r->t_move = now;
	r->t_moved = now;
	r->u_move = units;
	r->origin = 0;
	r->moves = 0;
}

void rate_smooth_add(struct rate_smooth *r, double now, uint64_t units)
{
	if (!r->started || now - r->t_last > RATE_GAP_S) {
		restart(r, now, units, 0);
		return;
	}
	if (now < r->t_last)
		return;
	r->t_last = now;
	if (units < r->u_move) {
		restart(r, now, units, 1);
		return;
	}
	if (units == r->u_move) {
		/* Still: after RATE_STALL_S the still time counts. */
		if (r->origin > 0 && now - r->t_move >= RATE_STALL_S) {
			weigh(r, now - r->t_move, 0, now);
			r->t_move = now;
		}
		return;
	}
	if (r->origin == 0) {
		r->origin = now; /* its units took an unknown time */
	} else {
		weigh(r, now - r->t_move, units - r->u_move, now);
		r->moves++;
	}
	r->t_move = now;
	r->t_moved = now;
	r->u_move = units;
}

double rate_smooth_rate(const struct rate_smooth *r)
{
	return r->secs > 0 ? r->units / r->secs : 0;
}

int rate_smooth_steady(const struct rate_smooth *r, double now)
{
	double rate = rate_smooth_rate(r);

	if (!(rate > 0) || r->origin == 0 || r->moves < RATE_STEADY_MOVES ||
	    now - r->origin < RATE_STEADY_S || now - r->t_moved >= RATE_STALL_S)
		return 0;
	for (unsigned i = 0; i < r->n_hist; i++) {
		unsigned k = (r->head + RATE_HIST - 1 - i) % RATE_HIST;

		if (r->hist_t[k] < now - RATE_STEADY_S)
			break;
		if (fabs(r->hist_r[k] - rate) > RATE_STEADY_BAND * rate)
			return 0;
	}
	return 1;
}

double rate_smooth_eta(const struct rate_smooth *r, double now, uint64_t left)
{
	if (!rate_smooth_steady(r, now))
		return 0;
	return (double)left / rate_smooth_rate(r);
}
