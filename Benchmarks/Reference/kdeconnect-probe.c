/* kdeconnect-probe: the clock of scripts/bench's KDE Connect rows (`scripts/bench --peers`).
 *
 * It speaks to the private D-Bus session buses of KDE Connect's daemons in two lab hosts
 * (Benchmarks/Scripts/kdeconnect-host: each bus listens on a path, so one process outside the
 * hosts reaches both) and takes every time stamp with one clock, in one process.
 *
 *   kdeconnect-probe watch BUS DEVICE NAME
 *       Prints "watching", then "seen NAME NS" each time the daemon on BUS reports DEVICE
 *       reachable (org.kde.kdeconnect.device.reachableChanged(true)) and "gone NAME NS" when it
 *       is not (false); NS is CLOCK_REALTIME in nanoseconds. The watcher of handoff-bench
 *       discover-ref.
 *   kdeconnect-probe ping SENDER_BUS RECEIVER_BUS DEVICE [--count N] [--warmup W] [--gap-ms G]
 *       Serves org.freedesktop.Notifications on RECEIVER_BUS (the desktop's notification server,
 *       which the receiving daemon tells of a ping), then, N + W times: calls sendPing on
 *       SENDER_BUS for DEVICE (the ping plugin: one packet over the daemons' TLS connection) and
 *       waits for the receiving daemon's Notify("Ping!"). A sample: from just before the call to
 *       the Notify's arrival. Prints one JSON line {"samples_us": [...], "errors": N}.
 *
 * Build: cc -O2 -o kdeconnect-probe kdeconnect-probe.c $(pkg-config --cflags --libs dbus-1)
 */
#include <dbus/dbus.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void die(const char *what, DBusError *err) {
    fprintf(stderr, "kdeconnect-probe: %s%s%s\n", what, err && dbus_error_is_set(err) ? ": " : "",
            err && dbus_error_is_set(err) ? err->message : "");
    exit(1);
}

static DBusConnection *open_bus(const char *address) {
    DBusError err;
    dbus_error_init(&err);
    DBusConnection *c = dbus_connection_open_private(address, &err);
    if (!c) die("cannot open the bus", &err);
    if (!dbus_bus_register(c, &err)) die("cannot register on the bus", &err);
    return c;
}

/* Waits until one of the connections has a message (or timeout_ms passes); returns it and sets
 * *from to its connection's index, or NULL. */
static DBusMessage *next_message(DBusConnection **conns, int n, int timeout_ms, int *from) {
    int64_t deadline = now_ns() + (int64_t)timeout_ms * 1000000;
    for (;;) {
        for (int i = 0; i < n; i++) {
            dbus_connection_read_write(conns[i], 0);
            DBusMessage *m = dbus_connection_pop_message(conns[i]);
            if (m) { *from = i; return m; }
        }
        int64_t left = deadline - now_ns();
        if (left <= 0) return NULL;
        struct pollfd fds[2];
        for (int i = 0; i < n; i++) {
            int fd = -1;
            dbus_connection_get_unix_fd(conns[i], &fd);
            fds[i].fd = fd, fds[i].events = POLLIN, fds[i].revents = 0;
        }
        poll(fds, n, (int)(left / 1000000) + 1);
    }
}

static int watch(const char *bus, const char *device, const char *name) {
    DBusConnection *c = open_bus(bus);
    char rule[512];
    snprintf(rule, sizeof rule,
             "type='signal',interface='org.kde.kdeconnect.device',member='reachableChanged',"
             "path='/modules/kdeconnect/devices/%s'", device);
    DBusError err;
    dbus_error_init(&err);
    dbus_bus_add_match(c, rule, &err);
    if (dbus_error_is_set(&err)) die("cannot add the match", &err);
    printf("watching\n");
    fflush(stdout);
    for (;;) {
        int from;
        DBusMessage *m = next_message(&c, 1, 1000, &from);
        if (!m) {
            if (!dbus_connection_get_is_connected(c)) return 1;
            continue;
        }
        int64_t t = now_ns();
        dbus_bool_t reachable;
        if (dbus_message_is_signal(m, "org.kde.kdeconnect.device", "reachableChanged") &&
            dbus_message_get_args(m, NULL, DBUS_TYPE_BOOLEAN, &reachable, DBUS_TYPE_INVALID)) {
            printf("%s %s %lld\n", reachable ? "seen" : "gone", name, (long long)t);
            fflush(stdout);
        }
        dbus_message_unref(m);
    }
}

