/* The stack's internal PKI (cp_stack.h: DIR/pki, made by
 * scripts/internal-pki.sh): the files of one identity, named as the script
 * names them ("scheduler", "gateway", "nats", "vmhost-" CP_NODE_ID). */
#ifndef AIRLOCK_CP_PKI_H
#define AIRLOCK_CP_PKI_H

#include <limits.h>

#include "tls_credentials.h"

struct cp_tls {
    char ca[PATH_MAX], cert[PATH_MAX], key[PATH_MAX];
    struct tls_files files; /* the three above: use it where it is, never a copy */
};

/* 0, or -1 when a path does not fit. */
int cp_tls_of(const char *pki_dir, const char *name, struct cp_tls *out);

#endif
