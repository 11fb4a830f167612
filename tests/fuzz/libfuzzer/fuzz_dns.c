/* libFuzzer target: the DNS messages egress parses (egress/dns_wire.h): a
 * guest's query, and an upstream's reply. A query that parses must give an
 * answer that parses back as a reply to it with the addresses put in. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dns_wire.h"

#define MAX_ADDRS 16

/* The answer egress would send for q parses back to the same addresses. */
static void check_answer_round_trip(const uint8_t *query, const struct dns_question *q)
{
    static const uint32_t addrs[] = { 0x0a000001, 0x0a000002 };
    uint8_t out[DNS_MAX_UDP];
    size_t n = dns_build_answer(query, q, DNS_RCODE_NOERROR, addrs, 2, 60, out, sizeof(out));
    if (n == 0 || n > sizeof(out))
        return; /* a question too long for 512 bytes with two records */
    uint32_t got[MAX_ADDRS], ttl = 0;
    size_t n_got = 0;
    int rcode = -1;
    if (!q->name_valid || q->qtype != DNS_TYPE_A || q->qclass != DNS_CLASS_IN)
        return;
    if (dns_parse_reply_a(out, n, q->id, got, MAX_ADDRS, &n_got, &ttl, &rcode) < 0 ||
        rcode != DNS_RCODE_NOERROR || n_got != 2 || got[0] != addrs[0] || got[1] != addrs[1])
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct dns_question q;
    if (dns_parse_query(data, size, &q) == 0) {
        if (q.end > size || (q.name_valid && strnlen(q.name, sizeof(q.name)) > NAME_MAX_LEN))
            abort();
        check_answer_round_trip(data, &q);
    }
    uint8_t formerr[DNS_MAX_UDP];
    size_t n = dns_build_formerr(data, size, formerr, sizeof(formerr));
    if (n > sizeof(formerr) || (size >= 12 && n == 0))
        abort();
    uint32_t addrs[MAX_ADDRS], ttl;
    size_t n_addrs = 0;
    int rcode;
    uint16_t id = size >= 2 ? (uint16_t)(data[0] << 8 | data[1]) : 0;
    if (dns_parse_reply_a(data, size, id, addrs, MAX_ADDRS, &n_addrs, &ttl, &rcode) == 0 &&
        n_addrs > MAX_ADDRS)
        abort();
    return 0;
}
