/* Millisecond clocks used for deadlines (monotonic) and timestamps (wall). */
#ifndef AIRLOCK_CLOCK_H
#define AIRLOCK_CLOCK_H

#include <stdint.h>
#include <time.h>

int64_t clock_monotonic_ms(void);
/* Microseconds, for breakdowns of operations that take a few ms. */
int64_t clock_monotonic_us(void);
int64_t clock_realtime_ms(void);
/* An absolute CLOCK_REALTIME timespec timeout_ms from now, for
 * pthread_cond_timedwait. */
struct timespec clock_deadline_after_ms(int64_t timeout_ms);

#endif
