/* mercury-bench: mercury against ENet, same workload, same relay, one report.
 * See docs/tools/mercury-bench.md. */
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "latency.h"
#include "options.h"
#include "print.h"
#include "side.h"

int main(int argc, char **argv)
{
    mc_log_set_process_name("mercury-bench");
    bench_options o;
    char err[256] = "";
    int rc = bench_options_parse(argc, argv, &o, err, sizeof err);
    if (rc == 1)
        return 0;
    if (rc < 0) {
        fprintf(stderr, "mercury-bench: %s\n", err);
        return 2;
    }
    if (o.latency) {
        printf("mercury-bench latency: %u channels x %u messages/s for %g s, %zu bytes, "
               "delay %u ms one way, loss %g, dup %g, reorder %g, seed %llu\n",
               o.channels, o.rate, o.duration_s, o.size, o.delay_ms, o.loss, o.dup, o.reorder,
               (unsigned long long)o.seed);
        fflush(stdout);
        return bench_latency_main(&o);
    }
    static const char *const mode_names[] = {"local", "listen", "connect"};
    printf("mercury-bench: %llu messages of %zu bytes, loss %g, dup %g, reorder %g, seed %llu, "
           "time limit %g s, mode %s\n",
           (unsigned long long)o.messages, o.size, o.loss, o.dup, o.reorder,
           (unsigned long long)o.seed, o.time_limit_s, mode_names[o.mode]);
    fflush(stdout);

    /* mercury, mercury with authenticated packets (a cluster's internal nubs), ENet */
    const bench_transport *order[3] = {&bench_transport_mercury, &bench_transport_mercury_auth,
                                       &bench_transport_enet};
    bool run[3] = {o.run_mercury, o.run_mercury_auth, o.run_enet};
    bench_figures fig[3] = {{0}, {0}, {0}};
    bool all_ok = true;
    for (int i = 0; i < 3; i++) {
        if (!run[i])
            continue;
        bench_side side;
        bench_side_run(&o, order[i], &side);
        fig[i] = bench_print_side(stdout, &o, &side);
        fflush(stdout);
        all_ok = all_ok && fig[i].ok;
    }
    if (run[0] && run[1] && fig[0].rate > 0)
        printf("authentication cost: %.1f%% of throughput (mercury+auth %.0f msg/s, "
               "mercury %.0f msg/s)\n",
               100.0 * (1.0 - fig[1].rate / fig[0].rate), fig[1].rate, fig[0].rate);
    if (run[1] && run[2] && fig[2].rate > 0)
        printf("ratio mercury+auth/enet: %.2f\n", fig[1].rate / fig[2].rate);
    if (run[0] && run[2]) {
        if (fig[2].rate > 0)
            printf("ratio mercury/enet: %.2f\n", fig[0].rate / fig[2].rate);
        else
            printf("ratio mercury/enet: %s\n", fig[0].rate > 0 ? "inf" : "0.00");
    }
    return all_ok ? 0 : 1;
}
