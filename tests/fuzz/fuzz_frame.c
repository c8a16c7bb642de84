/* libFuzzer target: the wire protocol's frame decoder. Any input must be
 * refused or parsed without a crash or a read past its end; a parsed frame
 * must encode and parse back to the same type, JSON and attachment. The
 * header-and-JSON parse (proto_frame_parse_head, what gpud uses for an
 * upload whose attachment streams to a file) must agree with the whole
 * parse: the same type, JSON and announced length, ending where the
 * attachment starts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gerr.h"
#include "proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proto_frame f, g, h;
	size_t used = 0, need = 0, used2 = 0, used_head = 0;
	uint8_t *buf = NULL;
	size_t len = 0;
	char err[200];

	if (proto_frame_parse_head(data, size, &h, &used_head, &need, err,
				   sizeof(err)) == 0) {
		if (used_head > size || h.bin || used_head + h.bin_len < used_head)
			abort();
		if (proto_frame_parse(data, size, &f, &used, &need, err,
				      sizeof(err)) == 0) {
			if (f.type != h.type || !json_equal(f.json, h.json) ||
			    f.bin_len != h.bin_len ||
			    used != used_head + h.bin_len)
				abort();
			proto_frame_clear(&f);
		}
		proto_frame_clear(&h);
	}
	if (proto_frame_parse(data, size, &f, &used, &need, err, sizeof(err)) != 0)
		return 0;
	if (used > size)
		abort();
	if (proto_frame_encode(f.type, f.json, f.bin, f.bin_len, &buf, &len) != 0)
		abort();
	if (proto_frame_parse(buf, len, &g, &used2, &need, err, sizeof(err)) != 0 ||
	    used2 != len || g.type != f.type || !json_equal(g.json, f.json) ||
	    g.bin_len != f.bin_len || (f.bin_len && memcmp(g.bin, f.bin, f.bin_len)))
		abort();
	proto_frame_clear(&g);
	proto_frame_clear(&f);
	free(buf);
	return 0;
}
