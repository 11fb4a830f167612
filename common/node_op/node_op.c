#include "node_op.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define NODE_OP_PREFIX "NODE_OP_"
#define NODE_OP_NAME_MAX 32

/* Lower-case names, made once from the enum's descriptor. */
static char names[32][NODE_OP_NAME_MAX];
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

static void names_make(void)
{
    const ProtobufCEnumDescriptor *d = &airlock__node__v1__node_op__descriptor;
    for (unsigned i = 0; i < d->n_values; i++) {
        int v = d->values[i].value;
        const char *n = d->values[i].name;
        if (v <= 0 || (size_t)v >= sizeof(names) / sizeof(*names) ||
            strncmp(n, NODE_OP_PREFIX, strlen(NODE_OP_PREFIX)) != 0)
            continue;
        n += strlen(NODE_OP_PREFIX);
        size_t j = 0;
        for (; n[j] && j + 1 < NODE_OP_NAME_MAX; j++)
            names[v][j] = (char)tolower((unsigned char)n[j]);
        names[v][j] = '\0';
    }
}

const char *node_op_name(node_op op)
{
    pthread_once(&names_once, names_make);
    if ((int)op <= 0 || (size_t)op >= sizeof(names) / sizeof(*names) || !names[op][0])
        return NULL;
    return names[op];
}

node_op node_op_from_name(const char *name)
{
    pthread_once(&names_once, names_make);
    for (size_t i = 1; i < sizeof(names) / sizeof(*names); i++)
        if (names[i][0] && strcmp(names[i], name) == 0)
            return (node_op)i;
    return AIRLOCK__NODE__V1__NODE_OP__NODE_OP_UNSPECIFIED;
}

int node_op_subject(const char *node_id, node_op op, char *out, size_t outlen)
{
    const char *name = node_op_name(op);
    if (!name)
        return -1;
    int n = snprintf(out, outlen, "airlock.node.%s.%s", node_id, name);
    return n < 0 || (size_t)n >= outlen ? -1 : 0;
}
