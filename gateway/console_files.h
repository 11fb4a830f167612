/* The web console's built files (console/, docs/console.md) under
 * /console/: GET and HEAD, no authentication (the page signs its own API
 * calls with the key the user types). Not a route of gw_routes, so
 * `airlock-gateway --routes` stays the API's: a path under /console is
 * taken here before any table is asked. */
#ifndef AIRLOCK_GATEWAY_CONSOLE_FILES_H
#define AIRLOCK_GATEWAY_CONSOLE_FILES_H

#include <stdbool.h>

#include "gateway.h"

/* Whether url is the console's (/console or under /console/); if so r is
 * routed to the file handler, or failed (wrong method, a path that climbs
 * out of the directory) to be answered at the request's end. */
bool console_request_begin(struct gw_request *r, const char *method, const char *url);

#endif
