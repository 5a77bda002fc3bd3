/*
 * dnssd-ref: the reference for handoff's discovery benchmarks (scripts/bench).
 *
 * It does with bare dns_sd (Avahi's compatibility library on Linux, like handoffd) exactly what
 * handoffd's ServiceAdvertiser and ServiceBrowser do, and nothing else: no agent, no actor, no
 * control socket. So "handoffd vs dnssd-ref" isolates what handoffd adds on top of mDNS.
 *
 *   dnssd-ref register NAME TYPE PORT [--updates N --min-gap-ms A --max-gap-ms B --seed S]
 *       DNSServiceRegister NAME.TYPE with TXT "v=1" "seq=0" "t=<now>"; prints "registered <ns>"
 *       when the daemon confirms. With --updates: after a 2 s settle, N times
 *       DNSServiceUpdateRecord(ref, NULL, ...) with "seq=K" "t=<CLOCK_REALTIME ns when the
 *       update was made>", then exits. The gaps between updates are drawn from [A, B] ms by the
 *       same generator as `handoff-bench visible` (gap_schedule below), so both sample Avahi's
 *       announcement timing alike. Without --updates: runs until SIGTERM/SIGINT, then
 *       deallocates the registration (the daemon sends the goodbye).
 *
 *   dnssd-ref watch TYPE [--self NAME] [--expect N] [--timeout S]
 *       DNSServiceBrowse TYPE; per instance DNSServiceResolve, then DNSServiceQueryRecord for its
 *       TXT record and for the A record of its host (as handoffd's browser does). Prints, with
 *       CLOCK_REALTIME in ns:
 *         "seen NAME <ns>"            when both the TXT and an A record have first arrived
 *         "txt NAME <ns> <seq> <t>"   on every TXT record added (t, seq: from the TXT, or -1)
 *         "gone NAME <ns>"            when the browse reports the instance removed
 *         "all <ns>"                  (with --expect) once N instances other than --self are seen
 *       Exits after "all", after --timeout seconds, or on SIGTERM/SIGINT.
 *
 * Build: gcc -O2 -o dnssd-ref dnssd-ref.c $(pkg-config --cflags --libs avahi-compat-libdns_sd)
 */
#define _GNU_SOURCE
#include <dns_sd.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>

#define MAX_REFS 512
#define MAX_INSTANCES 128

static volatile sig_atomic_t stop_requested = 0;
static void on_signal(int sig) { (void)sig; stop_requested = 1; }

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* The gap before update K (1-based): a 31-bit LCG from the seed, the same in handoff-bench. */
static long gap_schedule(unsigned long *state, long min_ms, long max_ms) {
    *state = (*state * 1103515245UL + 12345UL) & 0x7fffffffUL;
    return max_ms > min_ms ? min_ms + (long)(*state % (unsigned long)(max_ms - min_ms + 1)) : min_ms;
}

/* ------------------------------------------------------------------ refs -- */

static DNSServiceRef refs[MAX_REFS];
static int nrefs = 0;

static void add_ref(DNSServiceRef ref) {
    if (nrefs < MAX_REFS) refs[nrefs++] = ref;
    else { fprintf(stderr, "dnssd-ref: too many refs\n"); exit(2); }
}

/* Polls every ref's socket until `deadline_ms` (monotonic), processing results. */
static int process_until(int64_t deadline_ms) {
    struct pollfd fds[MAX_REFS];
    for (;;) {
        if (stop_requested) return 0;
        int64_t left = deadline_ms - mono_ms();
        if (left <= 0) return 0;
        for (int i = 0; i < nrefs; i++) {
            fds[i].fd = DNSServiceRefSockFD(refs[i]);
            fds[i].events = POLLIN;
            fds[i].revents = 0;
        }
        int n = poll(fds, (nfds_t)nrefs, (int)(left > 100 ? 100 : left));
        if (n < 0) {
            if (errno == EINTR) continue;
            perror("poll");
            return -1;
        }
        int count = nrefs; /* callbacks may add refs */
        for (int i = 0; i < count; i++) {
            if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
                DNSServiceErrorType err = DNSServiceProcessResult(refs[i]);
                if (err != kDNSServiceErr_NoError) {
                    fprintf(stderr, "dnssd-ref: DNSServiceProcessResult: %d\n", err);
                    return -1;
                }
            }
        }
    }
}

