//! The one redaction of secrets in printed text: every place that prints a remote URL, a
//! store's warning, an error of the store's client or a variable's value passes its text through
//! [`redact`] (the URL types' `Display` and `Debug` do it themselves).
//!
//! A secret can sit in three places, and each is hidden by its own rule:
//! * **userinfo**: `scheme://user:password@host` shows `user:***@host` (the user stays: it says
//!   which account, and is no secret);
//! * **query**: every query parameter but the grammar's own `endpoint=` and `region=` shows
//!   `name=***` (a presigned URL's `X-Amz-Signature`, a `token=`, a `secret_access_key=` that
//!   should never have been there); a bare `name=value` outside a URL whose name says it is a
//!   secret (`…SECRET…`, `…TOKEN…`, `…PASSWORD…`, `…CREDENTIAL…`, `…SIGNATURE…`) too;
//! * **environment**: the values of the variables that hold credentials ([`SECRET_VARIABLES`])
//!   and the passwords and query values written in the remote URL variables
//!   ([`URL_VARIABLES`]) are replaced wherever they appear, so a client's error that repeats one
//!   in its own words (or a URL too malformed to be recognised as one) shows `***` instead.
//!
//! Over-redaction is the accepted failure: a path with `:` before an `@` loses its middle, a
//! query parameter of another program loses its value. A secret shown is not accepted.

use std::ffi::OsString;

/// What a hidden secret shows.
pub const REDACTED: &str = "***";

/// The variables that hold credentials of the stores (the AWS chain's), whose values are never
/// printed.
pub const SECRET_VARIABLES: [&str; 3] = ["AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN"];

/// The variables that hold a remote URL, whose password and query values are never printed.
pub const URL_VARIABLES: [&str; 2] = ["LAUNCH_CACHE_REMOTE", "LAUNCH_TUNE_CACHE_REMOTE"];

/// The query parameters a printed URL shows: the grammar's own, which hold no secret.
const SHOWN_QUERY: [&str; 2] = ["endpoint", "region"];

/// Words that make a bare `name=value` a secret.
const SECRET_WORDS: [&str; 7] = ["secret", "token", "password", "passwd", "credential", "signature", "auth"];

/// A secret shorter than this is hidden where it sits (userinfo, query), not wherever it appears:
/// replacing every `a` of a message would leave nothing readable.
const MIN_SCRUBBED: usize = 4;

/// `text` with every secret it holds replaced by [`REDACTED`]: the passwords of URLs, their query
/// values, bare `secret=…` pairs, and the values of the credential variables of this process's
/// environment ([`SECRET_VARIABLES`], [`URL_VARIABLES`]).
pub fn redact(text: &str) -> String {
    redact_with(text, &environment_secrets())
}

/// [`redact`], hiding `secrets` (and not this process's environment's) wherever they appear.
pub(crate) fn redact_with(text: &str, secrets: &[String]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut token = String::new();
    for c in text.chars() {
        if ends_token(c) {
            out.push_str(&redact_token(&token));
            token.clear();
            out.push(c);
        } else {
            token.push(c);
        }
    }
    out.push_str(&redact_token(&token));
    scrub(out, secrets)
}

/// The secrets a URL as written holds, read leniently (a URL too malformed to parse still has
/// its password found): the userinfo's password and every query value but the shown ones.
pub(crate) fn secrets_in(url: &str) -> Vec<String> {
    let mut found = Vec::new();
    for segment in url.split("://").skip(1) {
        if let Some((userinfo, _)) = segment.rsplit_once('@') {
            if let Some((_, password)) = userinfo.split_once(':') {
                found.push(password.to_string());
            }
        }
        if let Some((_, query)) = segment.split_once('?') {
            for pair in query.split('&') {
                match pair.split_once('=') {
                    Some((name, value)) if !SHOWN_QUERY.contains(&name.to_ascii_lowercase().as_str()) => {
                        found.push(value.to_string());
                    }
                    _ => {}
                }
            }
        }
    }
    found.retain(|s| s.chars().count() >= MIN_SCRUBBED);
    found
}

