/* cmocka assertions about sandbox state calls shared by integration tests. */
#ifndef AIRLOCK_ITEST_ASSERT_H
#define AIRLOCK_ITEST_ASSERT_H

#include "itest.h"

/* method (a vmhost call taking a sandbox id and answering Sandbox) on id
 * must succeed and leave the sandbox in state want. */
void itest_assert_transition(struct itest_vmhost *vh, const char *method, const char *id,
                             int want);

/* method on id must fail with FAILED_PRECONDITION naming id and want_state. */
void itest_assert_refused(struct itest_vmhost *vh, const char *method, const char *id,
                          const char *want_state);

#endif
