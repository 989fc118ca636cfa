/* Typed access to container values (FIXED_DICT, ARRAY, TUPLE): the helpers the accessors
 * defc generates are made of. Game code calls the generated accessors (ITEM_get_count,
 * INVENTORY_at, Account_avatars_append ...; docs/tools/defc.md "Container accessors"), not
 * these: the generated ones know the field's index and kind and the C type that holds it.
 *
 * Every helper checks the value's shape before touching it (kind, field count, element
 * kind, bounds) and returns an mc_call_status:
 *   MC_CALL_OK
 *   MC_CALL_ERR_ARGS       the value is not of the container's shape (not a FIXED_DICT of
 *                          that many fields, a field or element of another kind)
 *   MC_CALL_ERR_NOT_FOUND  an element index beyond the count
 *   MC_CALL_ERR_STATE      a field read of a FIXED_DICT that is None (AllowNone); an append
 *                          to, or a removal from, a container of fixed <size>
 *   MC_CALL_ERR_BUSY       no room: 65535 elements already, or out of memory
 * On failure nothing changes and the out pointer is not written. */
#ifndef MC_COMMON_GEN_ACCESS_H
#define MC_COMMON_GEN_ACCESS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/value.h"

/* Field i (of nfields) of the FIXED_DICT d, which must be of kind k. */
int mc_gen_field(const mc_value *d, uint32_t nfields, uint32_t i, mc_type_kind k,
                 const mc_value **out);
/* The same for a change: a None d is first made present with the fields init_fields makes
 * (the generated <Dict>_init). */
int mc_gen_field_mut(mc_value *d, uint32_t nfields, uint32_t i, mc_type_kind k,
                     int (*init_fields)(mc_value *), mc_value **out);
/* Whether d is a None FIXED_DICT. */
bool mc_gen_is_none(const mc_value *d);
/* Make d (a FIXED_DICT of nfields fields) None: its fields freed. */
int mc_gen_set_none(mc_value *d, uint32_t nfields);

/* Element count of the list a (of kind list_kind: ARRAY or TUPLE); 0 when a is not one. */
uint32_t mc_gen_count(const mc_value *a, mc_type_kind list_kind);
/* Element i of the list a, which must be of kind k. */
int mc_gen_item(const mc_value *a, mc_type_kind list_kind, uint32_t i, mc_type_kind k,
                const mc_value **out);
int mc_gen_item_mut(mc_value *a, mc_type_kind list_kind, uint32_t i, mc_type_kind k,
                    mc_value **out);
/* A new last element of a list of any size (fixed_size 0), zeroed, for the caller to make
 * (the generated append fills it with the element's default or the given value). */
int mc_gen_append(mc_value *a, mc_type_kind list_kind, uint32_t fixed_size, mc_value **out);
/* Drop the last element (undoing an mc_gen_append whose value could not be made). */
void mc_gen_unappend(mc_value *a);
/* Remove element i (the later ones move down) / every element, of a list of any size. */
int mc_gen_remove(mc_value *a, mc_type_kind list_kind, uint32_t fixed_size, uint32_t i);
int mc_gen_clear(mc_value *a, mc_type_kind list_kind, uint32_t fixed_size);

/* Containers of n zeroed values, for the generated <Container>_init. */
int mc_gen_dict_alloc(mc_value *d, uint32_t nfields);
int mc_gen_list_alloc(mc_value *a, mc_type_kind list_kind, uint32_t n);
/* Replace a STRING, UNICODE_STRING or BLOB value's bytes (a copy); v must be of kind k. */
int mc_gen_set_bytes(mc_value *v, mc_type_kind k, const void *data, size_t len);

/* Replace the heap string a property struct field holds (char *) with a copy of s (NULL:
 * ""): MC_CALL_OK, or MC_CALL_ERR_BUSY out of memory (the field unchanged). */
int mc_str_set(char **field, const char *s);

#endif
