/* libFuzzer target: an interpreter that reads arbitrary bytes with every stream reader,
 * steered by the input itself. Any out-of-bounds read is a sanitizer failure. */
#include "common/stream.h"

#include <stdlib.h>
#include <string.h>

static uint64_t bits_of_double(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    mc_istream ops;
    mc_istream_init(&ops, data, size > 16 ? 16 : size);
    mc_istream is;
    mc_istream_init(&is, data + (size > 16 ? 16 : size), size > 16 ? size - 16 : 0);
    volatile uint64_t sink = 0;
    while (mc_istream_remaining(&ops) && mc_istream_ok(&is)) {
        uint8_t op = mc_read_u8(&ops);
        switch (op % 12) {
        case 0: sink += mc_read_u8(&is); break;
        case 1: sink += mc_read_u16(&is); break;
        case 2: sink += mc_read_u32(&is); break;
        case 3: sink += mc_read_u64(&is); break;
        case 4: sink += bits_of_double(mc_read_f32(&is)); break;
        case 5: sink += bits_of_double(mc_read_f64(&is)); break;
        case 6: sink += mc_read_bool(&is); break;
        case 7: sink += mc_read_packed_length(&is, op * 1000u); break;
        case 8: {
            size_t len;
            const uint8_t *p = mc_read_blob(&is, &len, UINT32_MAX);
            if (p && len)
                sink += p[len - 1];
            break;
        }
        case 9: free(mc_read_string_dup(&is, 4096)); break;
        case 10: {
            char buf[32];
            if (mc_read_string_into(&is, buf, sizeof buf))
                sink += (uint8_t)buf[0];
            break;
        }
        case 11: {
            const uint8_t *p = mc_read_bytes(&is, op / 12u);
            if (p && op / 12u)
                sink += p[0];
            break;
        }
        }
    }
    (void)sink;
    return 0;
}
