/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The few bytes of the D-Bus wire format the listener reads itself (see
 * dbus-wire.h): sd-bus would read each monitored call in two recvmsg() calls
 * and parse all of it, 15-30 us on the event's path (traced), where the
 * destination, sender and serial are all a dbus-call rule needs. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "dbus-wire.h"

#define ALIGN_TO(x, a) (((x) + (a) - 1) & ~(size_t) ((a) - 1))

static uint32_t u32(const uint8_t *p, bool le) {
        return le ? (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24
                  : (uint32_t) p[3] | (uint32_t) p[2] << 8 | (uint32_t) p[1] << 16 | (uint32_t) p[0] << 24;
}

int dbus_wire_header(const uint8_t *p, size_t n, DBusHeader *h) {
        if (n < DBUS_FIXED_HEADER)
                return 0;
        if ((p[0] != 'l' && p[0] != 'B') || p[3] != 1 || p[1] == 0 || p[1] > 4)
                return -EBADMSG;
        bool le = p[0] == 'l';
        uint32_t body = u32(p + 4, le), fields = u32(p + 12, le);
        h->type = p[1];
        h->serial = u32(p + 8, le);
        h->header_size = ALIGN_TO(DBUS_FIXED_HEADER + (size_t) fields, 8);
        h->total_size = (uint64_t) h->header_size + body;
        return 1;
}

int dbus_wire_field(const uint8_t *p, const DBusHeader *h, uint8_t want, char *out, size_t size) {
        bool le = p[0] == 'l';
        size_t end = DBUS_FIXED_HEADER + u32(p + 12, le); /* the fields' end, before padding */

        /* Each field: code, a one-type signature (length 1, the type, NUL),
         * then the value at that type's alignment. */
        for (size_t off = DBUS_FIXED_HEADER; off < end; off = ALIGN_TO(off, 8)) {
                if (off + 4 > end || p[off + 1] != 1 || p[off + 3] != 0)
                        return -EBADMSG;
                uint8_t code = p[off], type = p[off + 2];
                off += 4;
                switch (type) {
                case 's':
                case 'o': {
                        off = ALIGN_TO(off, 4);
                        if (off + 4 > end)
                                return -EBADMSG;
                        uint32_t len = u32(p + off, le);
                        if ((uint64_t) off + 4 + len + 1 > end || p[off + 4 + len] != 0)
                                return -EBADMSG;
                        if (code == want && type == 's') {
                                if (len >= size)
                                        return 0;
                                memcpy(out, p + off + 4, len);
                                out[len] = 0;
                                return 1;
                        }
                        off += 4 + (size_t) len + 1;
                        break;
                }
                case 'g': {
                        if (off + 1 > end)
                                return -EBADMSG;
                        size_t len = p[off];
                        if (off + 1 + len + 1 > end)
                                return -EBADMSG;
                        off += 1 + len + 1;
                        break;
                }
                case 'u':
                        off = ALIGN_TO(off, 4) + 4;
                        if (off > end)
                                return -EBADMSG;
                        break;
                default:
                        return -EBADMSG;
                }
        }
        return 0;
}
