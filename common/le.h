/* le.h - little-endian fields of the on-disk and on-wire binary formats
 * (blobs, results, checkpoints). Header only; no alignment assumed. */
#ifndef GPUD_LE_H
#define GPUD_LE_H

#include <stdint.h>
#include <string.h>

static inline void le_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void le_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void le_put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint16_t le_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t le_get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t le_get64(const uint8_t *p)
{
	return (uint64_t)le_get32(p) | (uint64_t)le_get32(p + 4) << 32;
}

/* The head every workload's binary format starts with: four magic bytes
 * (which format, and result or checkpoint) and the format's version. */
static inline void le_put_head(uint8_t *p, const char magic[4],
			       uint32_t version)
{
	memcpy(p, magic, 4);
	le_put32(p + 4, version);
}

#endif
