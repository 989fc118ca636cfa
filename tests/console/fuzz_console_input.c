/* libFuzzer target for what the console and the metrics endpoint parse or escape from the
 * network: the Cookie header (session token), form bodies and query strings (percent
 * decoding, keys), JSON string escaping of any text a process returns, and Prometheus
 * label escaping. Any input must be handled without a crash, a leak or undefined behaviour;
 * a token is only ever 64 hex characters, and escaped output never holds a raw quote. */
#include "console_internal.h"
#include "server/metrics.h"

#include <event2/buffer.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';

    char tok[CON_TOKEN_HEX + 1];
    if (con_cookie_parse(text, tok) && strlen(tok) != CON_TOKEN_HEX)
        abort();
    static const char *const keys[] = {"password", "process", "path", "value", "args", "id",
                                       "name"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        free(con_query_lookup(text, keys[i]));

    struct evbuffer *out = evbuffer_new();
    if (out) {
        con_json_str(out, text);
        size_t n = evbuffer_get_length(out);
        unsigned char *j = evbuffer_pullup(out, -1);
        /* every quote inside is escaped; no raw '<' */
        for (size_t i = 1; j && i + 1 < n; i++)
            if ((j[i] == '"' && j[i - 1] != '\\') || j[i] == '<')
                abort();
        evbuffer_free(out);
    }
    char esc[512];
    mc_metrics_escape_label(text, esc, sizeof esc);
    if (strchr(esc, '\n'))
        abort();
    free(text);
    return 0;
}
