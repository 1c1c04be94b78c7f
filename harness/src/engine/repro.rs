//! An exchange written back as text a user can paste or read: POSIX shell quoting that keeps
//! the harness's own secret placeholders expandable, the equivalent `curl` line, and JSON in
//! one short line. Reports, reproductions and counterexamples all write through it.

use std::sync::LazyLock;

use regex::Regex;

use crate::transport::Exchange;

/// Compact one-line JSON, truncated.
pub fn compact(v: &serde_json::Value, n: usize) -> String {
    let s = v.to_string();
    if s.chars().count() <= n {
        s
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}

/// Single-quotes a string for a POSIX shell.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// `s` single-quoted for a POSIX shell, except the secret placeholders the harness itself
/// writes (`${CONFORM_…}`, `${SSP_…}`), spliced in double quotes so the shell expands them.
/// Everything else stays literal, so a value a hostile server chose (a session id holding
/// `$(…)`) can never run when a user pastes the line.
pub fn quote_with_secrets(s: &str) -> String {
    static SECRET: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r"\$\{(?:CONFORM|SSP)_[A-Z0-9_]+\}").ok());
    let quoted = shell_quote(s);
    let Some(re) = SECRET.as_ref() else {
        return quoted;
    };
    let spliced = re.replace_all(&quoted, "'\"$0\"'").into_owned();
    // A placeholder at either end leaves an empty `''` there: drop it.
    let spliced = match spliced.strip_suffix("''") {
        Some(head) if head.ends_with("}\"") => head,
        _ => &spliced,
    };
    match spliced.strip_prefix("''") {
        Some(tail) if tail.starts_with("\"${") => tail.to_string(),
        _ => spliced.to_string(),
    }
}

/// Method of an exchange over a child process's stdio (its `url` is the command line).
pub const STDIO_METHOD: &str = "STDIO";

/// The curl command equivalent to one recorded exchange (for a stdio exchange, the line
/// piped into the command).
pub fn curl_command(ex: &Exchange) -> String {
    if ex.method == STDIO_METHOD {
        let line = ex.request_body.as_deref().unwrap_or_default();
        return format!("printf '%s\\n' {} | {}", shell_quote(line), ex.url);
    }
    let mut cmd = format!("curl -sS -i -X {} {}", ex.method, shell_quote(&ex.url));
    for (k, v) in &ex.request_headers {
        cmd.push_str(&format!(" -H {}", quote_with_secrets(&format!("{k}: {v}"))));
    }
    if let Some(b) = &ex.request_body {
        if let Some(b64) = b.strip_prefix("base64:") {
            cmd = format!(
                "printf %s {} | base64 -d | {cmd} --data-binary @-",
                shell_quote(b64)
            );
        } else {
            cmd.push_str(&format!(" --data-raw {}", shell_quote(b)));
        }
    }
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_expand_and_everything_else_stays_literal() {
        assert_eq!(
            quote_with_secrets("authorization: Bearer ${CONFORM_TOKEN_A}"),
            r#"'authorization: Bearer '"${CONFORM_TOKEN_A}""#
        );
        // A value a hostile server chose cannot run: only the placeholder leaves the quotes.
        assert_eq!(
            quote_with_secrets("mcp-session-id: ${CONFORM_X}$(touch pwned)`id`"),
            r#"'mcp-session-id: '"${CONFORM_X}"'$(touch pwned)`id`'"#
        );
        assert_eq!(quote_with_secrets("x: ${HOME}"), "'x: ${HOME}'");
        assert_eq!(quote_with_secrets("x: it's"), r"'x: it'\''s'");
    }
}
