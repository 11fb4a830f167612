/* map<string, string> fields as JSON objects of strings (REST's "env" and
 * "metadata", the scheduler's env and metadata columns). protobuf-c makes
 * each entry of such a field a message of its own type with `key` and
 * `value`; these work on any of them, given the entry type. */
#ifndef AIRLOCK_STRING_MAP_JSON_H
#define AIRLOCK_STRING_MAP_JSON_H

#include <jansson.h>
#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stddef.h>

/* s is UTF-8, what a JSON string (and so a jsonb column) can hold. */
bool json_text_valid(const char *s);

/* The n entries as a JSON object (a later key wins); NULL with err naming
 * field when a key or value is not UTF-8 ("env: keys and values must be
 * UTF-8"), or out of memory. */
json_t *string_map_to_json(ProtobufCMessage *const *entries, size_t n, const char *field,
                           char *err, size_t errlen);

/* The string members of obj (NULL: none) as entries of type entry_desc,
 * their count in *n: one malloc'd block (free() it), keys and values
 * pointing into obj. NULL when out of memory. */
ProtobufCMessage **string_map_from_json(json_t *obj, const ProtobufCMessageDescriptor *entry_desc,
                                        size_t *n);

/* The n entries as entries of type entry_desc (another map field's), one
 * block as string_map_from_json's, strings borrowed from the source; NULL
 * with err naming field when a key or value is not UTF-8, or out of
 * memory. */
ProtobufCMessage **string_map_copy(ProtobufCMessage *const *entries, size_t n,
                                   const ProtobufCMessageDescriptor *entry_desc, const char *field,
                                   char *err, size_t errlen);

#endif
