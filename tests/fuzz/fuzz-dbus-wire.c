/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: bytes as they come from a D-Bus stream, through the
 * listener's two walks in listener/dbus-wire.c: the peek at a frozen
 * service's bus connection (dbus_wire_holds_call(), one buffer, message by
 * message) and the call monitor's reads (dbus_wire_stream_consume(), the
 * stream arriving in pieces, a partial header kept, the rest of each
 * message skipped as it arrives), on a smaller monitor buffer than the
 * listener's so that the pieces and the skipping are exercised. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../listener/dbus-wire.h"
#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MONITOR_BUFFER 512

static void on_call(const char *dest, const char *sender, uint32_t serial, void *userdata) {
        (void) serial;
        (void) userdata;
        /* Both NUL-terminated within their 256 bytes. */
        if (strnlen(dest, 256) == 256 || strnlen(sender, 256) == 256)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static uint8_t buf[MONITOR_BUFFER];
        DBusWireStream s = { .buf = buf, .size = sizeof(buf) };

        (void) dbus_wire_holds_call(data, size, "org.example.Mail", NULL, 0);
        (void) dbus_wire_holds_call(data, size, "org.example.Mail", ":1.1", 2);

        /* The last byte sets the size of the reads, the rest is the stream. */
        if (size < 1)
                return 0;
        size_t piece = data[size - 1] % 64 + 1;
        size--;
        while (size > 0) {
                size_t n = MIN(MIN(piece, size), MONITOR_BUFFER - s.have);
                memcpy(s.buf + s.have, data, n);
                s.have += n;
                data += n;
                size -= n;
                if (dbus_wire_stream_consume(&s, on_call, NULL) < 0)
                        return 0; /* the listener drops the monitor here */
                if (s.have >= MONITOR_BUFFER)
                        abort(); /* a partial header must fit */
        }
        return 0;
}
