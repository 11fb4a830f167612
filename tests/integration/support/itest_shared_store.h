/* What the shared snapshot store's tests share (test_vmhost_shared_store*,
 * docs/snapshot-store.md): the calls that name a store object, and a
 * workload whose processes, memory and files must survive a move. */
#ifndef AIRLOCK_ITEST_SHARED_STORE_H
#define AIRLOCK_ITEST_SHARED_STORE_H

#include "itest.h"

/* Two vmhosts sharing a store directory made from dir (a mkdtemp
 * template, filled in): itest_vh (A) and b, b with extra arguments after
 * its store's (NULL: none). 0, or -1 after printing why. */
int itest_store_pair_start(char *dir, struct itest_vmhost *b, const char *const b_extra[]);
/* Stops b, then itest_vh (itest_group_teardown), and removes dir: 0, or
 * -1 when any of it failed. */
int itest_store_pair_stop(const char *dir, struct itest_vmhost *b, void **state);

/* method with SandboxRef {id, store_object}; the status, details malloc'd
 * (may be NULL). */
grpc_status_code itest_call_with_object(struct itest_vmhost *vh, const char *method,
                                        const char *id, const char *object,
                                        const ProtobufCMessageDescriptor *resp, char **details);

/* ResumeSandbox naming the store object; the status, details malloc'd. */
grpc_status_code itest_resume_from(struct itest_vmhost *vh, const char *id, const char *object,
                                   char **details);

/* SuspendSandbox must succeed into the store: the object (malloc'd). */
char *itest_assert_suspend_to_store(struct itest_vmhost *vh, const char *id);

/* ResumeSandbox naming object must succeed, leaving id running on vh. */
void itest_assert_resume_from(struct itest_vmhost *vh, const char *id, const char *object);

/* Flips the bits of the byte in the middle of path, a store's object:
 * corrupt once, whole again when called twice. */
void itest_flip_middle_byte(const char *path);

/* A counting shell loop and a python process holding a random value
 * (their pids), and 4 MiB of random bytes with their checksum. */
struct itest_workload {
    char pids[128];
    long counter;
    char secret[64];
};
void itest_workload_start(struct itest_vmhost *vh, const char *id);
/* Reads it; the bytes must match their checksum. */
void itest_workload_read(struct itest_vmhost *vh, const char *id, struct itest_workload *w);
/* The same processes with the same value, counting on. */
void itest_assert_workload_carried_on(struct itest_vmhost *vh, const char *id,
                                      const struct itest_workload *before);

#endif
