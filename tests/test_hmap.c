/*
 * test_hmap: the hash index — items found by key after many inserts and
 * removals (backward-shift deletion keeps every run findable, tested with
 * hashes forced to collide and to wrap around the table's end), removal by
 * identity, and the keyed hashes (two-part keys that differ only in where
 * the parts split do not hash alike).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h> /* after the four headers it needs */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/hmap.h"

struct item {
    char key[32];
    uint64_t hash;
};

static bool same_key(const void *item, const void *key)
{
    return strcmp(((const struct item *)item)->key, key) == 0;
}

/* n items "k0"…; hash_of(i) decides their hashes (collisions on purpose). */
static struct item *make(size_t n, uint64_t (*hash_of)(size_t i))
{
    struct item *it = calloc(n, sizeof *it);
    for (size_t i = 0; i < n; i++) {
        snprintf(it[i].key, sizeof it[i].key, "k%zu", i);
        it[i].hash = hash_of(i);
    }
    return it;
}

static uint64_t real_hash(size_t i)
{
    char k[32];
    snprintf(k, sizeof k, "k%zu", i);
    return hmap_hash(k, strlen(k));
}

static uint64_t few_buckets(size_t i)
{
    return (i % 3) * 0x10000 +
           15; /* three long runs, all starting near the end of a 16-slot table */
}

/* Every item present is found, every removed one is not. */
static void check(const struct hmap *m, struct item *it, size_t n, const bool *present)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        void *got = hmap_get(m, it[i].hash, same_key, it[i].key);
        if (present[i]) {
            assert_ptr_equal(got, &it[i]);
            count++;
        } else {
            assert_null(got);
        }
    }
    assert_int_equal(m->count, count);
}

static void churn(uint64_t (*hash_of)(size_t i))
{
    enum { N = 2000 };
    struct item *it = make(N, hash_of);
    bool present[N] = {0};
    struct hmap m = HMAP_INIT;
    for (size_t i = 0; i < N; i++) {
        hmap_put(&m, it[i].hash, &it[i]);
        present[i] = true;
    }
    check(&m, it, N, present);
    /* Remove every third, then every other of what is left, checking each time. */
    for (size_t i = 0; i < N; i += 3) {
        assert_true(hmap_remove(&m, it[i].hash, &it[i]));
        present[i] = false;
    }
    check(&m, it, N, present);
    for (size_t i = 1; i < N; i += 2) {
        if (!present[i])
            continue;
        assert_true(hmap_remove(&m, it[i].hash, &it[i]));
        present[i] = false;
    }
    check(&m, it, N, present);
    /* Not there (twice removed): false, nothing changes. */
    assert_false(hmap_remove(&m, it[0].hash, &it[0]));
    check(&m, it, N, present);
    /* Back in. */
    for (size_t i = 0; i < N; i++)
        if (!present[i]) {
            hmap_put(&m, it[i].hash, &it[i]);
            present[i] = true;
        }
    check(&m, it, N, present);
    hmap_free(&m);
    free(it);
}

static void test_churn_real_hashes(void **state)
{
    churn(real_hash);
}

static void test_churn_colliding_hashes(void **state)
{
    churn(few_buckets);
}

/* A small table whose runs wrap around the end: removal must shift across the wrap. */
static void test_wraparound_removal(void **state)
{
    struct item it[6];
    struct hmap m = HMAP_INIT;
    for (size_t i = 0; i < 6; i++) {
        snprintf(it[i].key, sizeof it[i].key, "w%zu", i);
        it[i].hash = 14 + (i % 2); /* homes 14 and 15 of 16: the run wraps to 0, 1, … */
        hmap_put(&m, it[i].hash, &it[i]);
    }
    assert_int_equal(m.cap, 16);
    for (size_t r = 0; r < 6; r++) {
        assert_true(hmap_remove(&m, it[r].hash, &it[r]));
        for (size_t i = 0; i < 6; i++)
            if (i > r)
                assert_ptr_equal(hmap_get(&m, it[i].hash, same_key, it[i].key), &it[i]);
            else
                assert_null(hmap_get(&m, it[i].hash, same_key, it[i].key));
    }
    assert_int_equal(m.count, 0);
    hmap_free(&m);
}

static void test_empty_table(void **state)
{
    struct hmap m = HMAP_INIT;
    assert_null(hmap_get(&m, 1, same_key, "x"));
    assert_false(hmap_remove(&m, 1, "x"));
    hmap_free(&m);
}

static void test_hashes(void **state)
{
    assert_int_equal(hmap_hash("abc", 3), hmap_hash("abc", 3));
    assert_int_not_equal(hmap_hash("abc", 3), hmap_hash("abd", 3));
    assert_int_not_equal(hmap_hash("", 0), hmap_hash("\0", 1));
    assert_int_equal(hmap_hash2("ws", "job"), hmap_hash2("ws", "job"));
    assert_int_not_equal(hmap_hash2("ab", "c"), hmap_hash2("a", "bc"));
    assert_int_not_equal(hmap_hash2("a", "b"), hmap_hash2("b", "a"));
    /* Inputs of every length up to two words and a bit: no two alike (the tail is hashed). */
    char buf[20];
    memset(buf, 'x', sizeof buf);
    uint64_t seen[20];
    for (size_t n = 0; n < 20; n++) {
        seen[n] = hmap_hash(buf, n);
        for (size_t k = 0; k < n; k++)
            assert_int_not_equal(seen[k], seen[n]);
    }
}

