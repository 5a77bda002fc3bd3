/*
 * relay-ref: the design's ceiling for handoff's continuation-stream benchmark (scripts/bench).
 *
 * A continuation stream's bytes cross four processes: the source app, its agent, the continuing
 * agent and the continuing app, over a Unix socket, a TCP connection and a Unix socket. relay-ref
 * does the same with nothing else: no framing, no TLS, no Swift, one blocking read/write loop per
 * process. What it reaches is the most any agent could reach with the bytes passing through two
 * relaying processes, on the same machine and link; handoff's figure is compared with it and with
 * one bare TCP connection (the reference).
 *
 *   relay-ref sink LISTEN [--bytes N]     accepts one connection, reads to EOF; prints JSON
 *                                         {"bytes_total", "seconds", "throughput_mib_s"}, timed
 *                                         from the first byte read
 *   relay-ref relay LISTEN CONNECT        accepts one connection on LISTEN, connects to CONNECT,
 *                                         copies bytes until EOF, then shuts CONNECT's write side
 *   relay-ref source CONNECT --bytes N    connects, writes N bytes, closes
 *
 * LISTEN is unix:PATH or tcp:PORT (all addresses of the host); CONNECT is unix:PATH or
 * tcp:HOST:PORT. Prints "listening" on stderr once a LISTEN socket is ready. Buffers are
 * 256 KiB (the agents move 60 KiB chunks in 64 KiB frames; a larger buffer only helps the relay).
 *
 * Build: gcc -O2 -o relay-ref relay-ref.c
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define BUFFER_BYTES (256 * 1024)

static void die(const char *what) {
    fprintf(stderr, "relay-ref: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void usage(void) {
    fprintf(stderr, "usage: relay-ref sink LISTEN | relay LISTEN CONNECT | source CONNECT --bytes N\n"
                    "  LISTEN: unix:PATH or tcp:PORT; CONNECT: unix:PATH or tcp:HOST:PORT\n");
    exit(64);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The Unix socket address of "unix:PATH". */
static struct sockaddr_un unix_address(const char *addr) {
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    if (strlen(addr + 5) >= sizeof sun.sun_path) usage();
    strcpy(sun.sun_path, addr + 5);
    return sun;
}

/* Listens on addr and returns the one accepted connection. */
static int accept_one(const char *addr) {
    int server;
    if (strncmp(addr, "unix:", 5) == 0) {
        struct sockaddr_un sun = unix_address(addr);
        unlink(sun.sun_path);
        if ((server = socket(AF_UNIX, SOCK_STREAM, 0)) < 0) die("socket");
        if (bind(server, (struct sockaddr *)&sun, sizeof sun) < 0) die("bind");
    } else if (strncmp(addr, "tcp:", 4) == 0) {
        struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(addr + 4)),
                                  .sin_addr.s_addr = htonl(INADDR_ANY)};
        int one = 1;
        if ((server = socket(AF_INET, SOCK_STREAM, 0)) < 0) die("socket");
        setsockopt(server, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(server, (struct sockaddr *)&sin, sizeof sin) < 0) die("bind");
    } else {
        usage();
    }
    if (listen(server, 1) < 0) die("listen");
    fprintf(stderr, "listening\n");
    int fd = accept(server, NULL, NULL);
    if (fd < 0) die("accept");
    close(server);
    return fd;
}

static int connect_to(const char *addr) {
    int fd;
    if (strncmp(addr, "unix:", 5) == 0) {
        struct sockaddr_un sun = unix_address(addr);
        if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) < 0) die("socket");
        if (connect(fd, (struct sockaddr *)&sun, sizeof sun) < 0) die("connect");
    } else if (strncmp(addr, "tcp:", 4) == 0) {
        char host[256];
        const char *colon = strrchr(addr + 4, ':');
        if (!colon || (size_t)(colon - (addr + 4)) >= sizeof host) usage();
        memcpy(host, addr + 4, (size_t)(colon - (addr + 4)));
        host[colon - (addr + 4)] = 0;
        struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
        if (inet_pton(AF_INET, host, &sin.sin_addr) != 1) usage();
        int one = 1;
        if ((fd = socket(AF_INET, SOCK_STREAM, 0)) < 0) die("socket");
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (connect(fd, (struct sockaddr *)&sin, sizeof sin) < 0) die("connect");
    } else {
        usage();
    }
    return fd;
}

static void write_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            die("write");
        }
        p += w;
        n -= (size_t)w;
    }
}

/* read(2), retried on EINTR; 0 at EOF. */
static ssize_t read_some(int fd, char *p, size_t n) {
    for (;;) {
        ssize_t r = read(fd, p, n);
        if (r >= 0) return r;
        if (errno != EINTR) die("read");
    }
}

int main(int argc, char **argv) {
    if (argc < 3) usage();
    static char buffer[BUFFER_BYTES];
    long long bytes = -1;
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--bytes") == 0) bytes = atoll(argv[i + 1]);

    if (strcmp(argv[1], "sink") == 0) {
        int fd = accept_one(argv[2]);
        long long total = 0;
        double start = 0;
        for (ssize_t r; (r = read_some(fd, buffer, sizeof buffer)) > 0; total += r)
            if (total == 0) start = now_s();
        double seconds = now_s() - start;
        if (bytes >= 0 && total != bytes) {
            fprintf(stderr, "relay-ref: read %lld bytes, expected %lld\n", total, bytes);
            return 1;
        }
        printf("{\"bytes_total\": %lld, \"seconds\": %.6f, \"throughput_mib_s\": %.1f}\n", total, seconds,
               seconds > 0 ? (double)total / 1048576.0 / seconds : 0.0);
        return 0;
    }
    if (strcmp(argv[1], "relay") == 0) {
        if (argc < 4) usage();
        int in = accept_one(argv[2]);
        int out = connect_to(argv[3]);
        for (ssize_t r; (r = read_some(in, buffer, sizeof buffer)) > 0;) write_all(out, buffer, (size_t)r);
        shutdown(out, SHUT_WR);
        while (read(out, buffer, sizeof buffer) > 0) {}
        return 0;
    }
    if (strcmp(argv[1], "source") == 0) {
        if (bytes < 0) usage();
        int fd = connect_to(argv[2]);
        memset(buffer, 0xA5, sizeof buffer);
        for (long long left = bytes; left > 0;) {
            size_t n = left < (long long)sizeof buffer ? (size_t)left : sizeof buffer;
            write_all(fd, buffer, n);
            left -= (long long)n;
        }
        close(fd);
        return 0;
    }
    usage();
    return 64;
}
