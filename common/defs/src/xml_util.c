#include <ctype.h>
#include <errno.h>
#include <strings.h>
#include <libxml/parser.h>
#include <string.h>
#include <sys/stat.h>

#include "defs_internal.h"

int xml_line(xmlNodePtr n)
{
    long l = xmlGetLineNo(n);
    return l > 0 && l < 1000000000 ? (int)l : 0;
}

bool xml_is_elem(xmlNodePtr n)
{
    return n && n->type == XML_ELEMENT_NODE;
}

const char *xml_name(xmlNodePtr n)
{
    return (const char *)n->name;
}

char *xml_text(loader *L, xmlNodePtr n)
{
    size_t total = 0;
    for (xmlNodePtr c = n->children; c; c = c->next)
        if ((c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) && c->content)
            total += strlen((const char *)c->content);
    char *buf = mc_arena_alloc(L->arena, total + 1);
    if (!buf)
        return NULL;
    size_t len = 0;
    for (xmlNodePtr c = n->children; c; c = c->next)
        if ((c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) && c->content) {
            size_t k = strlen((const char *)c->content);
            memcpy(buf + len, c->content, k);
            len += k;
        }
    buf[len] = '\0';
    size_t start = 0;
    while (start < len && isspace((unsigned char)buf[start]))
        start++;
    while (len > start && isspace((unsigned char)buf[len - 1]))
        len--;
    buf[len] = '\0';
    return buf + start;
}

size_t xml_count_children(xmlNodePtr n)
{
    size_t k = 0;
    for (xmlNodePtr c = n->children; c; c = c->next)
        if (xml_is_elem(c))
            k++;
    return k;
}

bool xml_no_text(loader *L, xmlNodePtr n, const char *file)
{
    char *t = xml_text(L, n);
    if (t && *t) {
        mc_errs_add(&L->errs, file, xml_line(n), xml_name(n),
                    "unexpected text '%.40s' (this element only holds elements)", t);
        return false;
    }
    return true;
}

bool xml_bool(loader *L, xmlNodePtr n, const char *file, bool *out)
{
    char *t = xml_text(L, n);
    if (!t)
        return false;
    if (xml_count_children(n)) {
        mc_errs_add(&L->errs, file, xml_line(n), xml_name(n),
                    "expected true or false, found child elements");
        return false;
    }
    if (!*t || !strcasecmp(t, "true") || !strcmp(t, "1")) {
        *out = true;
        return true;
    }
    if (!strcasecmp(t, "false") || !strcmp(t, "0")) {
        *out = false;
        return true;
    }
    mc_errs_add(&L->errs, file, xml_line(n), xml_name(n), "expected true or false, found '%.40s'",
                t);
    return false;
}

bool ident_ok(const char *s)
{
    if (!s || !*s || strlen(s) > MC_DEFS_MAX_NAME)
        return false;
    if (!(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return false;
    for (const char *p = s; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '_'))
            return false;
    return true;
}

bool name_dup(loader *L, name_index *ni, const char *name, size_t pos, size_t *prev)
{
    if (!name)
        return false;
    int r = name_index_put(ni, name, pos, prev);
    if (r < 0)
        L->arena->failed = 1;
    return r > 0;
}

/* Keeps the first parse error (the last one is usually "premature end of data"). */
typedef struct {
    bool have;
    int line;
    char msg[200];
} first_error;

static void keep_first_error(void *data, xmlErrorPtr e)
{
    xmlParserCtxtPtr ctxt = data;
    first_error *fe = ctxt ? ctxt->_private : NULL;
    if (!fe || fe->have || !e || e->level < XML_ERR_ERROR)
        return;
    fe->have = true;
    fe->line = e->line;
    snprintf(fe->msg, sizeof(fe->msg), "%s", e->message ? e->message : "error");
    size_t k = strlen(fe->msg);
    while (k && (fe->msg[k - 1] == '\n' || fe->msg[k - 1] == ' '))
        fe->msg[--k] = '\0';
}

xmlDocPtr xml_read(loader *L, const char *path, bool must_exist, bool *missing)
{
    struct stat st;
    if (missing)
        *missing = false;
    if (stat(path, &st) != 0) {
        if (missing)
            *missing = true;
        if (must_exist)
            mc_errs_add(&L->errs, path, 0, NULL, "cannot open: %s", strerror(errno));
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        mc_errs_add(&L->errs, path, 0, NULL, "not a regular file");
        return NULL;
    }
    if (st.st_size > 16 * 1024 * 1024) {
        mc_errs_add(&L->errs, path, 0, NULL, "file too large (%lld bytes, limit 16 MiB)",
                    (long long)st.st_size);
        return NULL;
    }
    xmlParserCtxtPtr ctxt = xmlNewParserCtxt();
    if (!ctxt) {
        mc_errs_add(&L->errs, path, 0, NULL, "out of memory");
        return NULL;
    }
    first_error fe = {0};
    ctxt->_private = &fe;
    if (ctxt->sax) {
        ctxt->sax->serror = keep_first_error;
    }
    xmlDocPtr doc = xmlCtxtReadFile(ctxt, path, NULL,
                                    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
                                        XML_PARSE_BIG_LINES);
    if (!doc && fe.have) {
        mc_errs_add(&L->errs, path, fe.line, NULL, "malformed XML: %s", fe.msg);
    } else if (!doc) {
        const xmlError *e = xmlCtxtGetLastError(ctxt);
        char msg[256] = "malformed XML";
        int line = 0;
        if (e && e->message) {
            snprintf(msg, sizeof(msg), "malformed XML: %s", e->message);
            size_t k = strlen(msg);
            while (k && (msg[k - 1] == '\n' || msg[k - 1] == ' '))
                msg[--k] = '\0';
            line = e->line;
        }
        mc_errs_add(&L->errs, path, line, NULL, "%s", msg);
    } else if (!xmlDocGetRootElement(doc)) {
        mc_errs_add(&L->errs, path, 0, NULL, "no root element");
        xmlFreeDoc(doc);
        doc = NULL;
    }
    xmlFreeParserCtxt(ctxt);
    return doc;
}

bool xml_plain(loader *L, xmlDocPtr doc, const char *path, bool (*attrs_ok)(xmlNodePtr))
{
    bool ok = true;
    xmlNodePtr root = xmlDocGetRootElement(doc);
    xmlNodePtr n = root;
    while (n) {
        xmlNodePtr at = n->parent && n->type != XML_ELEMENT_NODE ? n->parent : n;
        if (n->type == XML_ELEMENT_NODE && n->properties && !(attrs_ok && attrs_ok(n))) {
            mc_errs_add(&L->errs, path, xml_line(n), xml_name(n),
                        "attribute %.60s is not supported (def files use elements)",
                        (const char *)n->properties->name);
            ok = false;
        } else if (n->type == XML_ENTITY_REF_NODE) {
            mc_errs_add(&L->errs, path, xml_line(at), xml_name(at),
                        "entity reference &%.60s; is not supported", xml_name(n));
            ok = false;
        } else if (n->type == XML_PI_NODE) {
            mc_errs_add(&L->errs, path, xml_line(n) ? xml_line(n) : xml_line(at), xml_name(at),
                        "processing instruction <?%.60s?> is not supported", xml_name(n));
            ok = false;
        }
        if (n->type == XML_ELEMENT_NODE && n->children) {
            n = n->children;
            continue;
        }
        while (n && n != root && !n->next)
            n = n->parent;
        n = n && n != root ? n->next : NULL;
    }
    return ok;
}
