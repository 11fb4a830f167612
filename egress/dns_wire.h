/* The few DNS messages egress reads and writes (RFC 1035): a guest's
 * query, the answer egress builds for it (A records only), the query egress
 * sends upstream, and the A records of the upstream's reply. Parsers are
 * bounds-checked against hostile input and follow compression pointers
 * only backwards. */
#ifndef AIRLOCK_EGRESS_DNS_WIRE_H
#define AIRLOCK_EGRESS_DNS_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "names.h"

#define DNS_MAX_UDP 512
#define DNS_TYPE_A 1
#define DNS_TYPE_AAAA 28
#define DNS_CLASS_IN 1

enum dns_rcode {
    DNS_RCODE_NOERROR = 0,
    DNS_RCODE_FORMERR = 1,
    DNS_RCODE_SERVFAIL = 2,
    DNS_RCODE_NXDOMAIN = 3,
    DNS_RCODE_NOTIMP = 4,
    DNS_RCODE_REFUSED = 5,
};

struct dns_question {
    uint16_t id;
    uint16_t qtype;
    uint16_t qclass;
    int name_valid;              /* name holds a valid normalized host name */
    char name[NAME_MAX_LEN + 1];
    size_t end;                  /* offset just past the question */
};

/* A standard query with exactly one question. -1 when msg is not one (no
 * answer is owed then, except FORMERR when at least a header arrived). */
int dns_parse_query(const uint8_t *msg, size_t len, struct dns_question *q);

/* The answer to query (whose question q describes): header with q->id and
 * rcode, the question copied, then one A record per address. Returns its
 * length, or 0 when out is too small. */
size_t dns_build_answer(const uint8_t *query, const struct dns_question *q, enum dns_rcode rcode,
                        const uint32_t *addrs, size_t n_addrs, uint32_t ttl, uint8_t *out,
                        size_t outlen);

/* A FORMERR reply echoing only the header's id; 0 when len < 12. */
size_t dns_build_formerr(const uint8_t *query, size_t len, uint8_t *out, size_t outlen);

/* A recursive query for name (normalized) and qtype. Returns its length or 0. */
size_t dns_build_query(uint16_t id, const char *name, uint16_t qtype, uint8_t *out,
                       size_t outlen);

/* The class IN A records in the answer section of a reply to the query
 * with id (other ids are not ours: -1). *rcode gets the reply's rcode,
 * *ttl the smallest TTL seen. At most max addresses are kept. */
int dns_parse_reply_a(const uint8_t *msg, size_t len, uint16_t id, uint32_t *addrs, size_t max,
                      size_t *n_addrs, uint32_t *ttl, int *rcode);

#endif