/* --------------------------------------------------------------- register -- */

static void make_txt(unsigned char *out, uint16_t *len, long seq) {
    char s1[32], s2[40];
    int l1 = snprintf(s1, sizeof s1, "seq=%ld", seq);
    int l2 = snprintf(s2, sizeof s2, "t=%lld", (long long)now_ns());
    uint16_t n = 0;
    out[n++] = 3; memcpy(out + n, "v=1", 3); n += 3;
    out[n++] = (unsigned char)l1; memcpy(out + n, s1, (size_t)l1); n += (uint16_t)l1;
    out[n++] = (unsigned char)l2; memcpy(out + n, s2, (size_t)l2); n += (uint16_t)l2;
    *len = n;
}

static int registered = 0;

static void register_reply(DNSServiceRef ref, DNSServiceFlags flags, DNSServiceErrorType err, const char *name,
                           const char *type, const char *domain, void *ctx) {
    (void)ref; (void)flags; (void)type; (void)domain; (void)ctx;
    if (err != kDNSServiceErr_NoError) {
        fprintf(stderr, "dnssd-ref: register failed: %d\n", err);
        exit(1);
    }
    registered = 1;
    printf("registered %s %lld\n", name, (long long)now_ns());
    fflush(stdout);
}

static int cmd_register(int argc, char **argv) {
    if (argc < 5) { fprintf(stderr, "usage: dnssd-ref register NAME TYPE PORT [--updates N --interval-ms MS]\n"); return 2; }
    const char *name = argv[2], *type = argv[3];
    int port = atoi(argv[4]);
    long updates = 0, min_gap = 1000, max_gap = 1000;
    unsigned long seed = 1;
    for (int i = 5; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--updates")) updates = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--min-gap-ms")) min_gap = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--max-gap-ms")) max_gap = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--seed")) seed = strtoul(argv[i + 1], NULL, 10);
    }
    unsigned char txt[256];
    uint16_t txtlen;
    make_txt(txt, &txtlen, 0);
    DNSServiceRef ref;
    DNSServiceErrorType err = DNSServiceRegister(&ref, 0, kDNSServiceInterfaceIndexAny, name, type, NULL, NULL,
                                                 htons((uint16_t)port), txtlen, txt, register_reply, NULL);
    if (err != kDNSServiceErr_NoError) { fprintf(stderr, "dnssd-ref: DNSServiceRegister: %d\n", err); return 1; }
    add_ref(ref);
    int64_t deadline = mono_ms() + 10000;
    while (!registered && !stop_requested && mono_ms() < deadline) process_until(mono_ms() + 100);
    if (!registered) { fprintf(stderr, "dnssd-ref: not registered within 10 s\n"); DNSServiceRefDeallocate(ref); return 1; }
    if (updates > 0) {
        process_until(mono_ms() + 2000);
        for (long k = 1; k <= updates && !stop_requested; k++) {
            if (k > 1) process_until(mono_ms() + gap_schedule(&seed, min_gap, max_gap));
            make_txt(txt, &txtlen, k);
            err = DNSServiceUpdateRecord(ref, NULL, 0, txtlen, txt, 0);
            if (err != kDNSServiceErr_NoError) { fprintf(stderr, "dnssd-ref: DNSServiceUpdateRecord: %d\n", err); break; }
            printf("updated %ld %lld\n", k, (long long)now_ns());
            fflush(stdout);
        }
        process_until(mono_ms() + 1500);
    } else {
        while (!stop_requested) process_until(mono_ms() + 1000);
    }
    DNSServiceRefDeallocate(ref);
    return 0;
}

