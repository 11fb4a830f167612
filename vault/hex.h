/* bytea travels as hex text: our db layer sends text parameters only. */
#ifndef AIRLOCK_VAULT_HEX_H
#define AIRLOCK_VAULT_HEX_H

#include <stddef.h>

/* out: 2 * len + 1 bytes. */
void hex_encode(const unsigned char *in, size_t len, char *out);
/* Decodes exactly len bytes; -1 when hex is not 2 * len hex digits. */
int hex_decode(const char *hex, unsigned char *out, size_t len);

#endif
