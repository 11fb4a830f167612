/* Host names as egress compares them: lowercase, no trailing dot, labels
 * of letters, digits, '-' and '_' (1..63 bytes), at most 253 bytes. What
 * a guest sends (SNI, Host, DNS questions) and what a policy lists both go
 * through name_normalize, so a name compares equal only to itself. */
#ifndef AIRLOCK_NAMES_H
#define AIRLOCK_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#define NAME_MAX_LEN 253

/* Copies the len bytes of in to out (at least NAME_MAX_LEN + 1 bytes) in
 * normal form. -1 when it is not a valid host name. */
int name_normalize(const char *in, size_t len, char *out);

/* pattern "example.com" matches only example.com; "*.example.com" matches
 * every name strictly below example.com. Both sides normalized. */
bool name_matches(const char *pattern, const char *name);

/* Checks a policy pattern ("name" or "*.name") and stores its normal form
 * in out. -1 when invalid. */
int name_pattern_normalize(const char *in, char *out);

#endif
