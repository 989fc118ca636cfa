/* Helpers for building and packing protobuf-c control messages.
 *
 * Messages the framework builds are allocated with malloc (strings with mc_pb_strdup,
 * repeated fields with malloc'd arrays), so mc_pb_free (protobuf-c's free_unpacked with the
 * default allocator) releases both messages we built and messages we unpacked.
 */
#ifndef MC_SERVER_PB_H
#define MC_SERVER_PB_H

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>

/* A heap copy of s ("" for NULL); NULL only when out of memory. */
char *mc_pb_strdup(const char *s);
/* Free a message built by us or returned by an unpack function (NULL is fine). */
void mc_pb_free(void *msg);
/* Pack into a new heap buffer; returns NULL on allocation failure. */
uint8_t *mc_pb_pack(const void *msg, size_t *len);

#endif