/// The secrets of this process's environment.
fn environment_secrets() -> Vec<String> {
    let mut found: Vec<String> = SECRET_VARIABLES
        .iter()
        .filter_map(|n| var(n))
        .map(|v| v.to_string_lossy().into_owned())
        .filter(|v| v.chars().count() >= MIN_SCRUBBED)
        .collect();
    for name in URL_VARIABLES {
        if let Some(v) = var(name) {
            found.extend(secrets_in(&v.to_string_lossy()));
        }
    }
    found
}

/// The one read of the environment in `launch-remote`.
fn var(name: &str) -> Option<OsString> {
    // The workspace routes reads through launch-build's `Env`, which a runtime crate cannot use.
    #[allow(clippy::disallowed_methods)]
    std::env::var_os(name).filter(|v| !v.is_empty())
}

/// Where a URL (or a `name=value` pair) ends in running text.
fn ends_token(c: char) -> bool {
    c.is_whitespace() || matches!(c, '`' | '"' | '\'' | '<' | '>' | '\\' | '{' | '}' | '|')
}

/// One whitespace-free token: its URLs' userinfo and query values hidden, or, outside a URL, a
/// secret-named pair's value.
fn redact_token(token: &str) -> String {
    let Some(at) = token.find("://") else { return redact_bare_pair(token) };
    let (scheme, rest) = token.split_at(at);
    // Each URL's userinfo (a nested one too: an endpoint in a query), then the outer query.
    let rest: Vec<String> = rest.split("://").skip(1).map(redact_userinfo).collect();
    redact_query(&format!("{}://{}", redact_bare_pair(scheme), rest.join("://")))
}

/// `user:password@rest` → `user:***@rest` (up to the segment's last `@`).
fn redact_userinfo(segment: &str) -> String {
    match segment.rsplit_once('@') {
        Some((userinfo, rest)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{user}:{REDACTED}@{rest}"),
            None => segment.to_string(),
        },
        None => segment.to_string(),
    }
}

/// `s3://b/p?a=1&endpoint=http://h?x=2` → `s3://b/p?a=***&endpoint=http://h?x=***`: the query of
/// the URL `url` starts, each shown parameter's value redacted as a URL of its own.
fn redact_query(url: &str) -> String {
    let Some(question) = url.find('?') else { return url.to_string() };
    let (head, query) = (&url[..question], &url[question + 1..]);
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, value)) if SHOWN_QUERY.contains(&name.to_ascii_lowercase().as_str()) => {
                format!("{name}={}", redact_query(value))
            }
            Some((name, _)) => format!("{name}={REDACTED}"),
            None => pair.to_string(),
        })
        .collect();
    format!("{head}?{}", pairs.join("&"))
}

/// `AWS_SECRET_ACCESS_KEY=x` → `AWS_SECRET_ACCESS_KEY=***`; other text as it is.
fn redact_bare_pair(token: &str) -> String {
    match token.split_once('=') {
        Some((name, value)) if !value.is_empty() && is_secret_name(name) => format!("{name}={REDACTED}"),
        _ => token.to_string(),
    }
}

fn is_secret_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    SECRET_WORDS.iter().any(|w| lower.contains(w))
}

/// `text` with every one of `secrets` replaced, longest first (one may hold another).
fn scrub(mut text: String, secrets: &[String]) -> String {
    let mut sorted: Vec<&String> = secrets.iter().filter(|s| s.chars().count() >= MIN_SCRUBBED).collect();
    sorted.sort_by_key(|s| std::cmp::Reverse(s.len()));
    for secret in sorted {
        if text.contains(secret.as_str()) {
            text = text.replace(secret.as_str(), REDACTED);
        }
    }
    text
}