/* ------------------------------------------------------------------ watch -- */

struct instance {
    char name[256];
    char fullname[kDNSServiceMaxDomainName];
    char host[kDNSServiceMaxDomainName];
    int have_txt, have_addr, seen, gone;
    DNSServiceRef resolve, txtq, addrq;
};

static struct instance instances[MAX_INSTANCES];
static int ninstances = 0;
static const char *self_name = NULL;
static int expect = 0, seen_count = 0, all_printed = 0;
static uint32_t browse_if = 0;

static struct instance *find_instance(const char *name) {
    for (int i = 0; i < ninstances; i++)
        if (!strcmp(instances[i].name, name)) return &instances[i];
    return NULL;
}

static void check_seen(struct instance *in) {
    if (in->seen || !in->have_txt || !in->have_addr) return;
    in->seen = 1;
    printf("seen %s %lld\n", in->name, (long long)now_ns());
    if (!self_name || strcmp(self_name, in->name)) seen_count++;
    if (expect > 0 && seen_count >= expect && !all_printed) {
        all_printed = 1;
        printf("all %lld\n", (long long)now_ns());
    }
    fflush(stdout);
}

/* Value of KEY in TXT rdata as a number, or -1. */
static long long txt_number(const unsigned char *rdata, uint16_t len, const char *key) {
    size_t klen = strlen(key);
    uint16_t i = 0;
    while (i < len) {
        uint8_t l = rdata[i++];
        if (i + l > len) break;
        if (l > klen && !memcmp(rdata + i, key, klen) && rdata[i + klen] == '=') {
            char buf[32];
            size_t vl = l - klen - 1;
            if (vl >= sizeof buf) vl = sizeof buf - 1;
            memcpy(buf, rdata + i + klen + 1, vl);
            buf[vl] = 0;
            return atoll(buf);
        }
        i = (uint16_t)(i + l);
    }
    return -1;
}

static void query_reply(DNSServiceRef ref, DNSServiceFlags flags, uint32_t ifindex, DNSServiceErrorType err,
                        const char *fullname, uint16_t rrtype, uint16_t rrclass, uint16_t rdlen, const void *rdata,
                        uint32_t ttl, void *ctx) {
    (void)ref; (void)ifindex; (void)fullname; (void)rrclass; (void)ttl;
    struct instance *in = ctx;
    if (err != kDNSServiceErr_NoError || !(flags & kDNSServiceFlagsAdd)) return;
    if (rrtype == kDNSServiceType_TXT) {
        long long t = txt_number(rdata, rdlen, "t"), seq = txt_number(rdata, rdlen, "seq");
        printf("txt %s %lld %lld %lld\n", in->name, (long long)now_ns(), seq, t);
        fflush(stdout);
        in->have_txt = 1;
    } else if (rrtype == kDNSServiceType_A && rdlen == 4) {
        in->have_addr = 1;
    }
    check_seen(in);
}

static void resolve_reply(DNSServiceRef ref, DNSServiceFlags flags, uint32_t ifindex, DNSServiceErrorType err,
                          const char *fullname, const char *host, uint16_t port, uint16_t txtlen,
                          const unsigned char *txt, void *ctx) {
    (void)ref; (void)flags; (void)port; (void)txtlen; (void)txt;
    struct instance *in = ctx;
    if (err != kDNSServiceErr_NoError || in->txtq) return;
    snprintf(in->fullname, sizeof in->fullname, "%s", fullname);
    snprintf(in->host, sizeof in->host, "%s", host);
    if (DNSServiceQueryRecord(&in->txtq, 0, ifindex, in->fullname, kDNSServiceType_TXT, kDNSServiceClass_IN,
                              query_reply, in) == kDNSServiceErr_NoError)
        add_ref(in->txtq);
    if (DNSServiceQueryRecord(&in->addrq, 0, ifindex, in->host, kDNSServiceType_A, kDNSServiceClass_IN,
                              query_reply, in) == kDNSServiceErr_NoError)
        add_ref(in->addrq);
}

