#include "secret_aad.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_pattern(const void *a, const void *b)
{
    return strcmp(((const struct secret_binding *)a)->host_pattern,
                  ((const struct secret_binding *)b)->host_pattern);
}

/* Length-prefixed, so no field's bytes can pass for the next field's. */
static void netstring(FILE *out, const char *s)
{
    fprintf(out, "%zu:%s,", strlen(s), s);
}

char *secret_aad(struct secret_aad_fields *f, int version)
{
    char *aad = NULL, count[24];
    size_t len = 0;
    if (version == 1)
        return asprintf(&aad, "airlock-vault/secret/%s", f->id) < 0 ? NULL : aad;
    if (version != 2)
        return NULL;
    FILE *out = open_memstream(&aad, &len);
    if (!out)
        return NULL;
    qsort(f->bindings, f->n_bindings, sizeof(*f->bindings), by_pattern);
    fputs("airlock-vault/secret/v2/", out);
    netstring(out, f->id);
    netstring(out, f->project_id);
    netstring(out, f->org_id);
    netstring(out, f->sandbox_id);
    netstring(out, f->allow_plaintext ? "1" : "0");
    snprintf(count, sizeof(count), "%zu", f->n_bindings);
    netstring(out, count);
    for (size_t i = 0; i < f->n_bindings; i++) {
        netstring(out, f->bindings[i].host_pattern);
        netstring(out, f->bindings[i].injection_rule);
    }
    if (fclose(out) != 0) {
        free(aad);
        return NULL;
    }
    return aad;
}
