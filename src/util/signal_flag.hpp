// The one thing a signal handler may do: set a flag, read and cleared later
// at a safe point. For the scheduler's warning before a job ends (SIGUSR1,
// SIGTERM), which makes the checkpointer (src/checkpoint) write a checkpoint
// at the next iteration end. A handler can reach only static storage, so the
// flag is the process's, not an object's.
#pragma once

namespace flexmpi {

/// Catches `signal` (SIGUSR1, SIGTERM): its arrival sets the flag instead of
/// ending the process. Idempotent; the first call keeps the disposition it
/// replaced, for release_signal.
void catch_signal(int signal);
/// Puts back the disposition catch_signal replaced.
void release_signal(int signal);
/// Whether a caught signal arrived since the last call; clears the flag.
bool take_signal() noexcept;
/// Whether one arrived, without clearing it.
bool signal_pending() noexcept;

}  // namespace flexmpi