/* Answers a call to the notification server; returns 1 if it was a Notify. */
static int serve_notifications(DBusConnection *c, DBusMessage *m) {
    static dbus_uint32_t next_id = 1;
    if (dbus_message_get_type(m) != DBUS_MESSAGE_TYPE_METHOD_CALL) return 0;
    const char *iface = "org.freedesktop.Notifications";
    DBusMessage *reply = NULL;
    int notify = 0;
    if (dbus_message_is_method_call(m, iface, "Notify")) {
        reply = dbus_message_new_method_return(m);
        dbus_uint32_t id = next_id++;
        dbus_message_append_args(reply, DBUS_TYPE_UINT32, &id, DBUS_TYPE_INVALID);
        notify = 1;
    } else if (dbus_message_is_method_call(m, iface, "GetCapabilities")) {
        const char *caps[] = {"body"};
        const char **p = caps;
        reply = dbus_message_new_method_return(m);
        dbus_message_append_args(reply, DBUS_TYPE_ARRAY, DBUS_TYPE_STRING, &p, 1, DBUS_TYPE_INVALID);
    } else if (dbus_message_is_method_call(m, iface, "GetServerInformation")) {
        const char *name = "kdeconnect-probe", *vendor = "handoff", *version = "1", *spec = "1.2";
        reply = dbus_message_new_method_return(m);
        dbus_message_append_args(reply, DBUS_TYPE_STRING, &name, DBUS_TYPE_STRING, &vendor, DBUS_TYPE_STRING, &version,
                                 DBUS_TYPE_STRING, &spec, DBUS_TYPE_INVALID);
    } else if (dbus_message_is_method_call(m, iface, "CloseNotification")) {
        reply = dbus_message_new_method_return(m);
    } else {
        reply = dbus_message_new_error(m, DBUS_ERROR_UNKNOWN_METHOD, "not served by kdeconnect-probe");
    }
    dbus_connection_send(c, reply, NULL);
    dbus_connection_flush(c);
    dbus_message_unref(reply);
    return notify;
}

static int ping(const char *sender_bus, const char *receiver_bus, const char *device, int count, int warmup, int gap_ms) {
    DBusConnection *conns[2] = {open_bus(sender_bus), open_bus(receiver_bus)};
    DBusError err;
    dbus_error_init(&err);
    int r = dbus_bus_request_name(conns[1], "org.freedesktop.Notifications",
                                  DBUS_NAME_FLAG_REPLACE_EXISTING | DBUS_NAME_FLAG_DO_NOT_QUEUE, &err);
    if (r != DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER) die("cannot own org.freedesktop.Notifications", &err);
    char path[256];
    snprintf(path, sizeof path, "/modules/kdeconnect/devices/%s/ping", device);
    double *samples = calloc((size_t)count, sizeof *samples);
    int n = 0, errors = 0;
    for (int i = 0; i < count + warmup; i++) {
        DBusMessage *call = dbus_message_new_method_call("org.kde.kdeconnect", path, "org.kde.kdeconnect.device.ping", "sendPing");
        int64_t t0 = now_ns();
        dbus_connection_send(conns[0], call, NULL);
        dbus_connection_flush(conns[0]);
        dbus_message_unref(call);
        int64_t t1 = 0, deadline = t0 + 5000000000LL;
        while (!t1 && now_ns() < deadline) {
            int from;
            DBusMessage *m = next_message(conns, 2, (int)((deadline - now_ns()) / 1000000) + 1, &from);
            if (!m) break;
            int64_t t = now_ns();
            if (from == 1 && serve_notifications(conns[1], m)) t1 = t;
            if (from == 0 && dbus_message_get_type(m) == DBUS_MESSAGE_TYPE_ERROR) {
                fprintf(stderr, "kdeconnect-probe: sendPing: %s\n", dbus_message_get_error_name(m));
            }
            dbus_message_unref(m);
        }
        if (!t1) errors++;
        else if (i >= warmup) samples[n++] = (double)(t1 - t0) / 1000.0;
        usleep((useconds_t)gap_ms * 1000);
    }
    printf("{\"samples_us\": [");
    for (int i = 0; i < n; i++) printf("%s%.1f", i ? ", " : "", samples[i]);
    printf("], \"errors\": %d}\n", errors);
    return n ? 0 : 1;
}

int main(int argc, char **argv) {
    if (argc == 5 && !strcmp(argv[1], "watch")) return watch(argv[2], argv[3], argv[4]);
    if (argc >= 5 && !strcmp(argv[1], "ping")) {
        int count = 100, warmup = 10, gap_ms = 20;
        for (int i = 5; i + 1 < argc; i += 2) {
            if (!strcmp(argv[i], "--count")) count = atoi(argv[i + 1]);
            else if (!strcmp(argv[i], "--warmup")) warmup = atoi(argv[i + 1]);
            else if (!strcmp(argv[i], "--gap-ms")) gap_ms = atoi(argv[i + 1]);
            else { fprintf(stderr, "kdeconnect-probe: unknown option %s\n", argv[i]); return 2; }
        }
        if (count < 1) count = 1;
        return ping(argv[2], argv[3], argv[4], count, warmup, gap_ms);
    }
    fprintf(stderr, "usage: kdeconnect-probe watch BUS DEVICE NAME\n"
                    "       kdeconnect-probe ping SENDER_BUS RECEIVER_BUS DEVICE [--count N] [--warmup W] [--gap-ms G]\n");
    return 2;
}
