#include "string_map_json.h"

#include <stdio.h>
#include <stdlib.h>

/* Where the string field `name` of an entry is. */
static char **entry_string(ProtobufCMessage *entry, const char *name)
{
    const ProtobufCFieldDescriptor *f =
        protobuf_c_message_descriptor_get_field_by_name(entry->descriptor, name);
    return (char **)((char *)entry + f->offset);
}

/* n initialised entries of type desc after their n pointers, in one block
 * (at least one byte, so NULL means out of memory). */
static ProtobufCMessage **entries_alloc(const ProtobufCMessageDescriptor *desc, size_t n)
{
    ProtobufCMessage **list = malloc(n * (sizeof(*list) + desc->sizeof_message) + 1);
    char *messages = (char *)(list + n);
    for (size_t i = 0; list && i < n; i++) {
        list[i] = (ProtobufCMessage *)(messages + i * desc->sizeof_message);
        protobuf_c_message_init(desc, list[i]);
    }
    return list;
}

static void entry_set(ProtobufCMessage *entry, const char *key, const char *value)
{
    *entry_string(entry, "key") = (char *)key;
    *entry_string(entry, "value") = (char *)value;
}

json_t *string_map_to_json(ProtobufCMessage *const *entries, size_t n, const char *field,
                           char *err, size_t errlen)
{
    json_t *obj = json_object();
    for (size_t i = 0; obj && i < n; i++) {
        const char *key = *entry_string(entries[i], "key");
        json_t *value = json_string(*entry_string(entries[i], "value"));
        if (!value || json_object_set_new(obj, key, value) < 0) {
            snprintf(err, errlen, "%s: keys and values must be UTF-8", field);
            json_decref(obj);
            return NULL;
        }
    }
    if (!obj)
        snprintf(err, errlen, "out of memory");
    return obj;
}

ProtobufCMessage **string_map_from_json(json_t *obj, const ProtobufCMessageDescriptor *entry_desc,
                                        size_t *n)
{
    ProtobufCMessage **list = entries_alloc(entry_desc, json_object_size(obj));
    const char *key;
    json_t *value;
    *n = 0;
    if (!list)
        return NULL;
    json_object_foreach(obj, key, value)
    {
        if (json_is_string(value))
            entry_set(list[(*n)++], key, json_string_value(value));
    }
    return list;
}

bool json_text_valid(const char *s)
{
    json_t *j = json_string(s); /* jansson's own UTF-8 check */
    json_decref(j);
    return j != NULL;
}

ProtobufCMessage **string_map_copy(ProtobufCMessage *const *entries, size_t n,
                                   const ProtobufCMessageDescriptor *entry_desc, const char *field,
                                   char *err, size_t errlen)
{
    ProtobufCMessage **list = entries_alloc(entry_desc, n);
    if (!list) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        const char *key = *entry_string(entries[i], "key");
        const char *value = *entry_string(entries[i], "value");
        if (!json_text_valid(key) || !json_text_valid(value)) {
            snprintf(err, errlen, "%s: keys and values must be UTF-8", field);
            free(list);
            return NULL;
        }
        entry_set(list[i], key, value);
    }
    return list;
}