static void browse_reply(DNSServiceRef ref, DNSServiceFlags flags, uint32_t ifindex, DNSServiceErrorType err,
                         const char *name, const char *type, const char *domain, void *ctx) {
    (void)ref; (void)ctx;
    if (err != kDNSServiceErr_NoError) { fprintf(stderr, "dnssd-ref: browse error %d\n", err); return; }
    struct instance *in = find_instance(name);
    if (flags & kDNSServiceFlagsAdd) {
        if (in && !in->gone) return;
        if (!in) {
            if (ninstances >= MAX_INSTANCES) return;
            in = &instances[ninstances++];
        } else {
            /* Came back: forget the old refs' state (they are left open; a short-lived tool). */
        }
        memset(in, 0, sizeof *in);
        snprintf(in->name, sizeof in->name, "%s", name);
        browse_if = ifindex;
        if (DNSServiceResolve(&in->resolve, 0, ifindex, name, type, domain, resolve_reply, in) == kDNSServiceErr_NoError)
            add_ref(in->resolve);
    } else if (in && !in->gone) {
        in->gone = 1;
        if (in->seen && (!self_name || strcmp(self_name, in->name))) seen_count--;
        printf("gone %s %lld\n", name, (long long)now_ns());
        fflush(stdout);
    }
}

/* Closes the refs of instances that are gone, so a long watch does not accumulate them. */
static void reap_gone(void) {
    for (int i = 0; i < ninstances; i++) {
        struct instance *in = &instances[i];
        if (!in->gone) continue;
        DNSServiceRef *own[3] = {&in->resolve, &in->txtq, &in->addrq};
        for (int k = 0; k < 3; k++) {
            if (!*own[k]) continue;
            for (int j = 0; j < nrefs; j++)
                if (refs[j] == *own[k]) { refs[j] = refs[--nrefs]; break; }
            DNSServiceRefDeallocate(*own[k]);
            *own[k] = NULL;
        }
    }
}

static int cmd_watch(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: dnssd-ref watch TYPE [--self NAME] [--expect N] [--timeout S]\n"); return 2; }
    const char *type = argv[2];
    long timeout = 0;
    for (int i = 3; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--self")) self_name = argv[i + 1];
        else if (!strcmp(argv[i], "--expect")) expect = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--timeout")) timeout = atol(argv[i + 1]);
    }
    DNSServiceRef browse;
    DNSServiceErrorType err = DNSServiceBrowse(&browse, 0, kDNSServiceInterfaceIndexAny, type, NULL, browse_reply, NULL);
    if (err != kDNSServiceErr_NoError) { fprintf(stderr, "dnssd-ref: DNSServiceBrowse: %d\n", err); return 1; }
    add_ref(browse);
    printf("watching %lld\n", (long long)now_ns());
    fflush(stdout);
    int64_t end = timeout > 0 ? mono_ms() + timeout * 1000 : INT64_MAX;
    while (!stop_requested && !all_printed && mono_ms() < end) {
        if (process_until(mono_ms() + 200) < 0) return 1;
        reap_gone();
    }
    for (int i = 0; i < nrefs; i++) DNSServiceRefDeallocate(refs[i]);
    return (expect > 0 && !all_printed) ? 3 : 0;
}

int main(int argc, char **argv) {
    setenv("AVAHI_COMPAT_NOWARN", "1", 1);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (argc >= 2 && !strcmp(argv[1], "register")) return cmd_register(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "watch")) return cmd_watch(argc, argv);
    fprintf(stderr, "usage: dnssd-ref register NAME TYPE PORT [...] | watch TYPE [...]\n");
    return 2;
}
