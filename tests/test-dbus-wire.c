/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The listener's reading of D-Bus message headers (listener/dbus-wire.c),
 * on messages built here byte by byte in both byte orders, and on bytes
 * that are not D-Bus. End to end, on a real dbus-daemon's bytes, the
 * listener suite's dbus-call tests use it. */
#include "../listener/dbus-wire.h"
#include "macro.h"
#include "test-util.h"

typedef struct Field {
        uint8_t code;
        char type; /* 's', 'o', 'u' or 'g' */
        const char *s;
        uint32_t u;
} Field;

static size_t put_u32(uint8_t *p, size_t off, uint32_t v, bool le) {
        for (int i = 0; i < 4; i++)
                p[off + (size_t) i] = (uint8_t) (v >> (le ? 8 * i : 8 * (3 - i)));
        return off + 4;
}

/* A message of the given type with these header fields and a body of
 * body_len bytes; returns its size. */
static size_t build(uint8_t *p, bool le, uint8_t type, const Field *f, size_t n, uint32_t body_len) {
        size_t off = 16;

        memset(p, 0, 4096);
        for (size_t i = 0; i < n; i++) {
                off = (off + 7) & ~(size_t) 7;
                p[off++] = f[i].code;
                p[off++] = 1;
                p[off++] = (uint8_t) f[i].type;
                p[off++] = 0;
                if (f[i].type == 'g') {
                        p[off++] = (uint8_t) strlen(f[i].s);
                        memcpy(p + off, f[i].s, strlen(f[i].s) + 1);
                        off += strlen(f[i].s) + 1;
                } else if (f[i].type == 'u') {
                        off = put_u32(p, off, f[i].u, le);
                } else {
                        off = put_u32(p, off, (uint32_t) strlen(f[i].s), le);
                        memcpy(p + off, f[i].s, strlen(f[i].s) + 1);
                        off += strlen(f[i].s) + 1;
                }
        }
        p[0] = le ? 'l' : 'B';
        p[1] = type;
        p[3] = 1;
        put_u32(p, 4, body_len, le);
        put_u32(p, 8, 7, le);
        put_u32(p, 12, (uint32_t) (off - 16), le);
        return ((off + 7) & ~(size_t) 7) + body_len;
}

static const Field call_fields[] = {
        { 1, 'o', "/org/example/Mail", 0 }, { 2, 's', "org.example.Mail", 0 }, { 3, 's', "Sync", 0 },
        { 6, 's', "org.example.Mail", 0 },  { 8, 'g', "s", 0 },               { 7, 's', ":1.42", 0 },
};

START_TEST(test_destination_both_byte_orders) {
        static uint8_t m[4096];
        char dest[256];
        DBusHeader h;

        for (int le = 0; le < 2; le++) {
                size_t size = build(m, le, DBUS_TYPE_METHOD_CALL, call_fields, ELEMENTSOF(call_fields), 12);
                ck_assert_int_eq(dbus_wire_header(m, size, &h), 1);
                ck_assert_uint_eq(h.type, DBUS_TYPE_METHOD_CALL);
                ck_assert_uint_eq(h.total_size, size);
                ck_assert_uint_eq(h.header_size, size - 12);
                ck_assert_int_eq(dbus_wire_destination(m, &h, dest, sizeof(dest)), 1);
                ck_assert_str_eq(dest, "org.example.Mail");
                /* The sender and serial name the call (the last field). */
                ck_assert_uint_eq(h.serial, 7);
                ck_assert_int_eq(dbus_wire_field(m, &h, DBUS_FIELD_SENDER, dest, sizeof(dest)), 1);
                ck_assert_str_eq(dest, ":1.42");
                /* Only 16 bytes are needed for the size, none more. */
                ck_assert_int_eq(dbus_wire_header(m, 16, &h), 1);
                ck_assert_int_eq(dbus_wire_header(m, 15, &h), 0);
        }
}
END_TEST

START_TEST(test_no_destination) {
        static uint8_t m[4096];
        char dest[256];
        DBusHeader h;

        /* A signal: path, interface, member; no destination. */
        size_t size = build(m, true, 4, call_fields, 3, 0);
        ck_assert_int_eq(dbus_wire_header(m, size, &h), 1);
        ck_assert_int_eq(dbus_wire_destination(m, &h, dest, sizeof(dest)), 0);
        ck_assert_int_eq(dbus_wire_field(m, &h, DBUS_FIELD_SENDER, dest, sizeof(dest)), 0);
        /* A destination longer than the caller's buffer is not one. */
        size = build(m, true, DBUS_TYPE_METHOD_CALL, call_fields, ELEMENTSOF(call_fields), 0);
        ck_assert_int_eq(dbus_wire_header(m, size, &h), 1);
        ck_assert_int_eq(dbus_wire_destination(m, &h, dest, 8), 0);
}
END_TEST

START_TEST(test_malformed) {
        static uint8_t m[4096];
        char dest[256];
        DBusHeader h;

        /* Not D-Bus: an HTTP request, a wrong version, an unknown type. */
        ck_assert_int_eq(dbus_wire_header((const uint8_t *) "GET / HTTP/1.1\r\n\r\n", 18, &h), -EBADMSG);
        size_t size = build(m, true, DBUS_TYPE_METHOD_CALL, call_fields, ELEMENTSOF(call_fields), 0);
        m[3] = 2;
        ck_assert_int_eq(dbus_wire_header(m, size, &h), -EBADMSG);
        m[3] = 1;
        m[1] = 9;
        ck_assert_int_eq(dbus_wire_header(m, size, &h), -EBADMSG);
        m[1] = DBUS_TYPE_METHOD_CALL;

        /* A string that runs past the fields' end. */
        ck_assert_int_eq(dbus_wire_header(m, size, &h), 1);
        put_u32(m, 20, 4000, true); /* the first field's string length */
        ck_assert_int_eq(dbus_wire_destination(m, &h, dest, sizeof(dest)), -EBADMSG);

        /* A field whose signature is not one type. */
        build(m, true, DBUS_TYPE_METHOD_CALL, call_fields, ELEMENTSOF(call_fields), 0);
        m[17] = 2;
        ck_assert_int_eq(dbus_wire_destination(m, &h, dest, sizeof(dest)), -EBADMSG);

        /* A field type a header never has. */
        build(m, true, DBUS_TYPE_METHOD_CALL, call_fields, ELEMENTSOF(call_fields), 0);
        m[18] = 'x';
        ck_assert_int_eq(dbus_wire_destination(m, &h, dest, sizeof(dest)), -EBADMSG);
}
END_TEST

Suite *dbus_wire_suite(void) {
        Suite *s = suite_create("dbus-wire");
        TCase *tc = tcase_create("header");
        tcase_add_test(tc, test_destination_both_byte_orders);
        tcase_add_test(tc, test_no_destination);
        tcase_add_test(tc, test_malformed);
        suite_add_tcase(s, tc);
        return s;
}
