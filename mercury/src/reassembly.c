/* The per-nub budget of bytes held in on-channel reassembly (messages spanning packets,
 * and out-of-order fragment packets waiting in receive windows). A channel whose peer sends
 * a message over max_message_size is closed by the receive path (receive.c). */
#include <stdlib.h>

#include "internal.h"

bool mc_packet_is_fragment(const mc_packet *pkt)
{
    return pkt->len >= MC_HEADER_SIZE && (mc_load_u16(pkt->data) & MC_PF_IS_FRAGMENT);
}

bool mc_reasm_admit(mc_channel *ch, size_t bytes, bool in_order)
{
    mc_nub *nub = ch->nub;
    uint64_t held = nub->stats.reassembly_bytes;
    if (held + bytes <= nub->cfg.max_reassembly_bytes)
        return true;
    /* the reassembly that started first always continues (two big transfers cannot block
     * each other); with none in progress, the next in-order fragment may start one */
    if (nub->asm_head == ch || (in_order && !nub->asm_head))
        return true;
    uint64_t refused = nub->stats.drops[MC_DROP_REASSEMBLY_BUDGET] + 1;
    if ((refused & (refused - 1)) == 0) { /* 1st, 2nd, 4th, 8th... refusal */
        char a[MC_ADDRESS_STRLEN];
        MC_WARNING("channel %s: fragment refused: %llu bytes held in reassembly "
                   "(max_reassembly_bytes %llu); the sender will resend it (%llu refused)",
                   mc_address_format(&ch->addr, a, sizeof a), (unsigned long long)held,
                   (unsigned long long)nub->cfg.max_reassembly_bytes,
                   (unsigned long long)refused);
    }
    return false;
}

void mc_reasm_start(mc_channel *ch)
{
    mc_nub *nub = ch->nub;
    mc_reasm_stop(ch);
    ch->asm_active = true;
    ch->asm_prev = nub->asm_tail;
    ch->asm_next = NULL;
    if (nub->asm_tail)
        nub->asm_tail->asm_next = ch;
    else
        nub->asm_head = ch;
    nub->asm_tail = ch;
}

void mc_reasm_stop(mc_channel *ch)
{
    mc_nub *nub = ch->nub;
    if (!ch->asm_active)
        return;
    ch->asm_active = false;
    if (ch->asm_prev)
        ch->asm_prev->asm_next = ch->asm_next;
    else
        nub->asm_head = ch->asm_next;
    if (ch->asm_next)
        ch->asm_next->asm_prev = ch->asm_prev;
    else
        nub->asm_tail = ch->asm_prev;
    ch->asm_prev = ch->asm_next = NULL;
    nub->stats.reassembly_bytes -= ch->asm_bytes;
    ch->asm_bytes = 0;
}

void mc_reasm_grow(mc_channel *ch, size_t bytes)
{
    ch->asm_bytes += bytes;
    ch->nub->stats.reassembly_bytes += bytes;
}

void mc_reasm_buffered(mc_channel *ch, size_t len)
{
    ch->frag_buffered += len;
    ch->nub->stats.reassembly_bytes += len;
}

void mc_reasm_unbuffered(mc_channel *ch, size_t len)
{
    ch->frag_buffered -= len;
    ch->nub->stats.reassembly_bytes -= len;
}
