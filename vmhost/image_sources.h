/* The Debian mirrors the host's own apt configuration names for a suite,
 * as one-line sources.list entries for mmdebstrap:
 *   deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main
 *
 * An entry is kept when it is a binary ("deb") entry, its suite is the
 * target suite or one of Debian's companions (SUITE-updates, -security,
 * -backports), it is signed by Debian's archive keyring or names no key,
 * and it has at least one Debian component (main, contrib, non-free,
 * non-free-firmware; others are dropped). Everything else — third-party
 * repositories, deb-src, disabled entries — is left out. */
#ifndef AIRLOCK_IMAGE_SOURCES_H
#define AIRLOCK_IMAGE_SOURCES_H

#include <stddef.h>

#include "strbuf.h"

/* Parsers for the text of one file; matching entries are appended to out,
 * one per line. */
void apt_sources_parse_list(const char *text, const char *suite, struct strbuf *out);
void apt_sources_parse_deb822(const char *text, const char *suite, struct strbuf *out);

/* Reads etc_apt/sources.list and etc_apt/sources.list.d/{*.list,*.sources}
 * (in name order). Fails when no entry matches, naming the files read. */
int apt_sources_for_suite(const char *etc_apt, const char *suite, struct strbuf *out, char *err,
                          size_t errlen);

#endif
