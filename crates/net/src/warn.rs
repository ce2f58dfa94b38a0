//! Failures that do not stop a stream: statistics that cannot be written
//! are a warning on stderr, shown once, and counted in the run's report
//! (issue 12: "a failure to write statistics is a warning, never an abort
//! of the stream").

use std::io;

/// Counts failed statistics writes and warns about the first.
#[derive(Debug, Default)]
pub(crate) struct StatsFailures {
    count: u64,
}

impl StatsFailures {
    /// Takes the result of one statistics write by `role` (`send`, `recv`,
    /// `relay`).
    pub(crate) fn check(&mut self, role: &str, result: io::Result<()>) {
        if let Err(error) = result {
            if self.count == 0 {
                eprintln!(
                    "warning: {role}: cannot write statistics: {error} \
                     (the stream goes on; later failures are counted, not shown)"
                );
            }
            self.count += 1;
        }
    }

    /// Writes that failed.
    pub(crate) fn count(&self) -> u64 {
        self.count
    }
}
