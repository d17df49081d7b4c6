/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Just enough of the D-Bus wire format to find message boundaries and a
 * method call's destination, sender and serial in bytes read (or peeked)
 * from a stream: the
 * fixed 16-byte header (endianness, type, flags, version, body length,
 * serial, header-field array length), the fields, each aligned to 8, and
 * the body after the fields' padding to 8. Everything is checked against
 * the bytes given; nothing is trusted. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DBUS_FIXED_HEADER 16u
#define DBUS_TYPE_METHOD_CALL 1u
#define DBUS_FIELD_DESTINATION 6u
#define DBUS_FIELD_SENDER 7u

typedef struct DBusHeader {
        uint8_t type;
        uint32_t serial;      /* the sender's, unique per sender */
        size_t header_size;   /* fixed header + fields + padding to 8 */
        uint64_t total_size;  /* header_size + body */
} DBusHeader;

/* Reads the fixed header at p (n bytes available). Returns 1 and fills h,
 * 0 if fewer than 16 bytes are there, -EBADMSG if they are not a D-Bus
 * header (not at a message boundary). */
int dbus_wire_header(const uint8_t *p, size_t n, DBusHeader *h);

/* The string field code (DBUS_FIELD_*) of a message whose header
 * (h->header_size bytes) is all at p: copies it, NUL-terminated, into out
 * (size bytes). Returns 1 if found, 0 if the message has none (or it does
 * not fit), -EBADMSG if the fields are malformed. */
int dbus_wire_field(const uint8_t *p, const DBusHeader *h, uint8_t code, char *out, size_t size);

static inline int dbus_wire_destination(const uint8_t *p, const DBusHeader *h, char *dest, size_t dest_size) {
        return dbus_wire_field(p, h, DBUS_FIELD_DESTINATION, dest, dest_size);
}

/* Whether the n bytes at buf, from a message boundary, hold a method call
 * to bus_name (and, with sender set, the one call of that sender and
 * serial): walked message by message, up to the first bytes that are not a
 * header. The peek at a frozen service's bus connection (bus-peek.c). */
bool dbus_wire_holds_call(const uint8_t *buf, size_t n, const char *bus_name, const char *sender, uint32_t serial);

/* Messages arriving in pieces (the dbus-call monitor): buf (size bytes)
 * holds have bytes from a message boundary; skip is what is left of the
 * current message to drop as it arrives. */
typedef struct DBusWireStream {
        uint8_t *buf;
        size_t size;
        size_t have;
        uint64_t skip;
} DBusWireStream;

typedef void (*dbus_wire_call_fn)(const char *dest, const char *sender, uint32_t serial, void *userdata);

/* Calls on_call for each method call whose header is all in, skips the
 * rest of each message (and messages whose header is longer than the
 * buffer), and keeps a partial header at the start of buf: afterwards have
 * < size. Returns 0, or -EBADMSG when the stream is not D-Bus. */
int dbus_wire_stream_consume(DBusWireStream *s, dbus_wire_call_fn on_call, void *userdata);
