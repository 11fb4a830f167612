/* The pseudo-random numbers of the mutation tests (xorshift64): a fixed
 * seed gives the same inputs on every run, so a failure reproduces. */
#ifndef AIRLOCK_FUZZ_RNG_H
#define AIRLOCK_FUZZ_RNG_H

#include <stdint.h>

/* The next number of the sequence *state (seeded non-zero) is at. */
static inline uint64_t fuzz_rng(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

#endif
