/* The misbehaviours of airlock-hostile-agent (README.md), each asked for by
 * a request a normal guest would serve:
 *
 *   Exec argv {"airlock-hostile", NAME}:
 *     flood           ExecStarted, then 64 MiB of Output ignoring credit
 *     unknown-stream  ExecStarted, then Output on a stream never opened
 *     oversize        a length prefix of 256 MiB
 *     lie-length      a frame whose Output claims 1 MiB of data it lacks
 *     stall           nothing, ever again
 *   List path:
 *     /airlock-hostile/endless  DirEntries batches of ~200 KiB, never done,
 *                               past the host's Cancel
 *     /airlock-hostile/trickle  one entry every 500 ms, never done
 *
 * A misbehaviour never returns: the agent has stopped serving. */
#ifndef HOSTILE_MISBEHAVE_H
#define HOSTILE_MISBEHAVE_H

#include <stdbool.h>

#include "frame.h"

/* If f (from the host) asks for a misbehaviour, performs it on port (the
 * virtio port) and never returns; otherwise returns false. */
bool misbehave_if_asked(int port, const GuestFrame *f);

#endif
