/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdint.h>

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

/* The code point of the valid UTF-8 character at p, n bytes long. */
static uint32_t utf8_code_point(const unsigned char *p, size_t n) {
        uint32_t c = n == 1 ? p[0] : n == 2 ? p[0] & 0x1f : n == 3 ? p[0] & 0x0f : p[0] & 0x07;

        for (size_t i = 1; i < n; i++)
                c = (c << 6) | (p[i] & 0x3f);
        return c;
}

bool utf8_is_control(const char *s, size_t n) {
        uint32_t c = utf8_code_point((const unsigned char *) s, n);

        return c < 0x20 || (c >= 0x7f && c <= 0x9f) || /* C0, DEL, C1 (U+009B is CSI) */
               c == 0x061c || c == 0x200e || c == 0x200f || (c >= 0x202a && c <= 0x202e) ||
               (c >= 0x2066 && c <= 0x2069); /* bidi marks, embeddings, overrides, isolates */
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
                if (n > 1 && utf8_is_control((const char *) p, n))
                        fprintf(f, "\\u%04x", (unsigned) utf8_code_point(p, n));
                else if (n > 1)
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

                if (n > 1 && utf8_is_control((const char *) p, n))
                        fprintf(f, "\\u%04x", (unsigned) utf8_code_point(p, n));
                else if (n > 1)
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
