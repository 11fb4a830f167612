/* BuildTemplate on a test vmhost (docs/templates.md): the streamed log
 * and the template it ends with, for the tests of named templates
 * (test_vmhost_template, test_vmhost_template_shared). */
#ifndef AIRLOCK_ITEST_TEMPLATE_H
#define AIRLOCK_ITEST_TEMPLATE_H

#include "itest.h"

struct itest_build {
    grpc_status_code status;
    char *details;
    char *log;                               /* every log line, '\n'-joined */
    Airlock__Vmhost__V1__BuildTemplateEvent *done; /* the last event, if done */
};

void itest_build_free(struct itest_build *r);

/* Builds spec on vh, whatever the outcome. */
void itest_build(struct itest_vmhost *vh, const Airlock__Vmhost__V1__TemplateSpec *spec,
                 struct itest_build *r);

/* Builds spec on vh, which must succeed (else the log and the vmhost's
 * log tail are printed and the test fails). */
void itest_must_build(struct itest_vmhost *vh, const Airlock__Vmhost__V1__TemplateSpec *spec,
                      struct itest_build *r);

#endif
