/* Human-readable output helpers shared by the commands. */
#ifndef AIRLOCK_VMHOSTCTL_OUTPUT_H
#define AIRLOCK_VMHOSTCTL_OUTPUT_H

#include <protobuf-c/protobuf-c.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>

/* "2026-11-29T15:52:01Z" (UTC), or "-" for 0. */
void ctl_format_time(int64_t unix_ms, char *buf, size_t len);

/* Lower-case enum value name without its type prefix:
 * SANDBOX_STATE_RUNNING -> "running". */
void ctl_format_enum(const ProtobufCEnumDescriptor *desc, int value, const char *prefix, char *buf,
                     size_t len);


/* argv as one shell-like line: words joined by spaces. */
void ctl_print_argv(FILE *out, const ProtobufCBinaryData *argv, size_t n);

#endif
