/* Intrusive circular doubly-linked list (the Linux kernel's shape). */
#ifndef GUESTD_LIST_H
#define GUESTD_LIST_H

#include <stdbool.h>
#include <stddef.h>

struct list_node {
    struct list_node *prev, *next;
};

#define LIST_INIT(name) { &(name), &(name) }
#define list_entry(node, type, member) ((type *)((char *)(node) - offsetof(type, member)))
/* Safe against removal of the current node. */
#define list_for_each_safe(pos, tmp, head) \
    for ((pos) = (head)->next, (tmp) = (pos)->next; (pos) != (head); (pos) = (tmp), (tmp) = (pos)->next)

static inline void list_init(struct list_node *head)
{
    head->prev = head->next = head;
}

static inline bool list_empty(const struct list_node *head)
{
    return head->next == head;
}

static inline void list_add_tail(struct list_node *head, struct list_node *n)
{
    n->prev = head->prev;
    n->next = head;
    head->prev->next = n;
    head->prev = n;
}

/* Leaves n pointing to itself, so removing it twice is harmless. */
static inline void list_remove(struct list_node *n)
{
    n->prev->next = n->next;
    n->next->prev = n->prev;
    n->prev = n->next = n;
}

#endif
