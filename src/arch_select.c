/* Which embedded code object runs on a device's arch. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* "sm_86" -> 86, "sm_100" -> 100; -1 if not "<prefix><digits>". */
static int parse_cc(const char *s, size_t len, const char *prefix)
{
    size_t p = strlen(prefix);
    if (len <= p || strncmp(s, prefix, p) != 0)
        return -1;
    int v = 0;
    for (size_t i = p; i < len; i++) {
        if (s[i] < '0' || s[i] > '9' || v > 100000)
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* A cubin for sm_AB runs on sm_XY with the same major and minor >= B; PTX
 * for compute_AB is JIT-compiled for any sm_XY >= AB. */
static bool cuda_token_runs(const char *tok, size_t len, int dev_cc)
{
    int cc = parse_cc(tok, len, "sm_");
    if (cc >= 0)
        return cc / 10 == dev_cc / 10 && cc % 10 <= dev_cc % 10;
    cc = parse_cc(tok, len, "compute_");
    return cc >= 0 && cc <= dev_cc;
}

/* Length of the processor name in a target id "gfx90a:sramecc+:xnack-". */
static size_t gfx_name_len(const char *s, size_t len)
{
    const char *colon = memchr(s, ':', len);
    return colon ? (size_t)(colon - s) : len;
}

/* A code object for "gfx90a" runs on any gfx90a; one built with a feature
 * setting ("gfx90a:xnack-") needs the device not to have the opposite one. */
static bool amd_token_runs(const char *tok, size_t len, const char *arch)
{
    size_t alen = strlen(arch);
    size_t tn = gfx_name_len(tok, len), an = gfx_name_len(arch, alen);
    if (tn != an || strncmp(tok, arch, tn) != 0)
        return false;
    for (size_t i = tn; i < len;) {
        size_t j = i + 1;
        while (j < len && tok[j] != ':')
            j++;
        /* feature token tok[i+1 .. j) like "xnack-"; look for its opposite */
        size_t flen = j - i - 1;
        if (flen >= 2) {
            char opposite[32];
            if (flen + 2 > sizeof(opposite))
                return false;
            opposite[0] = ':';
            memcpy(opposite + 1, tok + i + 1, flen);
            opposite[flen] = tok[j - 1] == '+' ? '-' : '+';
            opposite[flen + 1] = '\0';
            if (strstr(arch + an, opposite))
                return false;
        }
        i = j;
    }
    return true;
}

bool kp_code_object_runs_on(const struct kp_code_object *obj, const char *arch)
{
    int dev_cc = parse_cc(arch, strlen(arch), "sm_");
    const char *s = obj->archs;
    while (*s) {
        const char *end = strchr(s, ',');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        bool ok = obj->format == KP_CODE_HSACO_BUNDLE ? amd_token_runs(s, len, arch)
                                                       : dev_cc >= 0 && cuda_token_runs(s, len, dev_cc);
        if (ok)
            return true;
        s += len;
        if (*s == ',')
            s++;
    }
    return false;
}

const struct kp_code_object *kp_select_code_object(const struct kp_module_desc *desc,
                                                   const char *arch)
{
    for (size_t i = 0; i < desc->object_count; i++)
        if (kp_code_object_runs_on(&desc->objects[i], arch))
            return &desc->objects[i];
    return NULL;
}
