/* blob_fx.h - helpers shared by the blob format's unit tests (test_blob*.c).
 * The helpers that assert fail the running cmocka test. */
#ifndef GPUD_BLOB_FX_H
#define GPUD_BLOB_FX_H

#include <stddef.h>
#include <stdint.h>

/* xorshift64*: the tests' reproducible random numbers. */
uint64_t rng_next(uint64_t *s);
/* Recompute both CRCs so that deeper checks are reached. */
void fix_crcs(uint8_t *b, size_t len);
/* Compressible but not trivial raw data. */
uint8_t *make_raw(size_t n);
/* A checkpoint blob ("graveler", lease 42, epoch 7) of make_raw(raw_len). */
uint8_t *make_blob(size_t raw_len, size_t *ret_len);
/* Where the zlib stream starts: after the chunk index in version 2. */
size_t stream_off(const uint8_t *b);
/* blob_decode, the reason in err (160 bytes); nothing is returned on error. */
int decode(const uint8_t *b, size_t len, char *err);

#endif
