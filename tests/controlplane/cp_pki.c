#include "cp_pki.h"

#include "fsutil.h"

int cp_tls_of(const char *pki_dir, const char *name, struct cp_tls *out)
{
    out->files = (struct tls_files){ .ca = out->ca, .cert = out->cert, .key = out->key };
    if (fs_path(out->ca, sizeof(out->ca), "%s/ca.crt", pki_dir) < 0 ||
        fs_path(out->cert, sizeof(out->cert), "%s/%s.crt", pki_dir, name) < 0 ||
        fs_path(out->key, sizeof(out->key), "%s/%s.key", pki_dir, name) < 0)
        return -1;
    return 0;
}
