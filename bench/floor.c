/*
 * bench/floor.c — the least a fixed-rate client can spend per request.
 *
 * bench/run.sh builds this with `cc -O2` and runs it as the tool `floor` in
 * the fixed-rate modes, beside yace and wrk2. It keeps yace's timetable and
 * nothing else: request k is due at start + k / RATE (evenly spaced), and at
 * each tick (TICK_US, yace's --timer-slack default) it sends every request
 * due by then, round-robin over CONNS keep-alive connections. It parses
 * nothing, keeps no histogram and asks epoll nothing: before each send it
 * drains whatever that connection has received (one non-blocking recv), and
 * at the end it reads until every response is in. So its CPU per request is
 * what the timetable itself costs on this machine — the sleeps and wake-ups
 * and the system calls no client can avoid — and no fixed-rate client that
 * keeps the same timetable can spend less.
 *
 *   floor HOST PORT RATE CONNS SECONDS [TICK_US]   the client
 *   floor --wake PERIOD_US COUNT                   CPU of one sleep→wake
 *
 * It prints "sent N responses M" and exits 1 if a response is missing.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void sleep_until(long long ns) {
    struct timespec t = {.tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR) {
    }
}

static double cpu_s(void) {
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    return r.ru_utime.tv_sec + r.ru_utime.tv_usec / 1e6 + r.ru_stime.tv_sec + r.ru_stime.tv_usec / 1e6;
}

/* Count complete responses in what a connection received: nginx's answer
 * to GET / is a fixed-size "200 hello world" (its length is learnt from the
 * first one, by its Content-Length), so bytes / length is the count. */
static long response_len;
static char first[4096];
static long first_len;

static void learn(const char *b, long n) {
    if (response_len || first_len + n > (long)sizeof first) return;
    memcpy(first + first_len, b, n);
    first_len += n;
    const char *end = memmem(first, first_len, "\r\n\r\n", 4);
    const char *cl = memmem(first, first_len, "Content-Length: ", 16);
    if (end && cl && cl < end) response_len = (end + 4 - first) + atol(cl + 16);
}

static int wake_cost(long period_us, int count) {
    long long t = now_ns();
    double c0 = cpu_s();
    for (int i = 0; i < count; i++) sleep_until(t += period_us * 1000LL);
    printf("sleep-wake %.1f us of CPU each (clock_nanosleep, %ld us apart, %d times)\n",
           (cpu_s() - c0) / count * 1e6, period_us, count);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 4 && !strcmp(argv[1], "--wake")) return wake_cost(atol(argv[2]), atoi(argv[3]));
    if (argc < 6) {
        fprintf(stderr, "usage: floor HOST PORT RATE CONNS SECONDS [TICK_US] | floor --wake PERIOD_US COUNT\n");
        return 2;
    }
    const char *host = argv[1];
    int port = atoi(argv[2]), conns = atoi(argv[4]);
    double rate = atof(argv[3]), seconds = atof(argv[5]);
    long long tick = (argc > 6 ? atoll(argv[6]) : 750) * 1000LL;
    if (rate <= 0 || conns <= 0 || seconds <= 0 || tick < 0) {
        fprintf(stderr, "floor: RATE, CONNS and SECONDS must be positive, TICK_US not negative\n");
        return 2;
    }
    char req[256];
    int req_len = snprintf(req, sizeof req, "GET / HTTP/1.1\r\nHost: %s:%d\r\nUser-Agent: floor\r\n\r\n", host, port);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1) {
        fprintf(stderr, "floor: HOST must be an IPv4 address (got %s)\n", host);
        return 2;
    }
    int *fd = calloc(conns, sizeof *fd);
    long *got = calloc(conns, sizeof *got), *sent = calloc(conns, sizeof *sent);
    int one = 1;
    for (int i = 0; i < conns; i++) {
        fd[i] = socket(AF_INET, SOCK_STREAM, 0);
        if (fd[i] < 0 || connect(fd[i], (struct sockaddr *)&a, sizeof a)) {
            perror("floor: connect");
            return 1;
        }
        setsockopt(fd[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    char buf[65536];
    long long start = now_ns(), end = start + (long long)(seconds * 1e9);
    long long total = (long long)(seconds * rate), k = 0;
    while (k < total) {
        long long due = start + (long long)(k * 1e9 / rate);
        /* Sleep to the first tick at or after the next due time (tick 0:
         * to the due time itself), then send everything due by then. */
        long long wake = tick ? start + ((due - start + tick - 1) / tick) * tick : due;
        if (wake > now_ns()) sleep_until(wake);
        long long t = now_ns();
        while (k < total && start + (long long)(k * 1e9 / rate) <= t) {
            int c = k % conns;
            ssize_t r = recv(fd[c], buf, sizeof buf, MSG_DONTWAIT);
            if (r > 0) {
                learn(buf, r);
                got[c] += r;
            }
            if (send(fd[c], req, req_len, 0) != req_len) {
                perror("floor: send");
                return 1;
            }
            sent[c]++;
            k++;
        }
    }
    /* Every response in (bounded: two seconds past the end). */
    long responses = 0;
    for (int c = 0; c < conns; c++) {
        struct timeval tv = {.tv_sec = 0, .tv_usec = 200000};
        setsockopt(fd[c], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        while ((!response_len || got[c] < sent[c] * response_len) && now_ns() < end + 2000000000LL) {
            ssize_t r = recv(fd[c], buf, sizeof buf, 0);
            if (r <= 0) break;
            learn(buf, r);
            got[c] += r;
        }
        if (response_len) responses += got[c] / response_len;
        close(fd[c]);
    }
    printf("sent %lld responses %ld\n", k, responses);
    return responses == k ? 0 : 1;
}
