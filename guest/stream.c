/* The daemon's open streams (stream.h). */
#include "stream.h"

#include "guestd_state.h"

void guestd_stream_add(struct guestd *g, struct stream *s, uint32_t id,
                       const struct stream_ops *ops)
{
    s->id = id;
    s->ops = ops;
    s->g = g;
    list_add_tail(&g->streams, &s->node);
    g->nstreams++;
}

struct stream *guestd_stream_find(struct guestd *g, uint32_t id)
{
    struct list_node *pos, *tmp;
    list_for_each_safe(pos, tmp, &g->streams) {
        struct stream *s = list_entry(pos, struct stream, node);
        if (s->id == id)
            return s;
    }
    return NULL;
}

void guestd_stream_end(struct stream *s)
{
    list_remove(&s->node);
    s->g->nstreams--;
    s->ops->destroy(s);
}

void guestd_stream_end_all(struct guestd *g)
{
    struct list_node *pos, *tmp;
    list_for_each_safe(pos, tmp, &g->streams)
        guestd_stream_end(list_entry(pos, struct stream, node));
}
