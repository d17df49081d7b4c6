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

bool dbus_wire_holds_call(const uint8_t *buf, size_t n, const char *bus_name, const char *sender, uint32_t serial) {
        DBusHeader h;

        for (uint64_t off = 0; off < (uint64_t) n && dbus_wire_header(buf + off, n - (size_t) off, &h) > 0;
             off += h.total_size) {
                char name[256];
                if (h.type != DBUS_TYPE_METHOD_CALL || (uint64_t) n - off < h.header_size)
                        continue;
                if (sender && h.serial != serial)
                        continue;
                if (dbus_wire_field(buf + off, &h, DBUS_FIELD_DESTINATION, name, sizeof(name)) <= 0 ||
                    strcmp(name, bus_name) != 0)
                        continue;
                if (sender && (dbus_wire_field(buf + off, &h, DBUS_FIELD_SENDER, name, sizeof(name)) <= 0 ||
                               strcmp(name, sender) != 0))
                        continue;
                return true;
        }
        return false;
}

int dbus_wire_stream_consume(DBusWireStream *s, dbus_wire_call_fn on_call, void *userdata) {
        size_t off = 0;
        int r = 0;

        while (off < s->have) {
                if (s->skip > 0) {
                        size_t d = s->skip < (uint64_t) (s->have - off) ? (size_t) s->skip : s->have - off;
                        off += d;
                        s->skip -= d;
                        continue;
                }
                DBusHeader h;
                r = dbus_wire_header(s->buf + off, s->have - off, &h);
                if (r <= 0)
                        break;
                if (h.header_size > s->size) {
                        /* Fields of more than the buffer: no bus name is that long. */
                        s->skip = h.total_size;
                        continue;
                }
                if (s->have - off < h.header_size) {
                        r = 0;
                        break; /* the rest of the header is still on its way */
                }
                char dest[256], sender[256];
                if (h.type == DBUS_TYPE_METHOD_CALL) {
                        r = dbus_wire_field(s->buf + off, &h, DBUS_FIELD_DESTINATION, dest, sizeof(dest));
                        if (r > 0)
                                r = dbus_wire_field(s->buf + off, &h, DBUS_FIELD_SENDER, sender, sizeof(sender));
                        if (r < 0)
                                break;
                        if (r > 0)
                                on_call(dest, sender, h.serial, userdata);
                }
                s->skip = h.total_size; /* the whole message, header included */
        }
        memmove(s->buf, s->buf + off, s->have - off);
        s->have -= off;
        return r < 0 ? r : 0;
}
