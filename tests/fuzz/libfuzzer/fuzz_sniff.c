/* libFuzzer target: the name a guest's first bytes claim (egress/sniff.h).
 * Whatever the bytes, the parsers must stay inside them (ASan) and a name
 * they return must already be in normal form (names.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "sniff.h"

/* Normal form is a fixed point of name_normalize. */
static void assert_normalized(const char *name)
{
    char again[NAME_MAX_LEN + 1];
    size_t len = strnlen(name, NAME_MAX_LEN + 1);
    if (len > NAME_MAX_LEN || name_normalize(name, len, again) < 0 || strcmp(again, name) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char name[NAME_MAX_LEN + 1];
    enum sniff_result (*const sniffers[])(const uint8_t *, size_t, char *) = {
        sniff_name, sniff_tls_sni, sniff_http_host,
    };
    for (size_t i = 0; i < sizeof(sniffers) / sizeof(*sniffers); i++) {
        enum sniff_result r = sniffers[i](data, size, name);
        if (r == SNIFF_FOUND || (r == SNIFF_NAME_HIDDEN && name[0]))
            assert_normalized(name);
    }
    (void)sniff_http_is_request(data, size);
    if (sniff_authority_host((const char *)data, size, name) == 0)
        assert_normalized(name);
    return 0;
}
