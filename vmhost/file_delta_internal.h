/* file_delta's own parts: the record writer both encoders use. */
#ifndef AIRLOCK_FILE_DELTA_INTERNAL_H
#define AIRLOCK_FILE_DELTA_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "file_delta.h"

#define FILE_DELTA_MAGIC "ALDELTA1"
#define FILE_DELTA_MAGIC_LEN 8

/* Writes records, merging neighbours (a run of literal pages becomes one
 * 'D', contiguous copies one 'C'), buffered, with a running sha256. */
struct delta_writer {
    int fd;
    void *sha; /* EVP_MD_CTX */
    unsigned char *out;  /* output buffer */
    size_t out_len;
    unsigned char *lit;  /* pending literal bytes */
    size_t lit_len;
    char pending;        /* 'C', 'Z' or 0: a run not written yet */
    uint64_t pending_off, pending_len;
    struct file_delta_stats *stats;
    bool failed;
    int failed_errno;    /* the write's, for the caller to classify */
    char *err;
    size_t errlen;
};

int delta_writer_open(struct delta_writer *w, int fd, uint64_t target_size,
                      struct file_delta_stats *stats, char *err, size_t errlen);
void delta_writer_literal(struct delta_writer *w, const void *data, size_t len);
void delta_writer_copy(struct delta_writer *w, uint64_t base_off, uint64_t len);
void delta_writer_zero(struct delta_writer *w, uint64_t len);
/* Ends the delta ('E'), flushes, gives its sha256 and frees the writer:
 * -1 when anything before failed (err says what). */
int delta_writer_close(struct delta_writer *w, char sha256_hex[65]);
/* Frees the writer after a failure of the caller's own; errno is a failed
 * write's, if one failed (as after close). */
void delta_writer_abort(struct delta_writer *w);

bool delta_page_is_zero(const unsigned char *p, size_t len);

#endif
