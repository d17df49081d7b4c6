/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: bytes as they come from a D-Bus stream, through the
 * listener's two walks over listener/dbus-wire.c: the peek at a frozen
 * service's bus connection (sockets.c: one buffer, message by message, each
 * call's destination, serial and sender) and the call monitor's reads
 * (dbus-call.c: arriving in pieces, a partial header kept, the rest of each
 * message skipped as it arrives). Both loops are restated here as the
 * listener has them, on a smaller monitor buffer so that the pieces and the
 * skipping are exercised. */
#include <stdint.h>

#include "../../listener/dbus-wire.h"
#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void peek_walk(const uint8_t *buf, size_t n) {
        DBusHeader h;
        for (uint64_t off = 0; off < n && dbus_wire_header(buf + off, n - off, &h) > 0; off += h.total_size) {
                char name[256];
                if (h.total_size < DBUS_FIXED_HEADER)
                        abort(); /* the walk would never end */
                if (h.type != DBUS_TYPE_METHOD_CALL || n - off < h.header_size)
                        continue;
                if (dbus_wire_field(buf + off, &h, DBUS_FIELD_DESTINATION, name, sizeof(name)) > 0 &&
                    strnlen(name, sizeof(name)) == sizeof(name))
                        abort();
                if (dbus_wire_field(buf + off, &h, DBUS_FIELD_SENDER, name, sizeof(name)) > 0 &&
                    strnlen(name, sizeof(name)) == sizeof(name))
                        abort();
        }
}

#define MONITOR_BUFFER 512

typedef struct Monitor {
        uint8_t buf[MONITOR_BUFFER];
        size_t have;
        uint64_t skip;
} Monitor;

static int monitor_consume(Monitor *cm) {
        size_t off = 0;
        int r = 0;

        while (off < cm->have) {
                if (cm->skip > 0) {
                        size_t d = (size_t) MIN(cm->skip, (uint64_t) (cm->have - off));
                        off += d;
                        cm->skip -= d;
                        continue;
                }
                DBusHeader h;
                r = dbus_wire_header(cm->buf + off, cm->have - off, &h);
                if (r <= 0)
                        break;
                if (h.header_size < DBUS_FIXED_HEADER || h.total_size < h.header_size)
                        abort();
                if (h.header_size > MONITOR_BUFFER) {
                        cm->skip = h.total_size;
                        continue;
                }
                if (cm->have - off < h.header_size) {
                        r = 0;
                        break;
                }
                char dest[256], sender[256];
                if (h.type == DBUS_TYPE_METHOD_CALL) {
                        r = dbus_wire_field(cm->buf + off, &h, DBUS_FIELD_DESTINATION, dest, sizeof(dest));
                        if (r > 0)
                                r = dbus_wire_field(cm->buf + off, &h, DBUS_FIELD_SENDER, sender, sizeof(sender));
                        if (r < 0)
                                break;
                        if (r > 0 && (strnlen(dest, sizeof(dest)) == sizeof(dest) ||
                                      strnlen(sender, sizeof(sender)) == sizeof(sender)))
                                abort();
                }
                cm->skip = h.total_size;
        }
        memmove(cm->buf, cm->buf + off, cm->have - off);
        cm->have -= off;
        return r < 0 ? r : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        Monitor cm = {};

        peek_walk(data, size);

        /* The last byte sets the size of the reads, the rest is the stream. */
        if (size < 1)
                return 0;
        size_t piece = data[size - 1] % 64 + 1;
        size--;
        while (size > 0) {
                size_t n = MIN(MIN(piece, size), MONITOR_BUFFER - cm.have);
                memcpy(cm.buf + cm.have, data, n);
                cm.have += n;
                data += n;
                size -= n;
                if (monitor_consume(&cm) < 0)
                        return 0; /* the listener drops the monitor here */
                if (cm.have >= MONITOR_BUFFER)
                        abort(); /* a partial header must fit */
        }
        return 0;
}
