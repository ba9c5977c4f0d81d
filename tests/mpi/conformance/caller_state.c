/* What a program sees of its own state across MPI calls: the floating-point
 * exception flags and rounding mode, errno, and the signal dispositions
 * MPI_Init leaves. Run without flexmpi, linked with it and with it preloaded
 * (conformance/compare_runs.cmake): each run prints what it saw and a digest
 * of it, and the digests must agree, so whatever the MPI library itself does
 * is the reference and any difference is flexmpi's.
 * Runs on 2 processes. */
#include <errno.h>
#include <fenv.h>
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifdef FLEXMPI_LINKED
#include "flexmpi.h"
#define WORLD XMPI_COMM_WORLD
#else
#define WORLD MPI_COMM_WORLD
#endif

enum { kSignals = 32, kErrnoSentinel = 4242 };

static char observed[4096];

static void note(const char* text) {
  strncat(observed, text, sizeof observed - strlen(observed) - 1);
}

/* Whether the signals blocked during the handler differ (only signals 1-31:
 * the rest of sigset_t is not reported by every kernel the same way). */
static int masks_differ(const sigset_t* a, const sigset_t* b) {
  for (int s = 1; s < kSignals; ++s) {
    if (sigismember(a, s) != sigismember(b, s)) return 1;
  }
  return 0;
}

/* The signals whose disposition (handler, flags or mask) differs. */
static void note_changed_signals(const struct sigaction before[], const struct sigaction after[]) {
  note("signals MPI_Init changed:");
  for (int s = 1; s < kSignals; ++s) {
    if (before[s].sa_handler != after[s].sa_handler || before[s].sa_flags != after[s].sa_flags ||
        masks_differ(&before[s].sa_mask, &after[s].sa_mask)) {
      char item[32];
      snprintf(item, sizeof item, " %d", s);
      note(item);
    }
  }
  note("\n");
}

/* Clears the flags, sets the sentinel errno and upward rounding, runs the
 * call; notes the flags, errno and rounding mode the caller then sees. */
#define OBSERVE(name, call)                                                                        \
  do {                                                                                             \
    feclearexcept(FE_ALL_EXCEPT);                                                                  \
    fesetround(FE_UPWARD);                                                                         \
    errno = kErrnoSentinel;                                                                        \
    const int code = (call);                                                                       \
    const int error = errno;                                                                       \
    const int flags = fetestexcept(FE_ALL_EXCEPT);                                                 \
    const int rounding = fegetround();                                                             \
    fesetround(FE_TONEAREST);                                                                      \
    char line[160];                                                                                \
    snprintf(line, sizeof line, "%s: code %d, FP flags 0x%x, rounding %s, errno %s\n", name, code, \
             flags, rounding == FE_UPWARD ? "kept" : "changed",                                    \
             error == kErrnoSentinel ? "kept" : "changed");                                        \
    note(line);                                                                                    \
  } while (0)

int main(int argc, char** argv) {
  struct sigaction before[kSignals], after[kSignals];
  for (int s = 1; s < kSignals; ++s) sigaction(s, NULL, &before[s]);
  MPI_Init(&argc, &argv);
  for (int s = 1; s < kSignals; ++s) sigaction(s, NULL, &after[s]);
  note_changed_signals(before, after);

  int rank = 0;
  MPI_Comm_rank(WORLD, &rank);
  const int peer = 1 - rank;
  int value = rank + 1, sum = 0, received = 0;
  MPI_Request request = MPI_REQUEST_NULL;
  /* Each call twice: the first call on a communicator fills flexmpi's caches. */
  for (int round = 0; round < 2; ++round) {
    OBSERVE("MPI_Barrier", MPI_Barrier(WORLD));
    OBSERVE("MPI_Allreduce", MPI_Allreduce(&value, &sum, 1, MPI_INT, MPI_SUM, WORLD));
    if (rank == 0) {
      OBSERVE("MPI_Send", MPI_Send(&value, 1, MPI_INT, peer, 0, WORLD));
      OBSERVE("MPI_Recv", MPI_Recv(&received, 1, MPI_INT, peer, 0, WORLD, MPI_STATUS_IGNORE));
    } else {
      OBSERVE("MPI_Recv", MPI_Recv(&received, 1, MPI_INT, peer, 0, WORLD, MPI_STATUS_IGNORE));
      OBSERVE("MPI_Send", MPI_Send(&value, 1, MPI_INT, peer, 0, WORLD));
    }
    OBSERVE("MPI_Irecv", MPI_Irecv(&received, 1, MPI_INT, peer, 1, WORLD, &request));
    MPI_Send(&value, 1, MPI_INT, peer, 1, WORLD);
    OBSERVE("MPI_Wait", MPI_Wait(&request, MPI_STATUS_IGNORE));
    OBSERVE("MPI_Test null", MPI_Test(&request, &received, MPI_STATUS_IGNORE));
  }

  /* FNV-1a of everything observed, for compare_runs.cmake. */
  uint64_t digest = 14695981039346656037ULL;
  for (const char* c = observed; *c != '\0'; ++c) {
    digest = (digest ^ (unsigned char)*c) * 1099511628211ULL;
  }
  printf("rank %d observed:\n%sdigest rank %d: %016llx\n", rank, observed, rank,
         (unsigned long long)digest);
  MPI_Finalize();
  return 0;
}
