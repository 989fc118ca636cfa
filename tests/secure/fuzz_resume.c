/* libFuzzer: the parsers of resumption (secure/resume.h, entity/client_wire.h TICKET) on
 * arbitrary bytes: a RESUME at the loginapp (also one with a good cookie whose ticket and
 * proof are the fuzzer's bytes), a ticket opened with the cluster's key, a RESUME_REPLY at the
 * client, the TICKET message; and a ticket sealed from the fuzzer's fields opens to the same
 * fields. Nothing may crash, read out of bounds or accept without the keys. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "entity/client_wire.h"
#include "secure/resume.h"

#include <sodium.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static mc_secure_secret secret;
    static uint8_t key[32];
    static int ready;
    if (!ready) {
        if (mc_secure_secret_init(&secret) != 0)
            return 0;
        randombytes_buf(key, sizeof key);
        ready = 1;
    }
    mc_secure_peer from = {0x7f000001u, 1234};
    mc_resume_request req;
    if (mc_resume_server_check(&secret, from, 5, data, size, &req) == MC_SECURE_OK)
        __builtin_trap(); /* needs a cookie by this secret */
    if (mc_resume_server_open(key, data, size, &req) == MC_SECURE_OK)
        __builtin_trap(); /* needs a ticket sealed with the key */

    /* a RESUME with a good cookie whose ticket and proof are these bytes */
    uint8_t zero[32] = {0}, hello[256], chal[MC_SECURE_CHALLENGE_SIZE];
    uint8_t pkt[MC_RESUME_SIZE], ticket[MC_RESUME_TICKET_SIZE] = {0}, rk[32] = {0};
    mc_secure_client c;
    mc_secure_keys none;
    if (mc_secure_client_init(&c, 0, zero) == 0) {
        mc_secure_client_packet(&c, hello);
        if (mc_secure_server_hello(&secret, from, 5, hello, sizeof hello, chal) ==
                MC_SECURE_OK &&
            mc_secure_client_receive(&c, chal, sizeof chal, &none) == MC_SECURE_OK) {
            memcpy(ticket, data, size < sizeof ticket ? size : sizeof ticket);
            if (size > sizeof ticket)
                memcpy(rk, data + sizeof ticket,
                       size - sizeof ticket < sizeof rk ? size - sizeof ticket : sizeof rk);
            if (mc_resume_client_request(&c, ticket, rk, pkt) == MC_SECURE_OK &&
                mc_resume_server_check(&secret, from, 6, pkt, sizeof pkt, &req) ==
                    MC_SECURE_OK &&
                mc_resume_server_open(key, pkt, sizeof pkt, &req) == MC_SECURE_OK)
                __builtin_trap(); /* a ticket cannot be guessed */
            mc_login_result r;
            if (mc_resume_client_reply(&c, rk, data, size, &r) == MC_SECURE_OK)
                __builtin_trap(); /* an answer needs the resume key and this nonce */
        }
        mc_secure_client_clear(&c);
    }
    mc_resume_ticket_info info;
    if (size >= MC_RESUME_TICKET_SIZE && mc_resume_ticket_open(key, data, &info) == MC_SECURE_OK)
        __builtin_trap();

    /* a ticket sealed from fields taken from the bytes opens to the same fields */
    if (size >= 16) {
        mc_resume_ticket_info in, out;
        memset(&in, 0, sizeof in);
        in.entity_id = (int32_t)((uint32_t)data[0] << 24 | (uint32_t)data[1] << 16 |
                                 (uint32_t)data[2] << 8 | data[3]);
        in.serial = (uint32_t)data[4] << 24 | (uint32_t)data[5] << 16 | (uint32_t)data[6] << 8 |
                    data[7];
        memcpy(&in.expires_ms, data + 8, 8);
        size_t nl = size - 16 < MC_LOGIN_NAME_MAX ? size - 16 : MC_LOGIN_NAME_MAX;
        memcpy(in.name, data + 16, nl);
        in.name[nl] = '\0';
        uint8_t t[MC_RESUME_TICKET_SIZE];
        if (mc_resume_ticket_seal(key, &in, t) == MC_SECURE_OK) {
            if (mc_resume_ticket_open(key, t, &out) != MC_SECURE_OK ||
                out.entity_id != in.entity_id || out.serial != in.serial ||
                out.expires_ms != in.expires_ms || strcmp(out.name, in.name) != 0)
                __builtin_trap();
        }
    }

    /* the TICKET message */
    mc_istream is;
    mc_istream_init(&is, data, size);
    uint8_t tt[MC_CW_TICKET_BYTES], kk[MC_CW_RESUME_KEY_BYTES];
    uint32_t life;
    if (mc_cw_read_ticket(&is, tt, kk, &life) && size != MC_CW_TICKET_MESSAGE)
        __builtin_trap();
    return 0;
}
