/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "json.h"

size_t utf8_char_len(const char *s) {
        const unsigned char *p = (const unsigned char *) s;
        size_t n;

        if (p[0] < 0x80)
                return p[0] ? 1 : 0;
        if (p[0] >= 0xc2 && p[0] <= 0xdf)
                n = 2;
        else if (p[0] >= 0xe0 && p[0] <= 0xef)
                n = 3;
        else if (p[0] >= 0xf0 && p[0] <= 0xf4)
                n = 4;
        else
                return 0; /* a continuation byte, an overlong lead (c0, c1), beyond U+10FFFF */
        for (size_t i = 1; i < n; i++)
                if ((p[i] & 0xc0) != 0x80)
                        return 0;
        /* Overlong forms, UTF-16 surrogates, beyond U+10FFFF. */
        if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0) || (p[0] == 0xf0 && p[1] < 0x90) ||
            (p[0] == 0xf4 && p[1] >= 0x90))
                return 0;
        return n;
}

void json_print_string(FILE *f, const char *s) {
        if (!s) {
                fputs("null", f);
                return;
        }
        fputc('"', f);
        for (const unsigned char *p = (const unsigned char *) s; *p;) {
                size_t n = utf8_char_len((const char *) p);

                if (n == 0) {
                        /* Not UTF-8 (a cgroup name may hold any bytes): the
                         * byte as a lone low surrogate, U+DC80-U+DCFF, as
                         * Python's "surrogateescape" does, so the bytes can be
                         * had back and the output stays valid JSON in UTF-8. */
                        fprintf(f, "\\udc%02x", *p++);
                        continue;
                }
                if (n > 1)
                        fwrite(p, 1, n, f);
                else if (*p == '"' || *p == '\\')
                        fprintf(f, "\\%c", *p);
                else if (*p == '\n')
                        fputs("\\n", f);
                else if (*p == '\t')
                        fputs("\\t", f);
                else if (*p < 0x20 || *p == 0x7f)
                        fprintf(f, "\\u%04x", *p);
                else
                        fputc(*p, f);
                p += n;
        }
        fputc('"', f);
}

void text_print_string(FILE *f, const char *s) {
        for (const unsigned char *p = (const unsigned char *) s; p && *p;) {
                size_t n = utf8_char_len((const char *) p);

                if (n > 1)
                        fwrite(p, 1, n, f);
                else if (n == 1 && *p >= 0x20 && *p != 0x7f && *p != '\\')
                        fputc(*p, f);
                else if (n == 1 && *p == '\\')
                        fputs("\\\\", f);
                else
                        fprintf(f, "\\x%02x", *p);
                p += n ? n : 1;
        }
}
