/* A file described by what differs from a base file: how a suspend goes
 * into the shared snapshot store without moving the sandbox's whole disk
 * and RAM (docs/snapshot-store.md "Deltas").
 *
 * The format (little-endian): "ALDELTA1", u64 target size, then records
 * until 'E':
 *   'D' u64 len, len bytes     the target's next len bytes, literally
 *   'C' u64 base_off, u64 len  the next len bytes are the base's at base_off
 *   'Z' u64 len                the next len bytes are zero (left a hole)
 *   'E'                        end; nothing may follow
 * Two encoders fit two kinds of file:
 * - blocks: a disk image reflinked from its base (a sandbox's disk from its
 *   template's): a block is copied from the base at the same offset when
 *   both files share its extent (FIEMAP, nothing read) or hold the same
 *   bytes; zero blocks are holes; the rest is literal.
 * - pages: a QEMU migration stream against the memory file the VM was
 *   restored from: every 4 KiB window of the stream that equals a page of
 *   the base anywhere is a copy (a rolling checksum finds them at any
 *   offset, as rsync does, so the stream's format is never parsed); the
 *   page headers between them, device state and the pages the guest
 *   changed are literal.
 * Each returns the sha256 of the delta it wrote; apply checks the delta it
 * reads against one, so a corrupt or truncated delta is refused. */
#ifndef AIRLOCK_FILE_DELTA_H
#define AIRLOCK_FILE_DELTA_H

#include <stddef.h>
#include <stdint.h>

#define FILE_DELTA_PAGE 4096u

struct file_delta_stats {
    uint64_t target_bytes;  /* the file described */
    uint64_t copied_bytes;  /* taken from the base */
    uint64_t zero_bytes;    /* holes */
    uint64_t literal_bytes; /* carried in the delta */
    uint64_t delta_bytes;   /* the delta's size */
};

/* Writes to out_fd (at its position) target's delta against base, a file
 * the target was reflinked from. sha256_hex (65 bytes) gets the delta's
 * checksum. When writing the delta failed, errno is the write's (ENOSPC:
 * out_fd's file system is full). */
int file_delta_encode_blocks(int target_fd, int base_fd, int out_fd, char sha256_hex[65],
                             struct file_delta_stats *stats, char *err, size_t errlen);

/* The same for a file whose pages may lie anywhere in base (a migration
 * stream against guest memory). */
int file_delta_encode_pages(int target_fd, int base_fd, int out_fd, char sha256_hex[65],
                            struct file_delta_stats *stats, char *err, size_t errlen);

/* Rebuilds into target_fd (an empty file) what delta_fd (read from its
 * position to its end) describes against base_fd. Copies are reflinks
 * where the file system can (copy_file_range). -1 with the reason when the
 * delta's sha256 is not expected_sha256_hex, it is malformed, or it reads
 * past the base; target_fd's contents are then undefined. */
int file_delta_apply(int delta_fd, int base_fd, int target_fd, const char *expected_sha256_hex,
                     struct file_delta_stats *stats, char *err, size_t errlen);

/* The same with base_fd == target_fd: a blocks delta against the file's
 * present contents changes it in place (copies of the same offset are
 * left alone, zeros punched). A live migration's last disk changes go
 * into the disk the target's QEMU already has open. On failure the file
 * is partly changed. */
int file_delta_apply_in_place(int delta_fd, int fd, const char *expected_sha256_hex,
                              struct file_delta_stats *stats, char *err, size_t errlen);

#endif
