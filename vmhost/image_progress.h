/* "[image] ..." progress lines of the image builder. */
#ifndef AIRLOCK_IMAGE_PROGRESS_H
#define AIRLOCK_IMAGE_PROGRESS_H

#include <stdio.h>

/* Prints one line to out (NULL = quiet) and flushes it. */
void image_progress(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Seconds since an earlier monotonic_seconds() reading. */
double monotonic_seconds(void);

#endif
