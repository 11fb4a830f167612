/* E2B's API key form for airlock keys: "e2b_" + the same 64 hex digits
 * as the airlock key "ak_<hex>", so the key E2B's SDK carries
 * (X-API-Key, or as the envd access token) is an airlock key of the same
 * project under another prefix: nothing new to store, revoke or rotate. */
#ifndef AIRLOCK_GATEWAY_E2B_KEY_H
#define AIRLOCK_GATEWAY_E2B_KEY_H

#include <stddef.h>

#define E2B_KEY_PREFIX "e2b_"
#define AIRLOCK_KEY_PREFIX "ak_"

/* "Bearer ak_<hex>" for the E2B key "e2b_<hex>" into out (as
 * gw_authenticate takes it); -1 when key is not of that form. */
int e2b_key_bearer(const char *key, char *out, size_t outlen);

/* "e2b_<hex>" for the airlock key "ak_<hex>"; -1 when key is not one. */
int e2b_key_from_airlock(const char *key, char *out, size_t outlen);

#endif
