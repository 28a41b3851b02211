// CPU mock of the runner's call sequence (struct ctx on main's stack, rng advanced by regeneration and 256 draws per sampled timed call) for rng_predict_gemm.cu: checks that it flags exactly the sampled timed calls and predicts their positions. Build: nvcc -O2 -std=c++17 -Iinclude tests/redteam/mock/rng_predict_mock.cu -o /tmp/m && /tmp/m
#include "../rng_predict_gemm.cu"
#include <stdio.h>
#include <string.h>
struct mctx { void *t; int a[30]; uint64_t rng; uint64_t pad[280]; void *so; void *launch; void *ws; size_t ws_bytes; void *s; };
static uint64_t rng_next(struct mctx *c) { uint64_t x = c->rng; x ^= x >> 12; x ^= x << 25; x ^= x >> 27; c->rng = x; return x * 0x2545F4914F6CDD1Dull; }
static const long long total = 2048LL * 2048;
__attribute__((noinline)) static int call_c(struct mctx *c, struct picks *p) { volatile char junk[96]; junk[0]=1; p->n=0; return predict(c->ws, c->ws_bytes, (cudaStream_t)c->s, total, p) + junk[0] - 1; }
__attribute__((noinline)) static int check_once(struct mctx *c) { volatile char j[700]; j[0]=0; struct picks p; return call_c(c, &p) + j[0]; }
__attribute__((noinline)) static int time_it(struct mctx *c, int trials) {
	double ms[200]; memset(ms, 0, sizeof ms); int bad = 0; struct picks p;
	for (int i = 0; i < 4; i++) bad += call_c(c, &p); /* warm-up, est */
	for (int i = 0; i < trials; i++) {
		rng_next(c);
		int f = call_c(c, &p);
		if (i < 3) { if (f) { printf("trial %d flagged but fully checked\n", i); bad++; } continue; }
		if (!f) { printf("trial %d not flagged\n", i); bad++; }
		for (int s = 0; s < 256; s++) { long long want = (long long)(rng_next(c) % (uint64_t)total); if (f && p.idx[s] != want) { printf("trial %d sample %d mismatch\n", i, s); bad++; break; } }
	}
	return bad;
}
int main(void) {
	struct mctx c; memset(&c, 0, sizeof c); c.rng = 0x123456789abcdefull; c.launch = (void *)&cutegen_launch; c.ws = (void *)0x7f0000001000; c.ws_bytes = 4096; c.s = (void *)0x5555aaaa;
	int bad = 0;
	for (int i = 0; i < 8; i++) bad += check_once(&c);
	bad += time_it(&c, 40);
	for (int i = 0; i < 5; i++) bad += check_once(&c); /* cross-check, recheck: rng unchanged */
	printf(bad ? "FAIL %d\n" : "ok: sampled calls predicted exactly, others computed\n", bad);
	return bad != 0;
}
