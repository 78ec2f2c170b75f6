/* cmd_version.c: `s2s --version`: the version of s2s and of the libraries it runs on,
 * as a bug report needs them -- the BLAS (its name, version and build), what multiplies
 * the small products, the threads it will use, and libyaml. */
#include <cblas.h>
#include <stdio.h>
#include <string.h>
#include <yaml.h>

#include "cli/command.h"
#include "nn/small_gemm.h"

#define S2S_VERSION "0.1.0"

int cmd_version(void)
{
    /* OpenBLAS describes itself as "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Haswell
     * MAX_THREADS=64": its name and version, then how it was built and the kernel it
     * chose for this CPU */
    char config[256], name[64] = "?", version[64] = "?";
    snprintf(config, sizeof config, "%s", openblas_get_config());
    int used = 0;
    sscanf(config, "%63s %63s %n", name, version, &used);
    printf("s2s %s\n", S2S_VERSION);
    printf("BLAS: %s %s", name, version);
    if (used > 0 && config[used])
        printf(" (%s)", config + used);
    /* training's rule (trainer_setup.c) with training.threads 0; the other commands keep
     * OpenBLAS's own choice (OPENBLAS_NUM_THREADS, else one per core) */
    char small[128];
    small_gemm_describe(small, sizeof small);
    printf("\nsmall products: %s", small);
    printf("\nthreads: training %d (one for batches of up to 4 sentences; training.threads sets "
           "it; training.shards cuts each batch for them), other commands' BLAS %d\n",
           openblas_get_num_procs(), openblas_get_num_threads());
    printf("libyaml: %s\n", yaml_get_version_string());
    return cmd_flush_stdout() == 0 ? EXIT_OK : EXIT_IO;
}