/*
 * SipHash-c-d byte by byte, as the paper gives it (its SipHash-2-4 vector
 * checks it below): with 1 and 3 rounds, what the word-at-a-time hash must
 * equal.
 */
static uint64_t rotl64(uint64_t x, int b)
{
    return (x << b) | (x >> (64 - b));
}

static void ref_round(uint64_t v[4])
{
    v[0] += v[1], v[1] = rotl64(v[1], 13), v[1] ^= v[0], v[0] = rotl64(v[0], 32);
    v[2] += v[3], v[3] = rotl64(v[3], 16), v[3] ^= v[2];
    v[0] += v[3], v[3] = rotl64(v[3], 21), v[3] ^= v[0];
    v[2] += v[1], v[1] = rotl64(v[1], 17), v[1] ^= v[2], v[2] = rotl64(v[2], 32);
}

static uint64_t ref_siphash(const uint64_t k[2], const unsigned char *p, size_t len, int c, int d)
{
    uint64_t v[4] = {0x736f6d6570736575ull ^ k[0], 0x646f72616e646f6dull ^ k[1],
                     0x6c7967656e657261ull ^ k[0], 0x7465646279746573ull ^ k[1]};
    size_t whole = len - len % 8;
    for (size_t i = 0; i <= whole; i += 8) {
        uint64_t m = 0;
        if (i < whole)
            for (int b = 7; b >= 0; b--)
                m = m << 8 | p[i + (size_t)b];
        else { /* the last word: the tail's bytes and the length's low byte on top */
            for (size_t b = len % 8; b-- > 0;)
                m = m << 8 | p[i + b];
            m |= (uint64_t)(len & 0xff) << 56;
        }
        v[3] ^= m;
        for (int r = 0; r < c; r++)
            ref_round(v);
        v[0] ^= m;
    }
    v[2] ^= 0xff;
    for (int r = 0; r < d; r++)
        ref_round(v);
    return v[0] ^ v[1] ^ v[2] ^ v[3];
}

/* Every length and alignment, and the process's hash split anywhere, against the reference. */
static void test_siphash_words(void **state)
{
    (void)state;
    unsigned char buf[300];
    uint64_t x = 0x243f6a8885a308d3ull;
    for (size_t i = 0; i < sizeof buf; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        buf[i] = (unsigned char)x;
    }
    const uint64_t keys[][2] = {{0, 0}, {0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull}, {x, ~x}};
    /* the paper's vector: key 00..0f, message 00..0e */
    unsigned char msg[15];
    for (unsigned char i = 0; i < 15; i++)
        msg[i] = i;
    assert_int_equal(ref_siphash(keys[1], msg, 15, 2, 4), 0xa129ca6149be45e5ull);
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        for (size_t off = 0; off < 8; off++)
            for (size_t n = 0; n + off <= sizeof buf; n++)
                assert_int_equal(hmap_siphash13(keys[k], buf + off, n),
                                 ref_siphash(keys[k], buf + off, n, 1, 3));
    /* hmap_hash2 takes its parts in three pieces cut anywhere in a word: the same as one piece */
    char a[40], b[40], whole[8 + 80];
    for (size_t la = 0; la < 20; la++)
        for (size_t lb = 0; lb < 20; lb++) {
            memcpy(a, buf, la), a[la] = '\0';
            memcpy(b, buf + 100, lb), b[lb] = '\0';
            for (size_t i = 0; i < la; i++)
                a[i] |= 1; /* no NUL inside */
            for (size_t i = 0; i < lb; i++)
                b[i] |= 1;
            uint64_t n = la;
            memcpy(whole, &n, 8);
            memcpy(whole + 8, a, la);
            memcpy(whole + 8 + la, b, lb);
            assert_int_equal(hmap_hash2(a, b), hmap_hash(whole, 8 + la + lb));
        }
}

/*
 * The first hash of a process taken by several threads at once: one key for
 * all. The race is a syscall wide, so it is run in 200 fresh processes.
 */
#define RACERS 8
#define RACES 200
static pthread_barrier_t racers_ready;

static void *first_hash(void *out)
{
    pthread_barrier_wait(&racers_ready);
    *(uint64_t *)out = hmap_hash("train/loss", 10);
    return NULL;
}

/* In a child: 0 when every thread got the same hash, and the key stayed. */
static int race_once(void)
{
    pthread_t t[RACERS];
    uint64_t got[RACERS];
    if (pthread_barrier_init(&racers_ready, NULL, RACERS) != 0)
        return 2;
    for (int i = 0; i < RACERS; i++)
        if (pthread_create(&t[i], NULL, first_hash, &got[i]) != 0)
            return 2;
    for (int i = 0; i < RACERS; i++)
        pthread_join(t[i], NULL);
    for (int i = 1; i < RACERS; i++)
        if (got[i] != got[0])
            return 1;
    return hmap_hash("train/loss", 10) == got[0] ? 0 : 1;
}

static void test_one_key_for_all_threads(void **state)
{
    (void)state;
    int differed = 0;
    for (int r = 0; r < RACES; r++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
            _exit(race_once());
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 2);
        differed += WEXITSTATUS(status) == 1;
    }
    assert_int_equal(differed, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_key_for_all_threads), /* first: forks before any hash */
        cmocka_unit_test(test_churn_real_hashes),
        cmocka_unit_test(test_churn_colliding_hashes),
        cmocka_unit_test(test_wraparound_removal),
        cmocka_unit_test(test_empty_table),
        cmocka_unit_test(test_hashes),
        cmocka_unit_test(test_siphash_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
