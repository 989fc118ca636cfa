/* Figures and report lines. */
#include "print.h"

#include <sys/wait.h>

static double secs(mc_time_us from, mc_time_us to) { return to > from ? (double)(to - from) / 1e6 : 0; }

static double mib(long kib) { return (double)kib / 1024.0; }

static void role_usage(FILE *out, const char *role, const bench_child *c)
{
    fprintf(out, "  %-8s cpu %.2f s, peak rss %.1f MiB", role, bench_child_cpu_s(c),
            mib(bench_child_maxrss_kib(c)));
    if (c->reaped && WIFSIGNALED(c->status) && WTERMSIG(c->status) != 9)
        fprintf(out, ", died of signal %d", WTERMSIG(c->status));
    if (c->has_result && c->result.error[0])
        fprintf(out, ", error: %s", c->result.error);
    fputc('\n', out);
}

bench_figures bench_print_side(FILE *out, const bench_options *o, const bench_side *side)
{
    bench_figures f = {0};
    const char *name = side->transport->name;
    if (side->error[0]) {
        fprintf(out, "%-8s FAILED: %s\n", name, side->error);
        return f;
    }
    const bench_child *rc = side->has_receiver ? &side->receiver : NULL;
    const bench_child *sc = side->has_sender ? &side->sender : NULL;
    const bench_report *rr = rc && rc->has_result ? &rc->result : NULL;
    const bench_report *sr = sc && sc->has_result ? &sc->result : NULL;
    const bench_report *sready = sc && sc->ready ? &sc->ready_report : NULL;
    /* The sender's first send; without it (it never started sending), the receiver's start. */
    mc_time_us t_start = sready ? sready->t_start : (rr ? rr->t_start : 0);

    bool complete;
    if (rr) {
        /* The receiver's view: from the sender's first send (or the first arrival when the
         * sender runs elsewhere) to the last in-order message. */
        f.delivered = rr->count;
        if (!sc)
            t_start = rr->count ? rr->t_first : rr->t_start;
        complete = rr->finished && rr->count == o->messages;
        f.seconds = secs(t_start, complete ? rr->t_last : rr->t_end);
    } else if (sr) {
        /* Sender only (--connect) or the receiver never reported: count acknowledged ones. */
        f.delivered = sr->acked;
        complete = sr->finished && !rc;
        f.seconds = secs(sr->t_start, sr->finished ? sr->t_last : sr->t_end);
    } else {
        complete = false;
    }
    f.ok = complete && (!sc || (sr && sr->finished));
    f.rate = f.seconds > 0 ? (double)f.delivered / f.seconds : 0;
    f.cpu_s = (rc ? bench_child_cpu_s(rc) : 0) + (sc ? bench_child_cpu_s(sc) : 0);
    long rss = 0;
    if (rc && bench_child_maxrss_kib(rc) > rss)
        rss = bench_child_maxrss_kib(rc);
    if (sc && bench_child_maxrss_kib(sc) > rss)
        rss = bench_child_maxrss_kib(sc);

    const char *verdict = f.ok ? "ok" : "FAILED";
    if (!f.ok && rr && !rr->error[0] && rr->duplicates + rr->misordered + rr->corrupt == 0 &&
        !rr->finished)
        verdict = "DID NOT FINISH";
    fprintf(out, "%-8s %s: %llu/%llu messages %s in %.3f s: %.0f msg/s, cpu %.2f s, peak rss %.1f MiB\n",
            name, verdict, f.delivered, (unsigned long long)o->messages,
            rr ? "delivered in order" : "acknowledged", f.seconds, f.rate, f.cpu_s, mib(rss));
    if (rr && rr->duplicates + rr->misordered + rr->corrupt > 0)
        fprintf(out, "  receiver saw %llu duplicates, %llu out of order, %llu corrupt\n",
                (unsigned long long)rr->duplicates, (unsigned long long)rr->misordered,
                (unsigned long long)rr->corrupt);
    if (rr && !rr->finished && !rr->error[0] && rr->duplicates + rr->misordered + rr->corrupt == 0)
        fprintf(out, "  stopped by the %.0f s time limit\n", o->time_limit_s);
    if (sc) {
        role_usage(out, "sender", sc);
        if (sr) {
            char acked[32];
            if (sr->acked_unknown)
                snprintf(acked, sizeof acked, "not all");
            else
                snprintf(acked, sizeof acked, "%llu", (unsigned long long)sr->acked);
            fprintf(out, "           sent %llu, acknowledged %s, peak unacknowledged %llu %s\n",
                    (unsigned long long)sr->count, acked, (unsigned long long)sr->peak_queued,
                    side->transport->queue_unit);
        } else {
            fprintf(out, "           no result from the sender\n");
        }
    }
    if (rc) {
        role_usage(out, "receiver", rc);
        if (!rr)
            fprintf(out, "           no result from the receiver\n");
    }
    if (side->has_relay) {
        const bench_child *l = &side->relay;
        if (l->has_result)
            fprintf(out, "  relay    %llu datagrams in, %llu dropped, %llu duplicated, %llu reordered, %llu send failures, cpu %.2f s\n",
                    (unsigned long long)l->result.relay_in, (unsigned long long)l->result.relay_dropped,
                    (unsigned long long)l->result.relay_duplicated,
                    (unsigned long long)l->result.relay_reordered,
                    (unsigned long long)l->result.relay_send_failed, bench_child_cpu_s(l));
        else
            fprintf(out, "  relay    no result\n");
    }
    return f;
}
