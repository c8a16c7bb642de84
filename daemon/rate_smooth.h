/* rate_smooth.h - a job's rate from its progress samples, smoothed, and
 * whether it is steady enough to give an ETA (plain C: no clock of its
 * own, the caller passes the time; tests drive it directly).
 *
 * The rule (README, "gpuctl status"):
 *  1. Samples are the job's units (checkpointed + held leases' progress
 *     from heartbeats), taken about once a second. Progress arrives in
 *     steps (a worker's heartbeat), so only a sample whose units moved
 *     counts: it adds its units and the time since the previous move.
 *     The first move is the origin: what it brought took an unknown time
 *     (the lease's start), so it adds nothing.
 *  2. The rate is an exponentially weighted one: units and seconds both
 *     decay with RATE_TAU_S, rate = units / seconds. A job whose units do
 *     not move for RATE_STALL_S adds the still time (with no units), so
 *     its rate falls. Units that go back (a lost lease's progress) and a
 *     gap in the samples longer than RATE_GAP_S (the job was paused or
 *     not sampled) start over from a new origin (the weights kept across
 *     a step back, dropped across a gap).
 *  3. Steady, and so an ETA, once at least RATE_STEADY_MOVES moves were
 *     weighed, RATE_STEADY_S passed since the origin, and every rate of
 *     the last RATE_STEADY_S lies within RATE_STEADY_BAND (a fraction) of
 *     the current one. Before: no ETA.
 */
#ifndef GPUD_RATE_SMOOTH_H
#define GPUD_RATE_SMOOTH_H

#include <stdint.h>

#define RATE_TAU_S 30.0
#define RATE_STALL_S 30.0
#define RATE_GAP_S 10.0
#define RATE_STEADY_S 15.0
#define RATE_STEADY_MOVES 3
#define RATE_STEADY_BAND 0.2
#define RATE_HIST 16

struct rate_smooth {
	int started;            /* a sample was taken */
	double t_last;          /* the last sample */
	double t_move;          /* the last move, origin or still time weighed */
	double t_moved;         /* the last time units moved */
	uint64_t u_move;        /* units at it */
	double origin;          /* time of the origin; 0: no move yet */
	double units, secs;     /* decayed weights */
	unsigned moves;         /* moves weighed since the origin */
	double hist_t[RATE_HIST], hist_r[RATE_HIST]; /* rates after updates */
	unsigned n_hist, head;
};

/* A sample of the job's units at now (seconds, increasing). */
void rate_smooth_add(struct rate_smooth *r, double now, uint64_t units);
/* The smoothed rate (units/s); 0 when unknown. */
double rate_smooth_rate(const struct rate_smooth *r);
/* 1 when the rate is steady at now (rule 3), else 0. */
int rate_smooth_steady(const struct rate_smooth *r, double now);
/* Seconds to do left units at the rate, or 0 while not steady. */
double rate_smooth_eta(const struct rate_smooth *r, double now, uint64_t left);

#endif
