/* guestd's own version, in its Hello and Health answers. */
#ifndef GUESTD_VERSION_H
#define GUESTD_VERSION_H

#define GUESTD_VERSION "0.1.0"

#endif
