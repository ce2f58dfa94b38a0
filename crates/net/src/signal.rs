//! Ctrl-C and SIGTERM as a stop flag: the first signal asks the running
//! sender or receiver to finish (a sender runs the Close handshake); a
//! second one exits at once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The exit status after a second signal (128 + SIGINT).
const FORCED_EXIT: i32 = 130;

/// Installs the handler (once per process) and returns the flag it sets.
pub fn stop_on_signal() -> Result<Arc<AtomicBool>, String> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    ctrlc::set_handler(move || {
        if flag.swap(true, Ordering::SeqCst) {
            std::process::exit(FORCED_EXIT);
        }
    })
    .map_err(|e| format!("cannot install the signal handler: {e}"))?;
    Ok(stop)
}
