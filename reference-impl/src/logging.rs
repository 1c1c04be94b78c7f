//! Log output of the server binary: every field value, the message included, is cut to
//! [`MAX_FIELD_CHARS`] characters with a marker.
//!
//! Many logged values come from clients — MCP methods and tool names, paths, `Host` and
//! `Origin` headers, refusal messages quoting the request — in our code and in rmcp's and
//! hyper's. Cutting at the formatter covers every log site at once, including ones in
//! dependencies, so a client cannot turn a 1 MB method name into 1 MB of stderr.

use std::fmt::{self, Write as _};

use tracing_subscriber::field::MakeExt;
use tracing_subscriber::fmt::FormatFields;
use tracing_subscriber::fmt::format::Writer;

/// Longest field value written, in characters (after escaping).
pub const MAX_FIELD_CHARS: usize = 200;

/// The field formatter of the server's subscriber (see the module documentation).
pub fn fields() -> impl for<'w> FormatFields<'w> + Send + Sync + 'static {
    tracing_subscriber::fmt::format::debug_fn(|w: &mut Writer<'_>, field, value| {
        let mut cut = Truncated::new(MAX_FIELD_CHARS);
        // `Truncated` reports an error once full, which ends the value's formatting early:
        // that is the point, not a failure.
        let _ = write!(cut, "{value:?}");
        if field.name() == "message" {
            write!(w, "{}", cut.finish())
        } else {
            write!(w, "{}={}", field.name(), cut.finish())
        }
    })
    .delimited(" ")
}

/// Installs the server's global subscriber: stderr, `RUST_LOG` filter (default `filter`),
/// truncated fields.
pub fn init(default_filter: &str) {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_filter)),
        )
        .fmt_fields(fields())
        .init();
}

/// A `fmt::Write` that keeps the first `max` characters and counts the rest.
struct Truncated {
    kept: String,
    max: usize,
    chars: usize,
    dropped: usize,
}

impl Truncated {
    fn new(max: usize) -> Self {
        Self {
            kept: String::new(),
            max,
            chars: 0,
            dropped: 0,
        }
    }

    fn finish(self) -> String {
        if self.dropped == 0 {
            self.kept
        } else {
            format!("{}…[truncated, {}+ more bytes]", self.kept, self.dropped)
        }
    }
}

impl fmt::Write for Truncated {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for (i, c) in s.char_indices() {
            if self.chars == self.max {
                self.dropped += s.len() - i;
                return Err(fmt::Error);
            }
            self.kept.push(c);
            self.chars += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    #[derive(Clone, Default)]
    struct Capture(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Capture {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().map_or(Ok(0), |mut v| {
                v.extend_from_slice(buf);
                Ok(buf.len())
            })
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn client_values_are_cut_in_fields_and_message() {
        let capture = Capture::default();
        let sink = capture.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || sink.clone())
            .with_ansi(false)
            .fmt_fields(fields())
            .finish();
        let huge = "m".repeat(1_000_000);
        tracing::subscriber::with_default(subscriber, || {
            tracing::warn!(method = %huge, tool = huge.as_str(), "rejected {huge}");
            tracing::warn!(short = "ok", "plain");
        });
        let out = String::from_utf8(capture.0.lock().map(|v| v.clone()).unwrap_or_default())
            .unwrap_or_default();
        assert!(out.len() < 2_000, "{} bytes logged", out.len());
        assert_eq!(out.matches("…[truncated").count(), 3, "{out}");
        assert!(out.contains("short=\"ok\""), "{out}");
        assert!(out.contains("plain"), "{out}");
    }

    #[test]
    fn short_values_are_untouched_and_cuts_respect_char_boundaries() {
        let mut t = Truncated::new(3);
        let _ = write!(t, "ééééé");
        assert_eq!(t.finish(), "ééé…[truncated, 4+ more bytes]");
        let mut t = Truncated::new(10);
        let _ = write!(t, "short");
        assert_eq!(t.finish(), "short");
    }
}
