/* cmocka assertions about sandbox state calls shared by integration tests,
 * and checks of what a sandbox keeps on the host (its files, its netns). */
#ifndef AIRLOCK_ITEST_ASSERT_H
#define AIRLOCK_ITEST_ASSERT_H

#include "itest.h"

/* method (a vmhost call taking a sandbox id and answering Sandbox) on id
 * must succeed and leave the sandbox in state want. */
void itest_assert_transition(struct itest_vmhost *vh, const char *method, const char *id,
                             int want);

/* CreateSandbox with defaults must succeed (else vmhost's log tail, and a
 * failure naming the status); the id, malloc'd. */
char *itest_assert_create(struct itest_vmhost *vh);

/* GetSandbox of id must succeed; the answer (free with
 * protobuf_c_message_free_unpacked). */
Airlock__Vmhost__V1__Sandbox *itest_assert_get(struct itest_vmhost *vh, const char *id);

/* method on id must fail with FAILED_PRECONDITION naming id and want_state. */
void itest_assert_refused(struct itest_vmhost *vh, const char *method, const char *id,
                          const char *want_state);

/* Whether <data dir>/store/sandboxes/<id>/<name> exists ("": the
 * sandbox's directory itself); the path must fit PATH_MAX. */
bool itest_sandbox_path_exists(const struct itest_vmhost *vh, const char *id, const char *name);

/* Whether the sandbox's network namespace, /run/netns/airlock-<id>, exists. */
bool itest_netns_exists(const char *id);

/* st must be want, with details naming named; frees *detailsp (taken by
 * reference so the call producing st may be an argument too) and clears it. */
void itest_assert_status_naming(grpc_status_code st, char **detailsp, grpc_status_code want,
                                const char *named);

/* sh -c script in sandbox id must run (any exit code, returned); its
 * stdout goes to out (may be NULL), its stderr to stderr when it fails. */
int itest_assert_sh_code(struct itest_vmhost *vh, const char *id, const char *script, char *out,
                         size_t outlen);

/* sh -c script in sandbox id must run and exit 0; its stdout, malloc'd. */
char *itest_assert_sh(struct itest_vmhost *vh, const char *id, const char *script);

#endif
