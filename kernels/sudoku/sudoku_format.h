/* sudoku_format.h - the Sudoku workload's result and checkpoint bytes.
 *
 * All integers little-endian; no padding beyond what is listed.
 *   0   4  magic "SDKR" (result) or "SDKC" (checkpoint)
 *   4   4  u32 version = 2 (1: no pieces; still decoded)
 *   8   1  u8 R (rows of a box, oriented: 2..5)
 *   9   1  u8 C (bands: 2 or 3)
 *   10  2  u16 P: pieces per gangster (SUDOKU_PIECES for C == 3, else 0;
 *          0 in version 1)
 *   12  4  u32 from       (first gangster of the lease)
 *   16  4  u32 to         (from < to <= 144,578)
 *   20  4  u32 done       (result: == to - from; checkpoint: <= to - from)
 *   24  8  u64 reserved = 0
 *   32  16 * done: per gangster from + i, V as u64 lo, u64 hi
 *   ..  16 * done * P: piece j of gangster from + i at i * P + j (lo, hi)
 * V is W(g) for C == 3 and the band count below, cnt(g), for C == 2, so
 * the total is always factor * sum members(g) cnt(g) V(g). The pieces
 * are W's parts over the set's outer pairs cut in P ranges
 * (sudoku_w_pieces_cpu): a result commits to each, so verification can
 * recompute pieces chosen after the upload at 1/P of a gangster's cost.
 * Decoders check magic, version, the exact length, shape and bounds; they
 * never trust a length field. Gangster indices are bounded by
 * SUDOKU_MAX_GANG and a lease by SUDOKU_LEASE_MAX gangsters, so a result
 * is at most 32 + 16 * 4096 * (1 + P) bytes (8.5 MB). */
#ifndef GPUD_SUDOKU_FORMAT_H
#define GPUD_SUDOKU_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define SUDOKU_FMT_VERSION 2u
#define SUDOKU_HDR_LEN 32u
#define SUDOKU_MAX_GANG 144578u
#define SUDOKU_LEASE_MAX 4096u
#define SUDOKU_PIECES 128u

struct sudoku_res {
	uint8_t R, C;
	uint32_t from, to, done;
	uint16_t pieces;  /* P */
	/* [done], then the pieces [done * P] in the same allocation:
	 * malloc'ed by decode; the caller frees v (piece needs no free) */
	uint64_t (*v)[2];
	uint64_t (*piece)[2]; /* v + done, or NULL when P == 0 */
};

/* ckpt: 0 result (needs done == to - from), 1 checkpoint. Returns 0 or
 * GERR_NOMEM / GERR_INVAL. */
int sudoku_res_encode(const struct sudoku_res *r, int ckpt, void **ret,
		      size_t *ret_len);
/* GERR_CORRUPT with a message on any defect; r->v malloc'ed on success
 * (NULL when done == 0). */
int sudoku_res_decode(const void *buf, size_t len, int ckpt,
		      struct sudoku_res *r, char *err, size_t errlen);

#endif
